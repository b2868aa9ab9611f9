"""Fixtures of the evaluation tests (tests/eval/ and docs/eval.md's): the word game served on
127.0.0.1, a taskset of three of its words, a policy that guesses words in an order fixed by the
rollout's seed, and ``transformers serve`` with a tiny model made on the spot."""

from __future__ import annotations

import json
import shlex
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
sys.path.insert(0, str(EXAMPLES))

#: Three tasks of the word game: seeds 0, 1 and 2 hide "brick", "pious" and "crane".
WORD_TASKS = [
    {"key": "brick", "reset": {"seed": 0}, "prompt": "Find the secret word."},
    {"key": "pious", "reset": {"seed": 1}, "prompt": "Find the secret word."},
    {"key": "crane", "reset": {"seed": 2}, "prompt": "Find the secret word."},
]

GUESS_POLICY = '''
import os
import random
import time

WORDS = ["crane", "slate", "pious", "mango", "fjord", "glyph", "brick", "stove", "plumb", "dwarf"]
PAUSE_S = float(os.environ.get("GUESS_PAUSE_S", "0"))


def guess(messages, tools, seed):
    """Guess six of the ten words, in an order fixed by the seed."""
    time.sleep(PAUSE_S)
    order = random.Random(seed).sample(WORDS, 6)
    turn = sum(1 for m in messages if m["role"] == "assistant")
    return {"tool_calls": [{"name": "guess", "arguments": {"word": order[turn]}}]}
'''


@pytest.fixture
def word_game(serve: Callable[..., Any]) -> Any:
    """The word game of examples/word_game.py, served on 127.0.0.1."""
    from word_game import app

    return serve(app)


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A folder holding ``tasks/test.jsonl`` and the ``guesser`` policy module; the cwd."""
    (tmp_path / "tasks").mkdir()
    lines = "".join(json.dumps(task) + "\n" for task in WORD_TASKS)
    (tmp_path / "tasks" / "test.jsonl").write_text(lines)
    (tmp_path / "guesser.py").write_text(GUESS_POLICY)
    monkeypatch.chdir(tmp_path)
    yield tmp_path
    sys.modules.pop("guesser", None)


def read_rows(folder: Path) -> list[dict[str, Any]]:
    lines = (folder / "rollouts.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


#: How the model server is started (docs/eval.md prints it with my-model and port 8000).
SERVE_COMMAND = "transformers serve {folder} --host 127.0.0.1 --port {port}"

MAKE_MODEL = """
import sys
sys.path.insert(0, {examples!r})
from tiny_model import build
talk = [{{"role": "user", "content": "Find the secret word."}}, {{"role": "assistant", "content": "crane"}}]
model, tokenizer = build([talk], tools=[])
model.save_pretrained({folder!r})
tokenizer.save_pretrained({folder!r})
"""


@pytest.fixture(scope="session")
def model_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    """``transformers serve`` on 127.0.0.1 serving a tiny random-weight model made on the spot
    (examples/tiny_model.py; no download). Yields ``(base_url, model_name)``."""
    import os
    import signal
    import subprocess
    import sysconfig
    import time

    import httpx
    from child_processes import die_with_parent
    from serving import free_port

    folder = str(tmp_path_factory.mktemp("tiny-model") / "model")
    script = MAKE_MODEL.format(examples=str(EXAMPLES), folder=folder)
    subprocess.run([sys.executable, "-c", script], check=True, timeout=300, capture_output=True)
    port = free_port()
    # The suite's own commands (transformers) first, as an activated environment has them: CI
    # runs the suite without activating it.
    scripts = sysconfig.get_paths()["scripts"]
    env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "PATH": f"{scripts}{os.pathsep}{os.environ['PATH']}",
    }
    log = open(Path(folder).parent / "serve.log", "wb")  # noqa: SIM115
    command = shlex.split(SERVE_COMMAND.format(folder=folder, port=port))
    server = subprocess.Popen(
        command,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
        preexec_fn=die_with_parent,  # gone with this process, even if no teardown runs
    )
    try:
        deadline = time.monotonic() + 180
        while True:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/health", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if server.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"transformers serve did not start: see {log.name}")
            time.sleep(0.5)
        yield f"http://127.0.0.1:{port}/v1", folder
    finally:
        os.killpg(server.pid, signal.SIGKILL)
        server.wait(timeout=30)
        log.close()


@pytest.fixture
def task_game(serve: Callable[..., Any]) -> Any:
    """The word game with tasks of its own: ``reset(task_id=WORD)`` and the task routes."""
    from word_game import Feedback, GameState, Guess, WordGame

    from openenv_hub import create_app

    class TaskWordGame(WordGame):
        def reset(
            self, seed: int | None = None, episode_id: str | None = None, **kwargs: Any
        ) -> Any:
            observation = super().reset(seed, episode_id)
            self._secret = kwargs.get("task_id") or self._secret
            return observation

        def list_splits(self) -> list[str]:
            return ["test"]

        def list_tasks(self, split: str) -> list[dict[str, str]]:
            return [{"task_id": w, "prompt": "Find the word."} for w in ("crane", "mango")]

    return serve(
        create_app(TaskWordGame, Guess, Feedback, state_cls=GameState, env_name="word_game")
    )


def expected_pass_at_k(rows: list[dict[str, Any]], k: int) -> float:
    """pass@k computed from the rows by enumerating every k-subset of each task's samples."""
    from itertools import combinations

    values = []
    for key in {r["task_key"] for r in rows}:
        passed = [r["passed"] for r in rows if r["task_key"] == key]
        subsets = list(combinations(passed, k))
        values.append(sum(any(s) for s in subsets) / len(subsets))
    return sum(values) / len(values)


#: The environment of ``sums_env`` (docs/eval.md's generator example): ``reset(task_id=N)``
#: asks the sum the generator makes from seed N; the step answering it earns 1.0.
SUMS_ENVIRONMENT = '''
"""Sums: answer the sum of the task made from a seed (sums_env.tasks.make_task)."""

from typing import Any
from uuid import uuid4

from openenv_hub import Environment, State

from sums_env.models import SumsAction, SumsObservation
from sums_env.tasks import make_task


class SumsEnvironment(Environment[SumsAction, SumsObservation, State]):
    SUPPORTS_CONCURRENT_SESSIONS = True
    RUNS_ON_EVENT_LOOP = True
    reward_range = (0.0, 1.0)

    def __init__(self) -> None:
        self._state = State(episode_id=str(uuid4()))
        self._answer = None

    def reset(self, seed=None, episode_id=None, task_id=None, **kwargs: Any) -> SumsObservation:
        task = make_task(int(task_id if task_id is not None else seed or 0))
        self._answer = task["answer"]
        self._state = State(episode_id=episode_id or str(uuid4()))
        return SumsObservation(echoed_message=task["prompt"], reward=0.0)

    def step(self, action: SumsAction, timeout_s=None, **kwargs: Any) -> SumsObservation:
        self._state.step_count += 1
        right = action.message.strip() == str(self._answer)
        return SumsObservation(echoed_message=action.message, reward=float(right), done=True)

    @property
    def state(self) -> State:
        return self._state
'''


@pytest.fixture
def sums_env(
    cli: Callable[..., Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Callable[[str, str], Path]]:
    """Makes ``sums_env`` (``openenv init``, then the sums environment) in the cwd, a tmp
    folder: ``make(tasks_py, taskset_yaml)`` writes ``sums_env/tasks.py`` and appends the
    manifest's taskset; returns the folder."""
    monkeypatch.chdir(tmp_path)

    def make(tasks_py: str, taskset_yaml: str) -> Path:
        assert cli("init", "sums_env", "--no-input", "-o", tmp_path).code == 0
        folder = tmp_path / "sums_env"
        (folder / "sums_env" / "tasks.py").write_text(tasks_py)
        (folder / "sums_env" / "server" / "environment.py").write_text(SUMS_ENVIRONMENT)
        with (folder / "openenv.yaml").open("a") as manifest:
            manifest.write(taskset_yaml)
        return folder

    yield make
    for name in [n for n in sys.modules if n == "sums_env" or n.startswith("sums_env.")]:
        del sys.modules[name]
    sys.path[:] = [p for p in sys.path if not p.startswith(str(tmp_path))]
