"""The ``no_leakage`` check: no answer of a task is readable by the agent.

The answers are the oracle's (every text its actions sent on that task) and the secrets the
manifest's ``secrets`` function names (hidden tests). They are looked for in what an agent reads
when it does not send them itself: the observations, refusals and state of every episode but the
oracle's, the tools' descriptions, ``/metadata`` and ``/schema``. A text is compared with its
spaces collapsed; a long answer is also looked for line by line. Texts shorter than
:data:`MIN_CHARS` are not looked for (a chess move is in every list of legal moves), and neither
is a line of the task's prompt (which a solution may repeat, as a coding task's signature).

Layer: client.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from openenv_hub.checks.scorecard import QualityCheck
from openenv_hub.errors import ConfigurationError
from openenv_hub.eval import Task
from openenv_hub.validation.quality.compare import short
from openenv_hub.validation.quality.episodes import string_leaves
from openenv_hub.validation.quality.run import QualityRun
from openenv_hub.validation.quality.verdicts import could_not_check

__all__ = ["MIN_CHARS", "answer_texts", "check_no_leakage"]

#: The shortest text looked for.
MIN_CHARS = 12
_SPACES = re.compile(r"\s+")


def _norm(text: str) -> str:
    return _SPACES.sub(" ", text).strip()


def check_no_leakage(run: QualityRun) -> QualityCheck:
    failed = could_not_check(run, "no_leakage", ("server", "tasks", "oracle", "floor"))
    if failed is not None:
        return failed
    try:
        secrets = {task.key: _secrets(run, task) for task in run.tasks}
    except ConfigurationError as exc:
        hint = "Fix quality.oracle.secrets in openenv.yaml."
        return QualityCheck("no_leakage", "fail", f"the secrets do not load: {exc}", hint=hint)
    searched = sum(len(found) for found in secrets.values())
    if not searched:
        why = (
            "no oracle or secrets declared: there is no answer to look for"
            if run.spec.quality.oracle is None
            else f"no answer has a text of {MIN_CHARS} characters or more to look for (a "
            "shorter one, a move or a number, is found everywhere by chance)"
        )
        return QualityCheck("no_leakage", "skip", why)
    texts = list(_readable(run))
    leaks = [
        f"{key}'s answer {short(secret, 60)!r} is readable in {where}"
        for key, found in secrets.items()
        for secret in found
        for where, text in texts
        if secret in text
    ]
    measured = {"answers_searched": searched, "texts_read": len(texts)}
    if leaks:
        tasks = len({line.split("'s answer")[0] for line in leaks})
        summary = (
            f"the answers of {tasks} task(s) are readable by the agent, in {len(leaks)} places"
        )
        hint = (
            "Keep answers and hidden tests out of observations, metadata, state, tools and errors."
        )
        return QualityCheck("no_leakage", "fail", summary, tuple(leaks[:20]), measured, hint)
    summary = f"{searched} answer texts of {len(run.tasks)} tasks are in none of {len(texts)} texts the agent reads"
    return QualityCheck("no_leakage", "pass", summary, (), measured)


def _secrets(run: QualityRun, task: Task) -> list[str]:
    """The answer texts of ``task`` to look for (normalized), its public lines left out."""
    whole = list(run.spec.secrets_of(task))
    oracle = run.oracle.get(task.key)
    if oracle is not None:
        whole += [text for action in oracle.actions for text in answer_texts(action)]
    public = _public_lines(task)
    found: set[str] = set()
    for text in whole:
        norm = _norm(text)
        if len(norm) >= MIN_CHARS and norm not in public:
            found.add(norm)
        lines = [_norm(line) for line in text.splitlines()]
        if len(lines) > 1:
            found.update(ln for ln in lines if len(ln) >= MIN_CHARS and ln not in public)
    return sorted(found)


def answer_texts(action: dict[str, Any]) -> list[str]:
    """The texts an action answers with: a tool call's arguments, or the action's fields (not
    the tool's name, nor the action's ``type``)."""
    if action.get("type") == "call_tool":
        return [text for _, text in string_leaves(action.get("arguments") or {})]
    return [text for key, text in string_leaves(action) if key != "type"]


def _public_lines(task: Task) -> set[str]:
    """The task's statement (its prompt), line by line: an answer may repeat it."""
    return {_norm(line) for line in [task.prompt, *task.prompt.splitlines()]}


def _readable(run: QualityRun) -> Iterator[tuple[str, str]]:
    """``(where, normalized text)`` of every text an agent reads without sending it."""
    for name, by_task in run.floors.items():
        for key, episode in by_task.items():
            label = f"the {name} episode of {key}"
            for where, text in string_leaves(episode.first or {}, "observation"):
                yield f"{label}, reset {where}", _norm(text)
            if episode.refused:
                yield f"{label}, the refused reset", _norm(episode.refused)
            for number, step in enumerate(episode.steps, 1):
                sent = {t for _, t in string_leaves(step.action)}
                seen = string_leaves(
                    step.observation or {"error": step.refused or ""}, "observation"
                )
                for where, text in seen:
                    if text not in sent:
                        yield f"{label}, step {number} {where}", _norm(text)
            for where, text in string_leaves(episode.state or {}, "state"):
                yield f"{label}, {where}", _norm(text)
    toolset = run.toolset
    public = {
        "the tool list": toolset.tools if toolset else [],
        "/metadata": run.metadata,
        "/schema": run.schema,
    }
    for label, value in public.items():
        yield label, _norm(json.dumps(value, ensure_ascii=False))
        for where, text in string_leaves(value):
            yield f"{label} {where}", _norm(text)
