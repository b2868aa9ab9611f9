"""``openenv eval``: play each task of an environment K times with a model or a Python policy,
write one row per rollout, then a summary (return, pass@k, per task) and a plot."""

from __future__ import annotations

import asyncio
import re
import time
from pathlib import Path
from typing import Any

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from openenv_hub_cli._served_env import ServedEnv, env_url, served_env
from openenv_hub_cli._utils import CommandError, console, err_console

__all__ = ["command", "env_url", "find_tasks"]

SPACE_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*$")
OutputOption = typer.Option(Path("eval-results"), "--output", "-o", help="Results folder.")


def command(
    env: str = typer.Argument(
        ...,
        help="The environment: a server URL, a folder, or a dataset that declares one "
        "(hf://datasets/NS/NAME).",
    ),
    model: str | None = typer.Option(None, "--model", help="Model name at --base-url."),
    base_url: str | None = typer.Option(
        None, "--base-url", help="An OpenAI-compatible API, e.g. http://127.0.0.1:8000/v1."
    ),
    api_key_env: str = typer.Option(
        "OPENAI_API_KEY", "--api-key-env", help="Environment variable holding the API key."
    ),
    policy: str | None = typer.Option(
        None, "--policy", help="module:function(messages, tools, seed) instead of a model."
    ),
    tasks: str | None = typer.Option(
        None, "--tasks", help="Taskset: a folder of .jsonl, or hf://datasets/NS/NAME."
    ),
    split: str | None = typer.Option(None, "--split", help="Evaluate this split only."),
    limit: int | None = typer.Option(
        None, "--limit", min=1, help="Play only the first N tasks (default: all)."
    ),
    rollouts_per_task: int = typer.Option(1, "--rollouts-per-task", "-k", min=1),
    concurrency: int = typer.Option(4, "--concurrency", "-c", min=1),
    max_turns: int = typer.Option(8, "--max-turns", min=1, help="Model turns per rollout."),
    temperature: float = typer.Option(1.0, "--temperature", min=0.0),
    top_p: float = typer.Option(1.0, "--top-p", min=0.0, max=1.0),
    max_tokens: int = typer.Option(256, "--max-tokens", min=1, help="Tokens per model turn."),
    seed: int = typer.Option(0, "--seed", help="Base seed; each rollout's is derived from it."),
    pass_threshold: float = typer.Option(
        1.0, "--pass-threshold", help="A rollout passes when its return reaches this."
    ),
    output: Path = OutputOption,
    resume: bool = typer.Option(False, "--resume", help="Play only the missing rollouts."),
    push_to_hub: str | None = typer.Option(
        None, "--push-to-hub", help="Upload the results as this dataset (NS/NAME)."
    ),
    partial: bool = typer.Option(False, "--partial", help="Push even an incomplete run."),
    space: str | None = typer.Option(
        None,
        "--space",
        help="The environment's Space (NS/NAME): recorded, and tagged on the pushed results, "
        "which the catalog then shows on the environment's page.",
    ),
    private: bool | None = typer.Option(None, "--private/--public", help="Visibility on push."),
    runtime: str | None = typer.Option(
        None,
        "--runtime",
        help="Where a folder or a dataset's environment runs (local, uv, docker, ...).",
        show_default="local; for a dataset, what it declares",
    ),
    yes: bool = typer.Option(
        False, "--yes", "-y", help="Run a dataset's environment without asking (it runs code)."
    ),
) -> None:
    """Evaluate a model (or a policy) on an environment's tasks (see docs/eval.md).

    Without --tasks, the tasks are the taskset of the folder's openenv.yaml (or the task rows of
    the dataset that declares the environment), else the ones the environment lists through its
    task routes. A dataset's environment runs its code here: it asks first, at a terminal,
    unless --yes is given.
    """
    from openenv_hub.eval import EvalPlan, ResultsFolder, environment_metadata, load_function_policy

    if space is not None and not SPACE_ID.match(space):
        raise CommandError(
            f"--space {space!r} is not a Space id.",
            hint="Give it as NS/NAME, e.g. my-org/word-game.",
        )
    chosen = _policy(model, base_url, api_key_env, policy, temperature, top_p, max_tokens)
    results = ResultsFolder(output)
    with served_env(env, runtime=runtime, yes=yes) as served:
        url = served.url
        metadata = environment_metadata(url)
        found, _ = find_tasks(
            env, tasks, split, limit=limit, url=url, name=metadata.get("name"), served=served
        )
        plan = EvalPlan(found, rollouts_per_task, concurrency, max_turns, pass_threshold, seed)
        settings = {
            "env": served.pinned,
            "environment": {
                **{k: metadata.get(k) for k in ("name", "version")},
                "space": space,
            },
            "model": model,
            "base_url": base_url,
            "policy": policy,
            "tasks": tasks or _declared_source(served) or "the environment's task routes",
            "split": split,
            "limit": limit,
            "sampling": chosen.sampling if chosen is not None else {},
            "seed": seed,
            "rollouts_per_task": rollouts_per_task,
            "max_turns": max_turns,
            "pass_threshold": pass_threshold,
            "expected_rollouts": len(found) * rollouts_per_task,
        }
        results.start(settings, resume=resume)
        try:
            played = _run(url, plan, chosen or load_function_policy(str(policy)), results)
        except KeyboardInterrupt:
            err_console.print(
                f"Stopped: {len(results.rows())} of {settings['expected_rollouts']} rollouts are "
                f"in {output}; run the same command with --resume to play the others."
            )
            raise
    summary = _finish(results, rollouts_per_task)
    console.print(
        f"Played {played} rollouts; {summary['rollouts']} of {settings['expected_rollouts']} "
        f"in {output}. Mean return {summary['return']['mean']:.4g} "
        f"(std {summary['return']['std']:.4g}), errors {summary['errors']}."
    )
    console.print("  ".join(f"pass@{k} {v:.3f}" for k, v in summary["pass_at_k"].items()))
    if push_to_hub:
        from openenv_hub.eval import push_results

        url = push_results(results, push_to_hub, partial=partial, private=private)
        console.print(f"Pushed to {url}")


def find_tasks(
    env: str,
    source: str | None,
    split: str | None,
    *,
    limit: int | None = None,
    url: str | None = None,
    name: Any = None,
    served: ServedEnv | None = None,
) -> tuple[list[Any], int]:
    """The first ``limit`` tasks to play, and how many there are: the taskset given with
    --tasks, else the one ``env``'s manifest declares (a folder) or the rows of the dataset
    that declares it, else the tasks the environment lists (serving ``env`` for the time it
    takes when ``url`` is not given)."""
    from openenv_hub.eval import (
        dataset_tasks,
        declared_tasks,
        environment_metadata,
        load_tasks,
        server_tasks,
    )

    if source:
        found = load_tasks(source, split=split)
        return found[:limit], len(found)
    if served is not None and served.dataset is not None:
        from_dataset = dataset_tasks(served.dataset, split=split, limit=limit)
        if from_dataset is not None:
            return from_dataset.tasks, from_dataset.total
    elif "://" not in env and (Path(env) / "openenv.yaml").is_file():
        declared = declared_tasks(Path(env), split=split, limit=limit)
        if declared is not None:
            return declared.tasks, declared.total
    if url is None:
        with served_env(env) as started:
            return find_tasks(env, None, split, limit=limit, url=started.url, served=started)
    name = name or environment_metadata(url).get("name") or "env"
    found = server_tasks(url, str(name), split=split)
    return found[:limit], len(found)


def _declared_source(served: ServedEnv) -> str | None:
    """What the folder's manifest names as its taskset, or the dataset (None for a URL)."""
    if served.dataset is not None:
        return served.dataset.reference
    if served.folder is None:
        return None
    from openenv_hub.manifest import load_manifest

    taskset = load_manifest(served.folder).taskset
    return None if taskset is None else taskset.source or taskset.generator


def _policy(
    model: str | None,
    base_url: str | None,
    api_key_env: str,
    policy: str | None,
    temperature: float,
    top_p: float,
    max_tokens: int,
) -> Any:
    """The chat policy for ``--model``, or None when ``--policy`` names a function."""
    from openenv_hub.eval import ChatPolicy

    if (model is None) == (policy is None):
        raise CommandError(
            "Choose one of --model (with --base-url) or --policy.",
            hint="e.g. --model Qwen/Qwen3-0.6B --base-url http://127.0.0.1:8000/v1",
        )
    if model is None:
        return None
    if base_url is None:
        raise CommandError("--model needs --base-url (an OpenAI-compatible API).")
    sampling = {"temperature": temperature, "top_p": top_p, "max_tokens": max_tokens}
    return ChatPolicy(base_url, model, api_key_env=api_key_env, sampling=sampling)


def _run(url: str, plan: Any, policy: Any, results: Any) -> int:
    from openenv_hub.eval import missing_pairs, run_eval

    total = len(plan.tasks) * plan.rollouts_per_task
    already = total - len(missing_pairs(plan, results))
    stats = {"return": 0.0, "done": 0, "errors": 0}
    started = time.monotonic()
    columns = (
        TextColumn("eval"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[info]}"),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=console, transient=False) as progress:
        bar = progress.add_task("eval", total=total, completed=already, info="")

        def on_row(row: dict[str, Any]) -> None:
            stats["done"] += 1
            stats["return"] += row["return"]
            stats["errors"] += bool(row["error"])
            rate = stats["done"] / max(time.monotonic() - started, 1e-9)
            mean = stats["return"] / stats["done"]
            info = f"mean return {mean:.3g}  {rate:.2f} rollouts/s  errors {stats['errors']}"
            progress.update(bar, advance=1, info=info)

        async def play() -> int:
            try:
                return await run_eval(url, plan, policy, results, on_row=on_row)
            finally:
                close = getattr(policy, "aclose", None)
                if close is not None:
                    await close()

        return asyncio.run(play())


def _finish(results: Any, rollouts_per_task: int) -> dict[str, Any]:
    from openenv_hub.eval import ResultsFolder, summarize, write_plot

    rows = results.rows()
    summary = summarize(rows, rollouts_per_task=rollouts_per_task)
    results.write_json(ResultsFolder.SUMMARY, summary)
    write_plot(rows, summary, results.path / ResultsFolder.PLOT)
    return summary
