"""``openenv export harbor``: a Harbor import's tasks come back file for file; another
environment's taskset becomes Harbor task folders that the importer and the ``harbor`` package
read back, and whose episode commands, test and oracle work as the task's container runs them
(here on this machine's Python: the same commands, with the folder's path for the image's)."""

from __future__ import annotations

import filecmp
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from cli_runner import CliResult
from eval_support import sums_env
from peer_venv import ensure_venv_of, find_python

from openenv_hub.errors import ConfigurationError
from openenv_hub.importers import export_harbor, import_harbor, read_task, read_task_set

__all__ = ["sums_env"]  # a fixture

HERE = Path(__file__).parent
TASKS = HERE / "harbor_tasks"

GENERATOR = """
import random


def make_task(seed: int) -> dict:
    rng = random.Random(seed)
    a, b = rng.randint(10, 99), rng.randint(10, 99)
    return {"prompt": f"What is {a} + {b}? Answer with the number.", "answer": a + b}
"""

ORACLE = """
import re


def solve(messages, tools, seed):
    a, b = map(int, re.search(r"What is (\\d+) \\+ (\\d+)", messages[0]["content"]).groups())
    return {"tool_calls": [{"name": "sums_action", "arguments": {"message": str(a + b)}}]}
"""

ROWS = [{"key": f"sum {n}", "reset": {"task_id": n}, "prompt": "Add."} for n in range(3)]


@pytest.fixture
def sums_with_oracle(sums_env: Callable[[str, str], Path]) -> Path:
    folder = sums_env(
        GENERATOR,
        "taskset:\n  source: tasks\nquality:\n  oracle:\n    policy: sums_env.oracle:solve\n",
    )
    (folder / "sums_env" / "oracle.py").write_text(ORACLE)
    (folder / "tasks").mkdir()
    (folder / "tasks" / "test.jsonl").write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    return folder


def test_a_harbor_import_exports_its_tasks_unchanged(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    folder = import_harbor(TASKS, tmp_path / "harbor_tasks").path
    done = cli("export", "harbor", folder, "-o", tmp_path / "out")
    assert done.code == 0, done.text
    assert "Exported 3 Harbor tasks" in done.out and "unchanged" in done.out
    compared = filecmp.dircmp(TASKS, tmp_path / "out")
    assert _same_tree(compared), compared.report_full_closure()
    ours = [_comparable(task) for task in read_task_set(tmp_path / "out")]
    assert ours == [_comparable(task) for task in read_task_set(TASKS)]


def test_a_taskset_becomes_task_folders_the_importer_reads(
    sums_with_oracle: Path, tmp_path: Path
) -> None:
    made = export_harbor(sums_with_oracle, tmp_path / "out")
    assert made.tasks == ["sum-0", "sum-1", "sum-2"] and not made.round_trip and made.oracle
    assert any("agent's container" in note for note in made.notes)
    tasks = read_task_set(tmp_path / "out")
    assert [task.name for task in tasks] == made.tasks
    first = tasks[0]
    assert first.has_oracle and first.test_script.is_file()
    assert first.instruction.startswith("Add.\n") and "harbor_episode act" in first.instruction
    assert json.loads(first.env["OPENENV_TASK"]) == {
        "key": "sum 0", "split": "test", "prompt": "Add.", "reset": {"task_id": 0},
    }  # fmt: skip
    assert first.verifier_env == first.env and first.env["OPENENV_APP_DIR"] == "/home/user/app"
    assert not first.agent_network and not first.verifier_network
    environment = tmp_path / "out" / "sum-0" / "environment"
    assert (environment / "openenv.yaml").is_file() and (environment / "sums_env").is_dir()
    assert (environment / "Dockerfile").read_text().rstrip().endswith("/logs/verifier")
    assert not (environment / ".env").exists()  # published files only, as push selects them


@pytest.mark.slow
def test_an_exported_episode_is_played_graded_and_solved_by_its_commands(
    sums_with_oracle: Path, tmp_path: Path
) -> None:
    export_harbor(sums_with_oracle, tmp_path / "out", limit=1)
    task = read_task(tmp_path / "out" / "sum-0")
    episode = tmp_path / "episode.json"
    variables = {**task.env, "OPENENV_APP_DIR": str(task.path / "environment")}

    def run(*args: str) -> str:
        return _episode(variables | {"OPENENV_EPISODE": str(episode)}, *args)

    shown = run("show")
    assert shown.startswith("Add.") and "What is" in shown and '"sums_action"' in shown
    acted = run("act", "sums_action", '{"message": "-1"}')
    assert "[reward 0, done True]" in acted
    assert "no more actions" in run("act", "sums_action", '{"message": "1"}')
    assert run("grade").strip() == "0"

    episode.unlink()
    assert "oracle return 1" in run("oracle")
    assert run("grade").strip() == "1"  # the test replays the oracle's actions


@pytest.mark.slow
def test_the_harbor_package_reads_the_exported_folders(
    sums_with_oracle: Path, tmp_path: Path
) -> None:
    interpreter = find_python("3.12")
    if interpreter is None:
        pytest.skip("harbor needs Python 3.12 (on PATH, or pyenv's): none is installed")
    python = ensure_venv_of(HERE / "harbor_requirements.txt", interpreter=interpreter)
    export_harbor(sums_with_oracle, tmp_path / "sums")
    folder = import_harbor(TASKS, tmp_path / "harbor_tasks").path
    export_harbor(folder, tmp_path / "back")
    folders = sorted((tmp_path / "sums").iterdir()) + sorted((tmp_path / "back").iterdir())
    done = subprocess.run(
        [str(python), str(HERE / "harbor_read.py"), *map(str, folders)],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    read = json.loads(done.stdout)
    for path in folders:
        theirs, ours = read[str(path)], read_task(path)
        assert "error" not in theirs, theirs
        assert (theirs["instruction"], theirs["env"]) == (ours.instruction, ours.env)
        assert theirs["has_oracle"] is ours.has_oracle is True


@pytest.mark.slow
@pytest.mark.docker
@pytest.mark.timeout(900)
def test_an_exported_task_runs_in_its_container_through_the_harbor_importer(
    sums_with_oracle: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The exported folder, imported back and served: its image is the environment's own (built
    from its Dockerfile with the tail export adds), the oracle's solve.sh reaches reward 1 and
    doing nothing gets 0, in a container with no network."""
    from docker_support.engine import BASE_IMAGE, remove_images, require_docker

    from openenv_hub.importers import HarborEnvironment, oracle_commands
    from openenv_hub.types import CallToolAction

    monkeypatch.setenv("DOCKER_HOST", require_docker())
    monkeypatch.setenv("OPENENV_BASE_IMAGE", BASE_IMAGE)
    export_harbor(sums_with_oracle, tmp_path / "out", limit=1)
    made = import_harbor(tmp_path / "out", tmp_path / "back", build=True, trust_remote_code=True)
    try:
        environment = HarborEnvironment.configured(made.path / "tasks")()
        task = environment.tasks["sum-0"]
        assert not task.agent_network
        environment.reset(task_id="sum-0")
        for command in oracle_commands(task):
            ran = environment.step(CallToolAction(tool_name="bash", arguments={"command": command}))
            assert ran.error is None and "[exit code 0]" in str(ran.result), ran
        graded = environment.step(CallToolAction(tool_name="submit", arguments={}))
        assert (graded.reward, graded.done) == (1.0, True), graded.metadata
        environment.reset(task_id="sum-0")
        idle = environment.step(CallToolAction(tool_name="submit", arguments={}))
        assert idle.reward == 0.0 and idle.metadata["test_exit_code"] == 0
        environment.close()
    finally:
        remove_images(*made.images)


def test_an_environment_without_a_taskset_has_nothing_to_export(
    sums_env: Callable[[str, str], Path], tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    folder = sums_env(GENERATOR, "")
    with pytest.raises(ConfigurationError, match="declares no taskset"):
        export_harbor(folder, tmp_path / "out")
    done = cli("export", "harbor", folder, "-o", tmp_path / "out")
    assert done.code != 0 and "declares no taskset" in done.text and "Traceback" not in done.text
    assert not (tmp_path / "out").exists()


def _episode(variables: dict[str, str], *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "openenv_hub.importers.harbor_episode", *args],
        env={**os.environ, **variables},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def _same_tree(compared: filecmp.dircmp[str]) -> bool:
    if compared.left_only or compared.right_only or compared.diff_files or compared.funny_files:
        return False
    return all(_same_tree(sub) for sub in compared.subdirs.values())


def _comparable(task: Any) -> dict[str, Any]:
    fields = dict(vars(task))
    fields.pop("path")
    return fields


def test_a_link_out_of_a_task_folder_is_left_out_of_the_export(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("host secret 5e1f\n")
    source = tmp_path / "source"
    shutil.copytree(TASKS / "count-words", source / "count-words")
    tests = source / "count-words" / "tests"
    (tests / "helper.txt").symlink_to(secret)  # outside the task folder
    (tests / "same.sh").symlink_to("test.sh")  # inside: copied as the file
    folder = import_harbor(source, tmp_path / "imported").path
    done = cli("export", "harbor", folder, "-o", tmp_path / "out")
    assert done.code == 0, done.text
    exported = tmp_path / "out" / "count-words" / "tests"
    assert not (exported / "helper.txt").exists() and not (exported / "helper.txt").is_symlink()
    assert "Left out count-words/tests/helper.txt" in done.out.replace("\n", " ")
    assert (exported / "same.sh").read_text() == (tests / "test.sh").read_text()
    everything = [p.read_bytes() for p in (tmp_path / "out").rglob("*") if p.is_file()]
    assert not any(b"5e1f" in content for content in everything)


@pytest.mark.parametrize("name", ["instruction.md", "task.toml"])
def test_a_task_whose_own_file_is_a_link_is_refused(tmp_path: Path, name: str) -> None:
    task = tmp_path / "count-words"
    shutil.copytree(TASKS / "count-words", task)
    (tmp_path / name).write_bytes((task / name).read_bytes())
    (task / name).unlink()
    (task / name).symlink_to(tmp_path / name)
    with pytest.raises(ConfigurationError, match=f"{name} is a link"):
        read_task(task)
