"""Graded tasks: problems with hidden tests, from HumanEval, a JSONL file or a Hub dataset.

A task set is rows shaped like HumanEval's: ``task_id``, ``prompt``, ``entry_point`` and
``test`` (Python source defining ``check(candidate)``; each top-level statement of ``check``
that contains an ``assert`` and names the candidate, by ``check``'s argument or the entry
point's name, is one test: ``assert True, "..."`` tests nothing). ``canonical_solution`` is
optional.

The prompt's own definitions besides the entry point and its other bodiless stubs (HumanEval/38's
``encode_cyclic``, HumanEval/32's ``poly``) are the task's *reference*: the judge runs the tests
with those, so a candidate that redefines a helper (as the identity, or as zero) changes nothing
but its own code.

Choose the set with ``CODING_ENV_TASKS``: ``humaneval`` (the default, shipped with the package),
a path to a ``.jsonl`` or ``.jsonl.gz`` file, or ``hf:NAMESPACE/NAME`` (optionally
``hf:NAMESPACE/NAME/path/in/repo.jsonl``) for a dataset repo on the Hugging Face Hub.
"""

from __future__ import annotations

import ast
import difflib
import functools
import gzip
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from openenv_hub.errors import ConfigurationError

__all__ = [
    "HUMANEVAL",
    "Task",
    "TaskFormatError",
    "TaskSet",
    "UnknownTaskError",
    "load_tasks",
    "reference_source",
]

HUMANEVAL = Path(__file__).resolve().parents[1] / "data" / "HumanEval.jsonl.gz"
_FIELDS = ("task_id", "prompt", "entry_point", "test")
_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


class TaskFormatError(ConfigurationError):
    """A task file has a row that is not a task."""


class UnknownTaskError(KeyError):
    """``reset(task_id=...)`` named a task the set does not have."""

    def __init__(self, task_id: str, suggestions: list[str]) -> None:
        hint = f" Did you mean {', '.join(suggestions)}?" if suggestions else ""
        super().__init__(f"No task {task_id!r}.{hint} The list_tasks tool lists them.")
        self.task_id = task_id
        self.suggestions = suggestions

    def __str__(self) -> str:
        return str(self.args[0])


@dataclass(frozen=True)
class Task:
    """One problem: the prompt the agent sees and the tests it does not."""

    task_id: str
    prompt: str
    entry_point: str
    test: str
    canonical_solution: str = ""

    def grading_request(self, timeout_s: float) -> dict[str, Any]:
        """The ``grade`` request for a grader: the tests split into statements."""
        return {"op": "grade", **self._split_tests, "timeout_s": timeout_s}

    @functools.cached_property
    def _split_tests(self) -> dict[str, Any]:
        module = ast.parse(self.test)
        checks = [n for n in module.body if isinstance(n, ast.FunctionDef) and n.name == "check"]
        check = checks[-1]
        module.body = [n for n in module.body if n is not check]
        argument = check.args.args[0].arg if check.args.args else "candidate"
        candidate = {argument, self.entry_point}
        return {
            "entry_point": self.entry_point,
            "reference": reference_source(self.prompt, self.entry_point),
            "preamble": ast.unparse(module),
            "argument": argument,
            "statements": [
                {"source": ast.unparse(statement), "is_test": _is_test(statement, candidate)}
                for statement in check.body
            ],
        }

    @functools.cached_property
    def num_tests(self) -> int:
        return sum(s["is_test"] for s in self._split_tests["statements"])


def _is_test(statement: ast.stmt, candidate: set[str]) -> bool:
    """Whether a statement of ``check`` tests the candidate: it asserts, and it names the
    candidate (``check``'s argument or the entry point), so ``assert True`` is no test."""
    nodes = list(ast.walk(statement))
    asserts = any(isinstance(node, ast.Assert) for node in nodes)
    return asserts and any(isinstance(n, ast.Name) and n.id in candidate for n in nodes)


def reference_source(prompt: str, entry_point: str) -> str:
    """The prompt's top-level statements but the entry point's definition and other stubs (a
    function of a docstring, ``pass`` or ``...``, for the candidate to write): its imports,
    helper functions and constants, which the judge runs the tests with. A prompt that ends in a
    bare signature is read with a ``pass`` body; one that is not Python has no reference."""
    for source in (prompt, prompt.rstrip() + "\n    pass\n"):
        try:
            module = ast.parse(source)
        except SyntaxError:
            continue
        kept = [node for node in module.body if not _for_the_candidate(node, entry_point)]
        return ast.unparse(ast.Module(body=kept, type_ignores=[]))
    return ""


def _for_the_candidate(node: ast.stmt, entry_point: str) -> bool:
    """Whether a statement of a prompt is the candidate's to write: the entry point, or a stub."""
    if not isinstance(node, _DEFINITIONS):
        return False
    if node.name == entry_point:
        return True
    return not isinstance(node, ast.ClassDef) and all(map(_is_placeholder, node.body))


def _is_placeholder(line: ast.stmt) -> bool:
    """``pass``, a docstring or ``...``."""
    if isinstance(line, ast.Pass):
        return True
    value = line.value if isinstance(line, ast.Expr) else None
    return isinstance(value, ast.Constant) and (
        isinstance(value.value, str) or value.value is Ellipsis
    )


def _task(row: Any, where: str) -> Task:
    if not isinstance(row, dict):
        raise TaskFormatError(f"{where}: expected a JSON object, got {type(row).__name__}")
    missing = [f for f in _FIELDS if not isinstance(row.get(f), str) or not row.get(f)]
    if missing:
        raise TaskFormatError(
            f"{where}: missing or empty {', '.join(missing)} (a task needs {', '.join(_FIELDS)})"
        )
    try:
        module = ast.parse(row["test"])
    except SyntaxError as exc:
        raise TaskFormatError(f"{where}: 'test' is not valid Python: {exc}") from None
    if not any(isinstance(n, ast.FunctionDef) and n.name == "check" for n in module.body):
        raise TaskFormatError(f"{where}: 'test' does not define check(candidate)")
    task = Task(
        task_id=row["task_id"],
        prompt=row["prompt"],
        entry_point=row["entry_point"],
        test=row["test"],
        canonical_solution=str(row.get("canonical_solution") or ""),
    )
    if task.num_tests == 0:
        raise TaskFormatError(
            f"{where}: no statement of check() asserts something about the candidate (its "
            f"argument or {task.entry_point}): every code would pass; add an assert that calls it"
        )
    return task


class TaskSet:
    """Tasks by id, in their file's order."""

    def __init__(self, tasks: Iterable[Task], *, source: str = "") -> None:
        self._tasks = {task.task_id: task for task in tasks}
        self.source = source

    def __len__(self) -> int:
        return len(self._tasks)

    def __iter__(self) -> Iterator[Task]:
        return iter(self._tasks.values())

    def get(self, task_id: str) -> Task:
        task = self._tasks.get(task_id)
        if task is None:
            close = difflib.get_close_matches(task_id, list(self._tasks), n=3, cutoff=0.6)
            raise UnknownTaskError(task_id, close)
        return task

    @classmethod
    def from_jsonl(cls, path: str | Path) -> TaskSet:
        """Read a ``.jsonl`` or ``.jsonl.gz`` file of tasks."""
        path = Path(path)
        if not path.is_file():
            raise ConfigurationError(f"Task file {path} does not exist.")
        opener = gzip.open if path.suffix == ".gz" else open
        tasks = []
        with opener(path, "rt", encoding="utf-8") as lines:
            for number, line in enumerate(lines, 1):
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                except ValueError as exc:
                    raise TaskFormatError(f"{path}:{number}: not JSON: {exc}") from None
                tasks.append(_task(row, f"{path}:{number}"))
        if not tasks:
            raise TaskFormatError(f"{path} has no tasks")
        return cls(tasks, source=str(path))

    @classmethod
    def humaneval(cls) -> TaskSet:
        """HumanEval's 164 problems (MIT licence, see ``data/HUMANEVAL_LICENSE``)."""
        tasks = cls.from_jsonl(HUMANEVAL)
        tasks.source = "humaneval"
        return tasks

    @classmethod
    def from_hub(
        cls, repo_id: str, filename: str | None = None, revision: str | None = None
    ) -> TaskSet:
        """Download a task file from a dataset repo on the Hub (the first ``.jsonl``/``.jsonl.gz``
        file when ``filename`` is not given)."""
        from huggingface_hub import HfApi, hf_hub_download

        if filename is None:
            files = HfApi().list_repo_files(repo_id, repo_type="dataset", revision=revision)
            found = sorted(f for f in files if f.endswith((".jsonl", ".jsonl.gz")))
            if not found:
                raise ConfigurationError(
                    f"Dataset {repo_id} has no .jsonl or .jsonl.gz file; name one with "
                    f"CODING_ENV_TASKS=hf:{repo_id}/path/to/tasks.jsonl"
                )
            filename = found[0]
        local = hf_hub_download(repo_id, filename, repo_type="dataset", revision=revision)
        tasks = cls.from_jsonl(local)
        tasks.source = f"hf:{repo_id}/{filename}"
        return tasks


def load_tasks(spec: str) -> TaskSet:
    """``humaneval``, a path, or ``hf:NAMESPACE/NAME[/FILE]`` (see the module docstring)."""
    spec = spec.strip()
    if spec in ("", "humaneval"):
        return TaskSet.humaneval()
    if spec.startswith("hf:"):
        parts = spec[3:].strip("/").split("/")
        if len(parts) < 2:
            raise ConfigurationError(
                f"Task source {spec!r} should be hf:NAMESPACE/NAME or hf:NAMESPACE/NAME/FILE"
            )
        filename = "/".join(parts[2:]) or None
        return TaskSet.from_hub("/".join(parts[:2]), filename)
    return TaskSet.from_jsonl(spec)
