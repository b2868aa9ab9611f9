"""Every code block of the coding environment's README runs as printed (its port aside: a free
one replaces 8000, as tests/test_readme.py does for the project's README).

The bash blocks run in a new virtual environment, in a copy of this folder, with pip kept off
the index: the dependencies come from the test suite's own environment through a ``.pth`` file.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import sysconfig
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from coding_env import CodeAction, CodingEnv
from coding_support import ENV_DIR, REPO, serve

sys.path.insert(0, str(REPO / "tests"))
from doc_blocks import blocks_of, doc_block

README = str((ENV_DIR / "README.md").relative_to(REPO))


def _block(name: str) -> str:
    return doc_block(README, name).code


def test_every_block_is_claimed_by_a_test_of_this_folder() -> None:
    for block in blocks_of(README):
        assert block.name and block.test, f"{README}:{block.line} is claimed by no test"
        test = ENV_DIR / block.test
        assert test.is_file() and repr(block.name) in test.read_text().replace('"', "'"), block


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, dict[str, str]]]:
    """A new virtual environment and a copy of this folder to run the bash blocks in."""
    root = tmp_path_factory.mktemp("coding-readme")
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    site = next((venv / "lib").glob("python*/site-packages"))
    # The suite's packages, and this checkout's openenv_hub (installed editable in the suite's
    # environment, through a finder that a .pth path entry does not run).
    (site / "suite.pth").write_text(f"{sysconfig.get_paths()['purelib']}\n{REPO}\n")
    # pip and setuptools come from the suite's environment too (the .pth file above).
    pip = venv / "bin" / "pip"
    pip.write_text(
        f"#!{venv / 'bin' / 'python'}\nimport sys\nfrom pip._internal.cli.main import main\n"
        "sys.exit(main())\n"
    )
    pip.chmod(0o755)
    folder = root / "coding_env"
    shutil.copytree(ENV_DIR, folder, ignore=shutil.ignore_patterns("tests", "*.egg-info", "build"))
    paths = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if "coding_env" not in p]
    env = {
        **os.environ,
        # The suite's own commands (openenv) after the new environment's, as an activated
        # environment would have them; CI runs the suite without activating it.
        "PATH": os.pathsep.join(
            [str(venv / "bin"), sysconfig.get_paths()["scripts"], os.environ["PATH"]]
        ),
        "VIRTUAL_ENV": str(venv),
        "PYTHONPATH": os.pathsep.join(paths),
        "PIP_NO_INDEX": "1",
        "PIP_NO_BUILD_ISOLATION": "0",  # pip's spelling of --no-build-isolation
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
    }
    yield folder, env


def _run(line: str, folder: Path, env: dict[str, str]) -> str:
    done = subprocess.run(
        ["bash", "-c", line], cwd=folder, env=env, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, f"{line}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done.stdout


def _free_port() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return str(probe.getsockname()[1])


@pytest.mark.slow
def test_install_serve_and_use_it(venv: tuple[Path, dict[str, str]]) -> None:
    folder, env = venv
    install, serve_line = _block("install and serve").strip().splitlines()
    assert install == "pip install ." and serve_line.startswith("coding-env-server")
    _run(install, folder, env)
    port = _free_port()
    log = tempfile.TemporaryFile()  # noqa: SIM115 - closed in the finally below
    server = subprocess.Popen(
        ["bash", "-c", "exec " + serve_line.replace("8000", port)],
        cwd=folder, env=env, stdout=log, stderr=log,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert server.poll() is None and time.monotonic() < deadline, "no server"
            time.sleep(0.1)
        script = folder / "use_it.py"
        script.write_text(_block("use it").replace("8000", port))
        out = _run(f"python {script}", folder.parent, env)
    finally:
        server.terminate()
        server.wait(30)
        log.close()
    lines = out.splitlines()
    assert lines[0] == "from typing import List" and lines[-2:] == ["0.0 False 7", "42"], out
    assert "site-packages" in _run(
        "python -c 'import coding_env; print(coding_env.__file__)'", folder.parent, env
    )


@pytest.mark.slow
def test_develop_it(venv: tuple[Path, dict[str, str]]) -> None:
    folder, env = venv
    install, validate = [
        line.split("#")[0].strip() for line in _block("develop").strip().splitlines()
    ]
    assert install == 'pip install -e ".[dev]"' and validate == "openenv validate"
    _run(install, folder, env)
    report = _run(validate, folder, env)
    assert "runtime" in report or "passed" in report.lower(), report


def test_a_reward_function() -> None:
    names: dict[str, object] = {}
    exec(_block("reward function"), names)
    task_solution = "def has_close_elements(numbers, threshold):\n    return False\n"
    with serve(names["app"]) as base_url, CodingEnv(base_url=base_url).sync() as env:
        env.reset(task_id="HumanEval/0")
        assert env.step(CodeAction(code=task_solution)).reward == 3 / 7
