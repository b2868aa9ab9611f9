"""Every reference environment's Space repo builds the way ``openenv init``'s does: the template's
Dockerfile, apart from blocks marked ``# >>> NAME only`` ... ``# <<< NAME only``, the template's
server script, and a pin step that points a pushed ``pyproject.toml`` at the bundled wheel.

The images themselves are built by tests/envs/test_validate_envs.py (atari, chess, finance) and
tests/templates/test_docker.py (echo, and a fresh ``openenv init`` environment)."""

from __future__ import annotations

import ast
import random
import re
import subprocess
from pathlib import Path

import pytest
import tomllib
from packaging.requirements import Requirement

from openenv_hub.hub import SpaceUrls, stage_files
from openenv_hub.hub._wheel_pin import pin_requirements
from openenv_hub.packaging import bundle_wheels
from openenv_hub_cli.init import render_env

REPO = Path(__file__).resolve().parents[2]
ENVS = sorted(p.name for p in (REPO / "envs").iterdir() if (p / "openenv.yaml").is_file())
EXTRA = re.compile(
    r"^# >>> (?P<name>\w+) only: .*?^# <<< (?P=name) only\n", re.MULTILINE | re.DOTALL
)
# finance_env's script starts before its app is imported, so a missing extra gets its install
# line rather than a traceback (envs/finance_env/tests/test_default_data.py).
OWN_SCRIPT = {"finance_env": "finance_env.server.__main__:main"}


def test_the_reference_environments_are_all_here() -> None:
    assert ENVS == ["atari_env", "chess_env", "coding_env", "echo_env", "finance_env"]


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """``openenv init NAME`` of each reference environment's name, and of ``my_env``."""
    out = tmp_path_factory.mktemp("rendered")
    return {name: render_env(name, out, rng=random.Random(0)) for name in [*ENVS, "my_env"]}


def env_dir(name: str, rendered: dict[str, Path]) -> Path:
    return rendered[name] if name == "my_env" else REPO / "envs" / name


@pytest.mark.parametrize("env", ENVS)
def test_the_dockerfile_is_the_templates_plus_its_marked_blocks(
    env: str, rendered: dict[str, Path]
) -> None:
    own = (REPO / "envs" / env / "Dockerfile").read_text(encoding="utf-8")
    names = [block["name"] for block in EXTRA.finditer(own)]
    assert set(names) <= {env}, f"blocks marked for another environment: {names}"
    assert EXTRA.sub("", own) == (rendered[env] / "Dockerfile").read_text(encoding="utf-8")


@pytest.mark.parametrize("env", ENVS)
def test_the_server_script_is_the_templates(env: str, rendered: dict[str, Path]) -> None:
    def scripts(folder: Path) -> dict[str, str]:
        with (folder / "pyproject.toml").open("rb") as file:
            return dict(tomllib.load(file)["project"]["scripts"])

    expected = scripts(rendered[env])
    script = f"{env.replace('_', '-')}-server"
    assert script in expected
    expected[script] = OWN_SCRIPT.get(env, expected[script])
    assert scripts(REPO / "envs" / env) == expected
    assert main_body(REPO / "envs" / env, expected[script]) == main_body(
        rendered[env], f"{env}.server.app:main"
    )


def main_body(folder: Path, target: str) -> str:
    """The code of the script's ``main`` (without its docstring)."""
    module, _, function = target.partition(":")
    tree = ast.parse((folder / (module.replace(".", "/") + ".py")).read_text(encoding="utf-8"))
    (main,) = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == function]
    body = [
        n for n in main.body if not (isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant))
    ]
    return "\n".join(ast.unparse(n) for n in body)


def pin_step(dockerfile: str) -> str:
    """The shell commands of the install step that point pyproject.toml at the bundled wheel."""
    joined = dockerfile.replace("\\\n", "")
    runs = [line for line in joined.splitlines() if line.startswith("RUN ")]
    (install,) = [line for line in runs if "pip install" in line and ".openenv/wheels" in line]
    found = re.search(r"wheel=\$\(.*?\bfi;", install)
    assert found, f"the install step does not pin the bundled wheel:\n{install}"
    return found.group(0)


@pytest.mark.parametrize("env", [*ENVS, "my_env"])
def test_the_pin_step_points_a_pushed_pyproject_at_the_bundled_wheel(
    env: str, rendered: dict[str, Path], tmp_path: Path
) -> None:
    """What push uploads from a development build (the wheel, a pyproject.toml naming it by its
    Hub URL) installs from the build context: the Dockerfile's step names the wheel's file."""
    source = env_dir(env, rendered)
    space = tmp_path / "space"
    stage_files(source, space)
    wheel = tmp_path / "openenv_hub-0.1.0-py3-none-any.whl"
    wheel.write_bytes(b"")  # only its name is read
    (copy,) = bundle_wheels(space, wheel=wheel)
    urls = SpaceUrls("http://127.0.0.1:9", f"ns/{env}")
    url = urls.file_url("0" * 40, f".openenv/wheels/{wheel.name}")
    pushed, changes = pin_requirements((space / "pyproject.toml").read_text(encoding="utf-8"), url)
    assert changes, "the push would pin nothing"
    (space / "pyproject.toml").write_text(pushed, encoding="utf-8")

    step = pin_step((space / "Dockerfile").read_text(encoding="utf-8"))
    subprocess.run(["sh", "-c", step], cwd=space, check=True, timeout=30)

    with (space / "pyproject.toml").open("rb") as file:
        project = tomllib.load(file)["project"]
    extras = project["optional-dependencies"].values()
    lines = [*project["dependencies"], *(line for group in extras for line in group)]
    ours = [Requirement(line) for line in lines if Requirement(line).name == "openenv-hub"]
    assert len(ours) == len(changes)
    assert {r.url for r in ours} == {copy.resolve().as_uri()}
    assert "ui" in {extra for r in ours for extra in r.extras}
