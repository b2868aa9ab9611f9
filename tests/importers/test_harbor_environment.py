"""A Harbor task set imported and played on a real Docker engine: each task's oracle reaches the
best reward through ``openenv eval``, doing nothing gets the least, pass@k comes out as expected,
and the episode's bounds hold (network, hidden files, the reward file, time, memory)."""

from __future__ import annotations

import json
import os
import shutil
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from docker_support.engine import BASE_IMAGE, remove_images, require_docker
from eval_support import expected_pass_at_k, read_rows

from openenv_hub.errors import DockerError
from openenv_hub.importers import HarborEnvironment, import_harbor, task_image
from openenv_hub.importers.harbor_grading import run_test
from openenv_hub.model.manifest import load_manifest
from openenv_hub.types import CallToolAction

pytestmark = [pytest.mark.docker, pytest.mark.slow]

TASKS = Path(__file__).parent / "harbor_tasks"

#: Plays the oracle when the rollout's seed is even, else submits at once (doing nothing).
HALF_POLICY = """
from harbor_tasks.oracle import solve


async def half(messages, tools, seed):
    if seed % 2 == 0:
        return await solve(messages, tools, seed)
    return {"tool_calls": [{"name": "submit", "arguments": {}}]}


def nothing(messages, tools, seed):
    return {"tool_calls": [{"name": "submit", "arguments": {}}]}
"""


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The test task set imported as ``harbor_tasks``, its images built."""
    os.environ["DOCKER_HOST"] = require_docker()
    saved = os.environ.get("OPENENV_BASE_IMAGE")
    os.environ["OPENENV_BASE_IMAGE"] = BASE_IMAGE
    folder = tmp_path_factory.mktemp("harbor") / "harbor_tasks"
    made = import_harbor(TASKS, folder, build=True, trust_remote_code=True)
    (folder / "policies.py").write_text(HALF_POLICY)
    yield folder
    remove_images(*made.images)
    if saved is None:
        os.environ.pop("OPENENV_BASE_IMAGE", None)
    else:
        os.environ["OPENENV_BASE_IMAGE"] = saved


@pytest.fixture
def in_folder(built: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.chdir(built)
    yield built
    for name in [m for m in sys.modules if m.startswith(("harbor_tasks", "policies"))]:
        del sys.modules[name]


def test_each_oracle_reaches_the_best_reward_through_openenv_eval(
    in_folder: Path, cli: Callable[..., Any]
) -> None:
    manifest = (in_folder / "openenv.yaml").read_text()
    quality = load_manifest(in_folder).quality
    assert quality is not None and quality.oracle is not None
    assert quality.oracle.policy == "harbor_tasks.oracle:solve"
    assert "- rl-environment" in manifest and "- harbor" in manifest
    done = cli("eval", ".", "--policy", "harbor_tasks.oracle:solve", "-c", "3", "-o", "oracle")
    assert done.code == 0, done.text
    rows = read_rows(in_folder / "oracle")
    assert sorted(r["task_key"] for r in rows) == ["count-words", "sum-numbers", "write-greeting"]
    assert all(r["return"] == 1.0 and r["error"] is None for r in rows), rows
    graded = [json.loads(r["steps"])[-1] for r in rows]
    assert all(step["done"] and step["action"]["tool_name"] == "submit" for step in graded)
    sums = next(json.loads(r["steps"])[-1] for r in rows if r["task_key"] == "sum-numbers")
    assert sums["breakdown"] == {"reward": 1.0, "exists": 1.0}  # reward.json's named rewards


def test_doing_nothing_gets_the_least_reward(in_folder: Path, cli: Callable[..., Any]) -> None:
    done = cli("eval", ".", "--policy", "policies:nothing", "-c", "3", "-o", "nothing")
    assert done.code == 0, done.text
    rows = read_rows(in_folder / "nothing")
    assert len(rows) == 3
    for row in rows:
        steps = json.loads(row["steps"])
        assert [s["action"]["tool_name"] for s in steps] == ["submit"]
        assert steps[0]["done"] and steps[0]["reward"] == 0.0 and row["return"] == 0.0


def test_eval_gives_the_expected_pass_at_k(in_folder: Path, cli: Callable[..., Any]) -> None:
    done = cli("eval", ".", "--policy", "policies:half", "-k", "3", "-c", "3", "-o", "half")
    assert done.code == 0, done.text
    rows = read_rows(in_folder / "half")
    assert len(rows) == 9 and not any(r["error"] for r in rows)
    assert all(r["passed"] == (r["seed"] % 2 == 0) for r in rows), rows
    summary = json.loads((in_folder / "half" / "summary.json").read_text())
    for k in (1, 2, 3):
        assert summary["pass_at_k"][str(k)] == pytest.approx(expected_pass_at_k(rows, k))
    assert 0 < summary["pass_at_k"]["1"] < 1  # the seeds split: neither all nor none passed


# -- the episode's bounds, on the environment itself ---------------------------------------


def _task_set(
    tmp_path: Path,
    toml_extra: str = "",
    test_sh: str | None = None,
    *,
    replace: tuple[tuple[str, str], ...] = (),
) -> type[Any]:
    """A one-task set: write-greeting with its task.toml changed (its last table is
    [environment])."""
    folder = tmp_path / "bounded"
    shutil.copytree(TASKS / "write-greeting", folder)
    text = (folder / "task.toml").read_text()
    for old, new in replace:
        text = text.replace(old, new)
    (folder / "task.toml").write_text(text + toml_extra)
    if test_sh is not None:
        (folder / "tests" / "test.sh").write_text(test_sh)
    return HarborEnvironment.configured(folder)


def _bash(env: Any, command: str) -> str:
    observation = env.step(CallToolAction(tool_name="bash", arguments={"command": command}))
    return str(observation.result["data"])


def _submit(env: Any) -> Any:
    return env.step(CallToolAction(tool_name="submit", arguments={}))


def test_the_agent_has_no_network_and_never_sees_the_tests_or_the_solution(built: Path) -> None:
    environment = HarborEnvironment.configured(built / "tasks")
    env = environment()
    try:
        first = env.reset(task_id="sum-numbers")
        shown = first.model_dump_json()
        assert "numbers.txt" in shown and "reward.json" not in shown  # instruction only
        assert _bash(env, "ls /sys/class/net").split()[:-3] == ["lo"]  # --network none
        assert "No such file" in _bash(env, "ls /tests /solution /logs/verifier 2>&1")
        assert "exit code 1" in _bash(env, "grep -rl exists / --include=test.sh 2>/dev/null")
        graded = _submit(env)
        assert graded.done and graded.reward == 0.0
        assert "python3" not in graded.model_dump_json()  # nothing of test.sh comes back
    finally:
        env.close()


def test_a_task_that_allows_the_network_gets_the_hosts(built: Path, tmp_path: Path) -> None:
    environment = _task_set(tmp_path, '\nnetwork_mode = "public"\n')  # under [environment]
    env = environment()
    try:
        env.reset()
        interfaces = _bash(env, "ls /sys/class/net").split()[:-3]
        assert "lo" in interfaces and len(interfaces) > 1
    finally:
        env.close()


def test_a_reward_file_the_agent_left_is_not_believed(built: Path) -> None:
    env = HarborEnvironment.configured(built / "tasks")()
    try:
        env.reset(task_id="write-greeting")
        _bash(env, "mkdir -p /logs/verifier && echo 1 > /logs/verifier/reward.txt")
        _bash(env, "echo '{\"reward\": 1}' > /logs/verifier/reward.json")
        graded = _submit(env)
        assert graded.done and graded.reward == 0.0
    finally:
        env.close()


def test_a_reward_folder_the_agent_planted_is_not_believed(built: Path) -> None:
    env = HarborEnvironment.configured(built / "tasks")()
    try:
        env.reset(task_id="count-words")
        plant = "mkdir -p /logs/verifier/reward.json && echo '{\"reward\": 1}' > {}/a"
        _bash(env, plant.replace("{}", "/logs/verifier/reward.json"))
        _bash(env, "mkdir -p /tests/conftest.py")  # and something where the tests go
        graded = _submit(env)
        assert graded.done and graded.reward == 0.0, graded.metadata
    finally:
        env.close()


#: Replaces the image's ``timeout`` (the grader's test ran through it) with one that writes a
#: reward of 1 instead of running the test, and ``sleep`` (a grader's first process) with one
#: that keeps writing it.
TROJANS = r"""
cd /usr/bin && cp timeout timeout.real && cp sleep sleep.real && cp mkdir mkdir.real
printf '#!/bin/sh\ncase "$*" in *test.sh*) echo 1 > /logs/verifier/reward.txt; exit 0;; esac\n\
exec /usr/bin/timeout.real "$@"\n' > /tmp/t
printf '#!/bin/sh\n(while :; do echo 1 > /logs/verifier/reward.txt; sleep.real 0.05; done\
 2>/dev/null &)\nexec /usr/bin/sleep.real "$@"\n' > /tmp/s
printf '#!/bin/sh\n/usr/bin/mkdir.real "$@"; echo 1 > /logs/verifier/reward.txt 2>/dev/null\n' \
 > /tmp/m
chmod +x /tmp/t /tmp/s /tmp/m && mv /tmp/s sleep && mv /tmp/m mkdir && mv /tmp/t timeout
"""


def test_programs_the_agent_replaced_do_not_grade(built: Path) -> None:
    env = HarborEnvironment.configured(built / "tasks")()
    try:
        env.reset(task_id="count-words")
        _bash(env, TROJANS)
        assert "reward.txt" in _bash(env, "cat /usr/bin/timeout")  # in place for the grader
        graded = _submit(env)
        assert graded.done and graded.reward == 0.0, graded.metadata
    finally:
        env.close()


@pytest.mark.parametrize(
    "breaking",
    [
        "touch /tests",  # the tests cannot be put there
        "rm -rf /logs && touch /logs",  # nor can the reward's folder
    ],
)
def test_grading_the_agent_broke_gives_the_least_reward_and_says_why(
    built: Path, breaking: str
) -> None:
    env = HarborEnvironment.configured(built / "tasks")()
    try:
        env.reset(task_id="write-greeting")
        _bash(env, breaking)
        graded = _submit(env)
        assert graded.done and graded.reward == 0.0
        assert "agent's files" in graded.metadata["reward_error"], graded.metadata
    finally:
        env.close()


def test_a_task_whose_image_runs_as_another_user_is_graded(built: Path, tmp_path: Path) -> None:
    environment = _task_set(tmp_path, "", test_sh="#!/bin/sh\necho 1 > /logs/verifier/reward.txt\n")
    task = next(iter(environment.tasks.values()))
    with (task.path / "environment" / "Dockerfile").open("a") as dockerfile:
        dockerfile.write("USER nobody\n")
    env = environment()
    try:
        env.reset()
        assert "nobody" in _bash(env, "id -un")
        graded = _submit(env)
        assert graded.done and graded.reward == 1.0, graded.metadata
    finally:
        env.close()
        remove_images(task_image(task))


def test_an_engine_that_does_not_answer_is_an_infrastructure_error(
    built: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    task = next(iter(HarborEnvironment.configured(built / "tasks").tasks.values()))
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-engine.sock")
    with pytest.raises(DockerError):
        run_test(task, BASE_IMAGE)


@pytest.mark.parametrize(
    ("written", "reward", "flag"),
    [
        ("echo 7 > /logs/verifier/reward.txt", 1.0, "reward_out_of_range"),
        ("echo -3 > /logs/verifier/reward.txt", 0.0, "reward_out_of_range"),
        ("echo nan > /logs/verifier/reward.txt", 0.0, "reward_error"),
        ("true", 0.0, "reward_error"),
        # a reward "file" that is a folder, a link, or too big is a grading error, never read
        (
            "mkdir /logs/verifier/reward.json && echo '{\"reward\": 1}' > /logs/verifier/reward.json/a",
            0.0,
            "reward_error",
        ),
        ("echo 1 > /tmp/r && ln -s /tmp/r /logs/verifier/reward.txt", 0.0, "reward_error"),
        ("head -c 70000 /dev/zero | tr '\\0' 1 > /logs/verifier/reward.txt", 0.0, "reward_error"),
    ],
)
def test_a_reward_stays_in_its_range(
    built: Path, tmp_path: Path, written: str, reward: float, flag: str
) -> None:
    env = _task_set(tmp_path, "", test_sh=f"#!/bin/bash\n{written}\n")()
    try:
        env.reset()
        graded = _submit(env)
        assert graded.done and graded.reward == reward and graded.metadata[flag]
    finally:
        env.close()


def test_time_and_memory_are_bounded(built: Path, tmp_path: Path) -> None:
    limits = (("timeout_sec = 120.0", "timeout_sec = 4.0"), ("memory_mb = 512", "memory_mb = 64"))
    environment = _task_set(tmp_path, replace=limits)
    task = next(iter(environment.tasks.values()))
    assert (task.agent_timeout_s, task.memory_mb) == (4.0, 64)
    env = environment()
    try:
        env.reset()
        eaten = _bash(env, "python3 -c 'x = bytearray(300 * 1024 * 1024); print(len(x))'")
        assert "314572800" not in eaten and "exit code 0" not in eaten  # killed at 64 MB
        assert "ran out of time" in _bash(env, "sleep 30")
        late = env.step(CallToolAction(tool_name="bash", arguments={"command": "echo hi"}))
        assert "time for this task is up" in late.result["data"]
        assert late.done and late.reward == 0.0  # graded as it was
    finally:
        env.close()
