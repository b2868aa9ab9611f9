"""How ``openenv eval`` runs: the preflight, the rollouts with their progress, the summary, and
the error policy (a run with infrastructure errors exits non-zero, after everything was
written)."""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass, field
from typing import Any

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from openenv_hub_cli._utils import CommandError, console, err_console

__all__ = ["Display", "SameSamples", "check_error_policy", "finish", "play", "preflight"]

#: Tasks whose samples are compared to warn that every sample came back the same.
FIRST_TASKS = 3


def preflight(url: str, first_task: Any, policy: Any) -> None:
    """One reset of the first task, and one request to the model (when there is one): a
    failure stops the run before any rollout, with the URL and the answer."""
    from openenv_hub.eval import ChatPolicy, InfrastructureError, check_environment

    try:
        asyncio.run(check_environment(url, first_task))
    except InfrastructureError as error:
        raise CommandError(
            f"The environment at {url} did not reset task {first_task.split}/{first_task.key}: "
            f"{error.message}",
            hint="Is the environment server running, and does the task's reset fit it?",
        ) from None
    if not isinstance(policy, ChatPolicy):
        return

    async def ask() -> None:
        try:
            await policy.check()
        finally:
            await policy.aclose()

    try:
        asyncio.run(ask())
    except InfrastructureError as error:
        raise CommandError(
            f"The model endpoint failed the first request: {error.message}",
            hint="Check --base-url (the API's base, e.g. http://127.0.0.1:8000/v1), --model and "
            "the key in --api-key-env.",
        ) from None


@dataclass
class SameSamples:
    """Watches the model's first replies to the first tasks: when every sample of each came
    back identical, the endpoint likely ignores the temperature."""

    rollouts_per_task: int
    watched: list[str]
    replies: dict[str, list[str]] = field(default_factory=dict)
    warned: bool = False

    def see(self, row: dict[str, Any]) -> str:
        """A warning, once, when the watched tasks' samples are all in and all alike."""
        name = f"{row['split']}/{row['task_key']}"
        if self.warned or self.rollouts_per_task < 2 or name not in self.watched:
            return ""
        if row.get("finish") == "error":
            return ""
        assistant = [m for m in json.loads(row["messages"]) if m.get("role") == "assistant"]
        self.replies.setdefault(name, []).append(json.dumps(assistant[:1], sort_keys=True))
        full = [self.replies.get(t, []) for t in self.watched]
        if any(len(r) < self.rollouts_per_task for r in full):
            return ""
        self.warned = True
        if all(len(set(r)) == 1 for r in full):
            return (
                f"Warning: every sample of the first {len(self.watched)} tasks came back "
                "identical: the endpoint may ignore the temperature (transformers serve samples "
                """only when asked: --sampling-args '{"generation_config": "{\\"do_sample\\": """
                """true}"}')."""
            )
        return ""


class Display:
    """Progress: a live bar at a terminal; elsewhere a line every ``every`` rollouts and one for
    each error, with the whole run's counts (a resume's earlier rollouts included)."""

    def __init__(self, total: int, already: int, watch: SameSamples | None = None) -> None:
        self.total, self.already, self.watch = total, already, watch
        self.done = self.errors = self.retries = self.tokens = 0
        self.returns = 0.0
        self.started = time.monotonic()
        self.every = max(1, min(10, total // 10))
        self.live = console.is_terminal
        self._bar: Progress | None = None
        self._task: Any = None

    def __enter__(self) -> Display:
        if self.live:
            columns = (
                TextColumn("eval"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[info]}"),
                TimeElapsedColumn(),
            )
            self._bar = Progress(*columns, console=console, transient=False)
            self._bar.start()
            self._task = self._bar.add_task(
                "eval", total=self.total, completed=self.already, info=""
            )
        return self

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.stop()

    def on_retry(self, error: Any) -> None:
        self.retries += 1

    def on_row(self, row: dict[str, Any]) -> None:
        self.done += 1
        self.tokens += row.get("completion_tokens") or 0
        if row.get("finish") == "error":
            self.errors += 1
        else:
            self.returns += float(row["return"])
        warning = self.watch.see(row) if self.watch is not None else ""
        if warning:
            err_console.print(warning, markup=False)
        info = self._info()
        if self._bar is not None:
            self._bar.update(self._task, advance=1, info=info)
        elif row.get("finish") == "error" or self.done % self.every == 0 or self._last():
            console.print(f"eval: {self.already + self.done} of {self.total} rollouts, {info}")
        if row.get("finish") == "error":
            console.print(f"  error: {row['error']}", markup=False, highlight=False)

    def _last(self) -> bool:
        return self.already + self.done >= self.total

    def _info(self) -> str:
        scored = self.done - self.errors
        mean = f"{self.returns / scored:.3g}" if scored else "-"
        rate = self.done / max(time.monotonic() - self.started, 1e-9)
        return (
            f"mean return {mean}  {rate:.2f} rollouts/s  errors {self.errors}  "
            f"retries {self.retries}"
        )


def play(url: str, plan: Any, policy: Any, results: Any, display: Display) -> int:
    """Play the missing rollouts; returns how many were played."""
    from openenv_hub.eval import run_eval

    async def run() -> int:
        try:
            return await run_eval(
                url, plan, policy, results, on_row=display.on_row, on_retry=display.on_retry
            )
        finally:
            close = getattr(policy, "aclose", None)
            if close is not None:
                await close()

    with display:
        display.started = time.monotonic()
        return asyncio.run(run())


def finish(
    results: Any, settings: dict[str, Any], expected: list[str], display: Display | None
) -> dict[str, Any]:
    """Write the summary (and its plot) of every row in ``results``, and print it. ``expected``
    names the tasks of the run (``split/key``)."""
    from openenv_hub.eval import RunPace, write_summary

    pace = None
    if display is not None:
        pace = RunPace(display.done, display.tokens, time.monotonic() - display.started)
    summary = write_summary(
        results,
        rollouts_per_task=settings["rollouts_per_task"],
        expected=expected,
        pace=pace,
    )
    played = display.done if display is not None else 0
    _print_summary(summary, settings, played, summary["rollouts"] + summary["errors"], results.path)
    return summary


def _print_summary(
    summary: dict[str, Any], settings: dict[str, Any], played: int, written: int, where: Any
) -> None:
    console.print(
        f"Played {played} rollouts; {written} of {settings['expected_rollouts']} in {where}. "
        f"Mean return {summary['return']['mean']:.4g} (std {summary['return']['std']:.4g}), "
        f"errors {summary['errors']}."
    )
    usage, last = summary["usage"], summary["last_run"]
    if usage["completion_tokens"] is not None:
        rate = last["completion_tokens_per_s"]
        console.print(
            f"Tokens: {usage['prompt_tokens'] or 0} prompt, {usage['completion_tokens']} "
            f"completion"
            + (f" ({rate:.1f} completion tokens/s this run)" if rate else "")
            + f"; finish reasons {usage['finish_reasons']}."
        )
    passes = "  ".join(f"pass@{k} {v:.3f}" for k, v in summary["pass_at_k"].items())
    if summary["errors"]:
        lacking = len(summary["incomplete_tasks"])
        console.print(
            f"{passes}  (over the {summary['rollouts']} rollouts without error: "
            f"{summary['errors']} rollouts that ended in an error are not counted; {lacking} tasks "
            "lack samples)"
        )
    else:
        console.print(passes)


def check_error_policy(summary: dict[str, Any], fail_on_error: float, output: Any) -> None:
    """Raise when the share of rollouts that ended in an infrastructure error is above
    ``fail_on_error`` (at 0, any error fails the run)."""
    from openenv_hub.eval import errors_over_limit

    if not errors_over_limit(summary, fail_on_error):
        return
    errors, total = summary["errors"], summary["errors"] + summary["rollouts"]
    kinds = ", ".join(f"{kind} {n}" for kind, n in summary["errors_by_kind"].items())
    raise CommandError(
        f"{errors} of {total} rollouts ended in an error, not a result ({kinds}); they are "
        f"written in {output} with finish 'error' and are not counted in pass@k or the mean.",
        hint="Run the same command with --resume to play them again, or pass "
        "--fail-on-error RATIO to accept up to that share of errors.",
    )
