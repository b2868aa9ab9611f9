"""Reading Harbor task folders: every field the environment uses, the network rule (none unless
the task asks), and the tasks refused with a reason."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from openenv_hub.errors import ConfigurationError
from openenv_hub.importers import read_task, read_task_set

TASKS = Path(__file__).parent / "harbor_tasks"


def _task(tmp_path: Path, toml: str, *, name: str = "t") -> Path:
    folder = tmp_path / name
    shutil.copytree(TASKS / "write-greeting", folder)
    (folder / "task.toml").write_text(toml)
    return folder


def test_a_task_set_is_read_with_each_field() -> None:
    tasks = {task.name: task for task in read_task_set(TASKS)}
    assert sorted(tasks) == ["count-words", "sum-numbers", "write-greeting"]
    greeting = tasks["write-greeting"]
    assert greeting.instruction.startswith("Create the file `/app/greeting.txt`")  # canary gone
    assert "canary" not in greeting.instruction
    assert (greeting.agent_timeout_s, greeting.verifier_timeout_s) == (120.0, 60.0)
    assert (greeting.build_timeout_s, greeting.memory_mb, greeting.workdir) == (300.0, 512, "/app")
    assert tasks["sum-numbers"].memory_mb == 512  # the older memory = "512M"
    assert tasks["count-words"].cpus == 1.0
    assert tasks["count-words"].workdir is None
    assert all(t.has_oracle and t.test_script.is_file() for t in tasks.values())


@pytest.mark.parametrize(
    ("toml", "agent", "verifier"),
    [
        ("", False, False),
        ('[environment]\nnetwork_mode = "public"\n', True, True),
        ("[environment]\nallow_internet = true\n", True, True),
        ('[environment]\nnetwork_mode = "no-network"\n', False, False),
        ('[environment]\nnetwork_mode = "allowlist"\nallowed_hosts = ["pypi.org"]\n', False, False),
        ('[verifier]\nnetwork_mode = "public"\n', False, True),
        ('[agent]\nnetwork_mode = "public"\n[environment]\nallow_internet = false\n', True, False),
    ],
)
def test_a_task_gets_a_network_only_when_it_asks(
    tmp_path: Path, toml: str, agent: bool, verifier: bool
) -> None:
    """Harbor's default is the public network; here a task has none unless it says so."""
    task = read_task(_task(tmp_path, 'schema_version = "1.4"\n' + toml))
    assert (task.agent_network, task.verifier_network) == (agent, verifier)


@pytest.mark.parametrize(
    ("toml", "remove", "says"),
    [
        ('[[steps]]\nname = "one"\n', None, "multi-step"),
        ('[environment]\nos = "windows"\n', None, "windows"),
        ("", "tests/test.sh", "lacks tests/test.sh"),
        ("", "environment/Dockerfile", "lacks environment/Dockerfile"),
        ("[agent]\ntimeout_sec = -5\n", None, "must be positive"),
        ('[environment]\nnetwork_mode = "sometimes"\n', None, "network_mode"),
        ("[agent\n", None, "not valid TOML"),
        ('[environment]\nenv = { KEY = "${OPENENV_TEST_SURELY_UNSET}" }\n', None, "needs the"),
    ],
)
def test_what_cannot_run_here_is_refused_with_a_reason(
    tmp_path: Path, toml: str, remove: str | None, says: str
) -> None:
    folder = _task(tmp_path, toml)
    if remove:
        (folder / remove).unlink()
    with pytest.raises(ConfigurationError, match=says):
        read_task(folder)


def test_a_compose_task_and_an_empty_folder_are_told_apart(tmp_path: Path) -> None:
    folder = _task(tmp_path, "")
    (folder / "environment" / "Dockerfile").unlink()
    (folder / "environment" / "docker-compose.yaml").write_text("services: {}\n")
    with pytest.raises(ConfigurationError, match="Docker Compose"):
        read_task(folder)
    with pytest.raises(ConfigurationError, match="No Harbor task"):
        read_task_set(tmp_path / "t" / "environment")


def test_variables_come_from_the_servers_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENENV_TEST_TOKENISH", "value-from-host")
    toml = (
        '[environment]\nenv = { A = "literal", B = "${OPENENV_TEST_TOKENISH}", '
        'C = "${OPENENV_TEST_SURELY_UNSET:-fallback}" }\n'
        '[verifier]\nenv = { D = "x" }\n'
    )
    task = read_task(_task(tmp_path, toml))
    assert task.env == {"A": "literal", "B": "value-from-host", "C": "fallback"}
    assert task.verifier_env == {"D": "x"}
