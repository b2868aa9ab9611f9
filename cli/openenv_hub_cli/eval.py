"""``openenv eval``: play each task of an environment K times with a model or a Python policy,
write one row per rollout, then a summary (return, pass@k, per task, usage) and a plot.
``openenv eval push DIR`` publishes a results folder; ``openenv eval compare A B`` compares
two."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from openenv_hub_cli import _eval_more
from openenv_hub_cli._eval_run import (
    FIRST_TASKS,
    Display,
    SameSamples,
    check_error_policy,
    finish,
    play,
    preflight,
)
from openenv_hub_cli._utils import err_console

__all__ = ["app", "run"]

OutputOption = Annotated[Path, typer.Option("--output", "-o", help="Results folder.")]


class _RunUnlessNamed(TyperGroup):
    """``openenv eval ENV ...`` is ``openenv eval run ENV ...``; ``push`` and ``compare`` are
    named."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ("-h", "--help"):
            args = ["run", *args]
        return super().parse_args(ctx, args)


app = typer.Typer(
    cls=_RunUnlessNamed,
    help="Evaluate a model or a policy on an environment's tasks ('openenv eval ENV ...' is "
    "'openenv eval run ENV ...'); publish a results folder; compare two.",
    no_args_is_help=True,
)
app.command("push")(_eval_more.push)
app.command("compare")(_eval_more.compare)


@app.command("run")
def run(
    env: Annotated[
        str,
        typer.Argument(
            help="The environment: a server URL, a folder, or a dataset that declares one "
            "(hf://datasets/NS/NAME)."
        ),
    ],
    model: Annotated[str | None, typer.Option("--model", help="Model name at --base-url.")] = None,
    base_url: Annotated[
        str | None,
        typer.Option("--base-url", help="An OpenAI-compatible API, e.g. http://127.0.0.1:8000/v1."),
    ] = None,
    api_key_env: Annotated[
        str, typer.Option("--api-key-env", help="Environment variable holding the API key.")
    ] = "OPENAI_API_KEY",
    policy: Annotated[
        str | None,
        typer.Option("--policy", help="module:function(messages, tools, seed) instead of a model."),
    ] = None,
    tasks: Annotated[
        str | None,
        typer.Option("--tasks", help="Taskset: a folder of .jsonl, or hf://datasets/NS/NAME."),
    ] = None,
    split: Annotated[str | None, typer.Option("--split", help="Evaluate this split only.")] = None,
    limit: Annotated[
        int | None,
        typer.Option("--limit", min=1, help="Play only the first N tasks (default: all)."),
    ] = None,
    rollouts_per_task: Annotated[int, typer.Option("--rollouts-per-task", "-k", min=1)] = 1,
    concurrency: Annotated[int, typer.Option("--concurrency", "-c", min=1)] = 4,
    max_turns: Annotated[
        int, typer.Option("--max-turns", min=1, help="Model turns per rollout.")
    ] = 8,
    temperature: Annotated[float, typer.Option("--temperature", min=0.0)] = 1.0,
    top_p: Annotated[float, typer.Option("--top-p", min=0.0, max=1.0)] = 1.0,
    max_tokens: Annotated[
        int, typer.Option("--max-tokens", min=1, help="Tokens per model turn.")
    ] = 256,
    sampling_args: Annotated[
        str | None,
        typer.Option(
            "--sampling-args",
            metavar="JSON",
            help="More settings sent with each request, as a JSON object (recorded).",
        ),
    ] = None,
    seed: Annotated[
        int, typer.Option("--seed", help="Base seed; each rollout's is derived from it.")
    ] = 0,
    pass_threshold: Annotated[
        float,
        typer.Option("--pass-threshold", help="A rollout passes when its return reaches this."),
    ] = 1.0,
    max_retries: Annotated[
        int,
        typer.Option(
            "--max-retries", min=0, help="Retries of a failed request, and of a failed rollout."
        ),
    ] = 4,
    request_timeout: Annotated[
        float,
        typer.Option(
            "--request-timeout", min=0.1, metavar="SECONDS", help="Bound of one model request."
        ),
    ] = 120.0,
    rollout_timeout: Annotated[
        float | None,
        typer.Option("--rollout-timeout", min=0.1, metavar="SECONDS", help="Bound of one rollout."),
    ] = None,
    fail_on_error: Annotated[
        float,
        typer.Option(
            "--fail-on-error",
            min=0.0,
            max=1.0,
            metavar="RATIO",
            help="Exit non-zero when more than this share of rollouts failed on infrastructure "
            "errors (default 0: any).",
        ),
    ] = 0.0,
    output: OutputOption = Path("eval-results"),
    resume: Annotated[
        bool,
        typer.Option("--resume", help="Play only the missing rollouts, and those that failed."),
    ] = False,
    keep_errors: Annotated[
        bool,
        typer.Option("--keep-errors", help="With --resume, do not play failed rollouts again."),
    ] = False,
    push_to_hub: Annotated[
        str | None,
        typer.Option("--push-to-hub", help="Upload the results as this dataset (NS/NAME)."),
    ] = None,
    partial: Annotated[
        bool, typer.Option("--partial", help="Push even an incomplete run, or one with errors.")
    ] = False,
    space: Annotated[
        str | None,
        typer.Option(
            "--space",
            help="The environment's Space (NS/NAME): recorded, and tagged on the pushed results, "
            "which the catalog then shows on the environment's page.",
        ),
    ] = None,
    private: Annotated[
        bool | None, typer.Option("--private/--public", help="Visibility on push.")
    ] = None,
    runtime: Annotated[
        str | None,
        typer.Option(
            "--runtime",
            help="Where a folder or a dataset's environment runs (local, uv, docker, ...).",
            show_default="local; for a dataset, what it declares",
        ),
    ] = None,
    yes: Annotated[
        bool,
        typer.Option(
            "--yes", "-y", help="Run a dataset's environment without asking (it runs code)."
        ),
    ] = False,
) -> None:
    """Evaluate a model (or a policy) on an environment's tasks (see docs/eval.md).

    Without --tasks, the tasks are the taskset of the folder's openenv.yaml (or the task rows of
    the dataset that declares the environment), else the ones the environment lists through its
    task routes. A dataset's environment runs its code here: it asks first, at a terminal,
    unless --yes is given (see docs/importing.md).
    """
    from openenv_hub.eval import (
        ResultsFolder,
        RunOptions,
        declared_source,
        environment_record,
        find_tasks,
        parse_sampling_args,
        served_env,
    )

    sampling = {"temperature": temperature, "top_p": top_p, "max_tokens": max_tokens}
    options = RunOptions(
        model=model, base_url=base_url, api_key_env=api_key_env, policy=policy, tasks=tasks,
        split=split, limit=limit, rollouts_per_task=rollouts_per_task, concurrency=concurrency,
        max_turns=max_turns, sampling=sampling | parse_sampling_args(sampling_args), seed=seed,
        pass_threshold=pass_threshold, max_retries=max_retries,
        request_timeout_s=request_timeout, rollout_timeout_s=rollout_timeout,
        keep_errors=keep_errors, space=space,
    )  # fmt: skip
    player = options.player()
    results = ResultsFolder(output)
    with served_env(env, runtime=runtime, yes=yes) as served:
        environment = environment_record(served.url, space)
        found, _ = find_tasks(
            env, tasks, split, limit=limit, url=served.url, name=environment["name"], served=served
        )
        tasks_from = tasks or declared_source(served) or "the environment's task routes"
        settings = options.run_settings(served, environment, found, tasks_from)
        results.start(settings, resume=resume, tasks=found)
        plan = options.plan(found)
        try:
            summary = _play_and_finish(
                served.url, plan, player, results, settings, model is not None
            )
            if push_to_hub:
                _eval_more.push_folder(results, push_to_hub, partial=partial, private=private)
        except KeyboardInterrupt:
            err_console.print(
                f"Stopped: {len(results.rows())} of {settings['expected_rollouts']} rollouts are "
                f"in {output}; run the same command with --resume to play the others."
            )
            if push_to_hub and partial:
                finish(results, settings, [f"{t.split}/{t.key}" for t in found], None)
                _eval_more.push_folder(results, push_to_hub, partial=True, private=private)
            raise
        finally:
            results.unlock()
    check_error_policy(summary, fail_on_error, output)


def _play_and_finish(
    url: str, plan: Any, policy: Any, results: Any, settings: dict[str, Any], model: bool
) -> dict[str, Any]:
    """Check the endpoints and play what is missing (if anything is), then summarize."""
    from openenv_hub.eval import missing_pairs

    total = len(plan.tasks) * plan.rollouts_per_task
    watched = [f"{t.split}/{t.key}" for t in plan.tasks[:FIRST_TASKS]]
    watch = SameSamples(plan.rollouts_per_task, watched) if model else None
    missing = missing_pairs(plan, results)
    display = Display(total, total - len(missing), watch)
    if model:
        policy.on_retry = display.on_retry
    if missing:
        preflight(url, missing[0][0], policy)
        play(url, plan, policy, results, display)
    return finish(results, settings, [f"{t.split}/{t.key}" for t in plan.tasks], display)
