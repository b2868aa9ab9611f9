"""The hand-written Harbor reader (openenv_hub.importers.harbor_tasks) held to the ``harbor``
package's own reading of the same task folders, field by field: the test task set and variants
of it that use each field it reads (older field names, network modes, variables, a prebuilt
image, a package name). harbor needs Python >= 3.12 and pins the main venv cannot take: its
reader runs in a venv of its own (tests/importers/harbor_requirements.txt, made once, about
3 minutes) and prints what it read as JSON (tests/importers/harbor_read.py).

Where this toolkit differs on purpose, the test says so: a task gets no network unless it
declares one (harbor's default is the public network), an allowlist runs with none, and a task
that gives no memory gets 2048 MB (harbor leaves it unbounded)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from peer_venv import ensure_venv_of, find_python

from openenv_hub.importers import HarborTask, read_task

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

HERE = Path(__file__).parent
TASKS = HERE / "harbor_tasks"
SET, UNSET = "OPENENV_HARBOR_TEST_SET", "OPENENV_HARBOR_TEST_SURELY_UNSET"

#: task.toml variants of the write-greeting task: each uses fields the fixtures do not.
VARIANTS = {
    "legacy-fields": '[environment]\nmemory = "1G"\nallow_internet = true\n',
    "phase-networks": (
        '[environment]\nnetwork_mode = "no-network"\n[verifier]\nnetwork_mode = "public"\n'
    ),
    "agent-network": '[agent]\nnetwork_mode = "public"\ntimeout_sec = 30\n',
    "allowlist": '[environment]\nnetwork_mode = "allowlist"\nallowed_hosts = ["pypi.org"]\n',
    "variables": (
        f'[environment]\nenv = {{ A = "literal", B = "${{{SET}}}", C = "${{{UNSET}:-fallback}}" }}\n'
        '[verifier]\ntimeout_sec = 45\nenv = { D = "x" }\n'
    ),
    "sized": (
        'schema_version = "1.4"\n[environment]\ncpus = 2\nmemory_mb = 768\nworkdir = "/work"\n'
        "build_timeout_sec = 100\n"
    ),
    "packaged": (
        'version = "1.0"\n[task]\nname = "org/greet"\n[environment]\ndocker_image = "busybox:1"\n'
    ),
}


@pytest.fixture(scope="module")
def harbor_python() -> Path:
    interpreter = find_python("3.12")
    if interpreter is None:
        pytest.skip("harbor needs Python 3.12 (on PATH, or pyenv's): none is installed")
    return ensure_venv_of(HERE / "harbor_requirements.txt", interpreter=interpreter)


@pytest.fixture(scope="module")
def folders(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """The test task set, and the variants of write-greeting."""
    root = tmp_path_factory.mktemp("harbor-variants")
    made = sorted(TASKS.iterdir())
    for name, toml in VARIANTS.items():
        folder = root / name
        shutil.copytree(TASKS / "write-greeting", folder)
        (folder / "task.toml").write_text(toml)
        if "docker_image" in toml:
            shutil.rmtree(folder / "environment")
        made.append(folder)
    return made


def harbor_reading(python: Path, folders: list[Path]) -> dict[str, Any]:
    """What harbor read of each folder (run with this process's variables)."""
    done = subprocess.run(
        [str(python), str(HERE / "harbor_read.py"), *map(str, folders)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    read: dict[str, Any] = json.loads(done.stdout)
    return read


def expected_network(theirs: dict[str, Any], phase: str) -> bool:
    """Ours: the network only where the task declares the public one for the phase."""
    declared = theirs[f"{phase}_network_declared"]
    return declared and theirs[f"{phase}_network_mode"] == theirs["public"]


def test_each_field_is_read_as_harbor_reads_it(
    harbor_python: Path, folders: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(SET, "value-from-host")
    monkeypatch.delenv(UNSET, raising=False)
    read = harbor_reading(harbor_python, folders)
    assert sorted(read) == sorted(map(str, folders))
    for folder in folders:
        theirs = read[str(folder)]
        assert "error" not in theirs, (folder.name, theirs)
        ours = read_task(folder)
        assert _fields(ours) == _fields_of_harbor(theirs), folder.name
        assert ours.agent_network == expected_network(theirs, "agent"), folder.name
        assert ours.verifier_network == expected_network(theirs, "verifier"), folder.name


def test_where_this_reader_differs_on_purpose(
    harbor_python: Path, folders: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(SET, "value-from-host")
    read = harbor_reading(harbor_python, folders)
    by_name = {Path(key).name: value for key, value in read.items()}
    undeclared = by_name["count-words"]  # says nothing of the network
    assert undeclared["agent_network_mode"] == "public"  # harbor's default
    assert read_task(TASKS / "count-words").agent_network is False  # none here
    allowlist = by_name["allowlist"]
    assert allowlist["agent_network_mode"] == "allowlist"
    assert read_task(next(f for f in folders if f.name == "allowlist")).agent_network is False
    assert by_name["agent-network"]["memory_mb"] is None  # harbor: unbounded
    assert read_task(next(f for f in folders if f.name == "agent-network")).memory_mb == 2048


def test_both_refuse_a_task_without_its_test_or_with_broken_toml(
    harbor_python: Path, tmp_path: Path
) -> None:
    from openenv_hub.errors import ConfigurationError

    no_test, broken = tmp_path / "no-test", tmp_path / "broken"
    for folder in (no_test, broken):
        shutil.copytree(TASKS / "write-greeting", folder)
    (no_test / "tests" / "test.sh").unlink()
    (broken / "task.toml").write_text("[agent\n")
    read = harbor_reading(harbor_python, [no_test, broken])
    for folder in (no_test, broken):
        assert "error" in read[str(folder)]
        with pytest.raises(ConfigurationError):
            read_task(folder)


def _fields(task: HarborTask) -> dict[str, Any]:
    return {
        "name": task.name,
        "package": task.package,
        "instruction": task.instruction,
        "agent_timeout_s": task.agent_timeout_s,
        "verifier_timeout_s": task.verifier_timeout_s,
        "build_timeout_s": task.build_timeout_s,
        "memory_mb": task.memory_mb,
        "cpus": task.cpus,
        "docker_image": task.docker_image,
        "workdir": task.workdir,
        "env": task.env,
        "verifier_env": task.verifier_env,
        "has_oracle": task.has_oracle,
        "test_script": str(task.test_script),
    }


def _fields_of_harbor(theirs: dict[str, Any]) -> dict[str, Any]:
    """What harbor read, with this reader's one default where harbor has none (memory)."""
    return {
        **{key: theirs[key] for key in _KEYS},
        "memory_mb": theirs["memory_mb"] if theirs["memory_mb"] is not None else 2048,
        "cpus": float(theirs["cpus"]) if theirs["cpus"] is not None else None,
    }


_KEYS = (
    "name",
    "package",
    "instruction",
    "agent_timeout_s",
    "verifier_timeout_s",
    "build_timeout_s",
    "docker_image",
    "workdir",
    "env",
    "verifier_env",
    "has_oracle",
    "test_script",
)
