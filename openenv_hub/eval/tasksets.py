"""Tasksets: the tasks an evaluation plays, each with a stable key and the prompt a model sees.

A task comes from one of three places:

- a folder (or file) of JSON Lines, one task a line; the file's name is its split
  (``tasks/test.jsonl`` is split ``test``);
- a Hub dataset, ``hf://datasets/NS/NAME``: its ``.jsonl`` files, named by split the same way
  (``data/test.jsonl`` or ``test-00000.jsonl``);
- the environment's own task routes (``/{env}/splits`` and ``/{env}/tasks``), which environments
  such as the coding environment serve.

Each row needs a key (the first of ``key``, ``task_id``, ``id`` it has) and may carry a
``prompt`` (the text the model reads before the environment's first observation) and a
``reset`` object (the arguments of ``reset``; ``openenv_reset``, the name OpenEnv's RFC 006
gives it, is read too). Without either, the task is started with ``reset(task_id=KEY)``, the
rule every environment with tasks follows. The row's other plain columns (``difficulty``,
``category``...) are kept as the task's :attr:`Task.columns`, and each task has a
:attr:`Task.digest` of its whole row, which resumes are checked against.

Layer: client.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from openenv_hub.errors import ConfigurationError

__all__ = [
    "KEY_COLUMNS",
    "Task",
    "check_unique",
    "load_tasks",
    "server_tasks",
    "task_from_row",
    "taskset_digest",
]

#: Columns that may hold a task's stable key, in the order they are looked for.
KEY_COLUMNS = ("key", "task_id", "id")
HUB_PREFIX = "hf://datasets/"


@dataclass(frozen=True)
class Task:
    """One task of a taskset.

    Attributes:
        key: The task's stable key (what results and resumes are keyed by).
        split: The split the task belongs to.
        prompt: The text the model reads first ("" when the environment's observation says it all).
        reset: The arguments of the environment's ``reset`` that start this task.
        columns: The row's other plain columns (numbers, booleans, text up to 256
            characters), kept in each rollout's row as ``task_NAME`` columns, to slice
            results by.
        digest: A digest of the task's whole row (of its split, key, prompt, reset and
            columns when not given): a task whose content changed has another.
    """

    key: str
    split: str
    prompt: str = ""
    reset: dict[str, Any] = field(default_factory=dict)
    columns: dict[str, Any] = field(default_factory=dict)
    digest: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        if not self.digest:
            content = {"prompt": self.prompt, "reset": self.reset, "columns": self.columns}
            object.__setattr__(self, "digest", _digest(self.split, self.key, content))


def _digest(split: str, key: str, content: Any) -> str:
    text = json.dumps([split, key, content], sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def taskset_digest(tasks: list[Task]) -> str:
    """One digest of every task's digest, in order: the taskset as a whole."""
    text = "\n".join(f"{t.split}/{t.key}:{t.digest}" for t in tasks)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _plain_columns(row: dict[str, Any], skipped: set[str]) -> dict[str, Any]:
    return {
        name: value
        for name, value in row.items()
        if name not in skipped
        and (
            value is None
            or isinstance(value, (bool, int, float))
            or (isinstance(value, str) and len(value) <= 256)
        )
    }


def task_from_row(row: dict[str, Any], split: str, *, key_column: str | None = None) -> Task:
    """A :class:`Task` from one row of a taskset.

    Args:
        row: The row.
        split: Its split.
        key_column: The column holding the key (default: the first of :data:`KEY_COLUMNS`).
    """
    columns = (key_column,) if key_column else KEY_COLUMNS
    key = next((row[c] for c in columns if row.get(c) is not None), None)
    if key is None:
        raise ConfigurationError(
            f"A task of split {split!r} has no key: {json.dumps(row)[:200]}",
            hint=f"Give every row {_one_of(columns)}.",
        )
    reset = row.get("reset", row.get("openenv_reset"))
    if isinstance(reset, str):
        reset = json.loads(reset)
    if reset is None:
        reset = {"task_id": str(key)}
    if not isinstance(reset, dict):
        raise ConfigurationError(f"The 'reset' of task {key!r} is not an object: {reset!r}")
    skipped = {*KEY_COLUMNS, *columns, "prompt", "reset"}
    return Task(
        key=str(key),
        split=split,
        prompt=str(row.get("prompt") or ""),
        reset=reset,
        columns=_plain_columns(row, skipped),
        digest=_digest(split, str(key), row),
    )


def load_tasks(
    source: str,
    *,
    split: str | None = None,
    splits: list[str] | None = None,
    key_column: str | None = None,
) -> list[Task]:
    """The tasks of a JSON Lines folder or file, or of ``hf://datasets/NS/NAME``.

    Args:
        source: A path, or ``hf://datasets/NS/NAME`` (read with the Hub's endpoint and token).
        split: Keep only this split (default: every split).
        splits: Keep only these splits (default: every split).
        key_column: The column holding each task's key (default: the first of
            :data:`KEY_COLUMNS`).
    """
    if source.startswith(HUB_PREFIX):
        files = _hub_files(source[len(HUB_PREFIX) :].strip("/"))
    else:
        path = Path(source)
        if not path.exists():
            raise ConfigurationError(
                f"No taskset at {source}.",
                hint="Pass a folder of .jsonl files, one file, or hf://datasets/NS/NAME.",
            )
        files = sorted(path.rglob("*.jsonl")) if path.is_dir() else [path]
    wanted = {split} if split else set(splits or ())
    tasks = [
        t
        for file in files
        for t in _read_jsonl(file, key_column)
        if not wanted or t.split in wanted
    ]
    if not tasks:
        where = f" in split {', '.join(sorted(wanted))}" if wanted else ""
        raise ConfigurationError(f"The taskset {source} has no tasks{where}.")
    check_unique(tasks, source)
    return tasks


def server_tasks(base_url: str, env_name: str, *, split: str | None = None) -> list[Task]:
    """The tasks the environment at ``base_url`` lists through its task routes.

    Raises:
        ConfigurationError: The environment lists no tasks (it does not serve the task routes).
    """
    with httpx.Client(base_url=base_url, timeout=60.0, trust_env=False) as http:
        response = http.get(f"/{env_name}/splits")
        if response.status_code in (404, 501):
            raise ConfigurationError(
                f"The environment {env_name} at {base_url} does not list tasks.",
                hint="Pass a taskset with --tasks (a folder of .jsonl, or hf://datasets/NS/NAME).",
            )
        response.raise_for_status()
        names = [s["name"] if isinstance(s, dict) else str(s) for s in response.json()]
        tasks = []
        for name in names:
            if split not in (None, name):
                continue
            listed = http.post(f"/{env_name}/tasks", json={"split": name})
            listed.raise_for_status()
            tasks += [task_from_row(row, name) for row in listed.json()["tasks"]]
    if not tasks:
        raise ConfigurationError(f"The environment {env_name} has no tasks in split {split!r}.")
    return tasks


def _read_jsonl(file: Path, key_column: str | None) -> list[Task]:
    split = file.stem.split("-")[0]
    tasks = []
    for number, line in enumerate(file.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ConfigurationError(f"{file}:{number} is not JSON: {exc}") from None
        tasks.append(task_from_row(row, split, key_column=key_column))
    return tasks


def _hub_files(repo_id: str) -> list[Path]:
    from huggingface_hub import HfApi, hf_hub_download

    from openenv_hub.hub import resolve_endpoint, translate

    endpoint = resolve_endpoint()
    with translate(endpoint=endpoint, repo_id=repo_id, action="read tasks", repo_type="dataset"):
        listed = HfApi(endpoint=endpoint).list_repo_files(repo_id, repo_type="dataset")
        names = sorted(n for n in listed if n.endswith(".jsonl"))
        if not names:
            raise ConfigurationError(f"The dataset {repo_id} holds no .jsonl files of tasks.")
        return [
            Path(hf_hub_download(repo_id, n, repo_type="dataset", endpoint=endpoint)) for n in names
        ]


def _one_of(columns: tuple[str, ...]) -> str:
    if len(columns) == 1:
        return f"the column {columns[0]!r}"
    return f"one of the columns {', '.join(columns)}"


def check_unique(tasks: list[Task], source: str) -> None:
    """Raise :class:`ConfigurationError` when two tasks of a split share a key."""
    seen: set[tuple[str, str]] = set()
    for task in tasks:
        if (task.split, task.key) in seen:
            raise ConfigurationError(
                f"The taskset {source} has two tasks keyed {task.key!r} in split {task.split!r}.",
                hint="Keys must be unique within a split: results and resumes are keyed by them.",
            )
        seen.add((task.split, task.key))
