"""``openenv record``: play episodes with a policy and record them (JSON Lines or Parquet),
optionally pushing them to a Hugging Face dataset repository."""

from __future__ import annotations

import asyncio
import importlib
import inspect
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer

from openenv_hub.errors import ConnectError
from openenv_hub.model.manifest import MANIFEST_FILE
from openenv_hub.support.plots import plots_available, require_plots
from openenv_hub_cli._hub import TokenOption
from openenv_hub_cli._record_summary import print_episodes, warn_errors, write_plot
from openenv_hub_cli._utils import DEBUG_ENV, CommandError, console, err_console

__all__ = ["command", "load_policy"]

OutputOption = Annotated[
    Path, typer.Option("--output", "-o", help="File to write: *.jsonl or *.parquet.")
]


def command(
    env: Annotated[
        str,
        typer.Argument(
            metavar="ENV",
            help="An environment folder (served while recording), or a running server's URL.",
        ),
    ],
    episodes: Annotated[int, typer.Option("--episodes", "-n", min=1, help="Episodes to record.")],
    policy: Annotated[
        str,
        typer.Option(
            "--policy",
            help="module:function choosing each action from the observation (a dict), "
            "imported from the current folder.",
        ),
    ],
    output: OutputOption = Path("trajectories.jsonl"),
    max_steps: Annotated[
        int, typer.Option("--max-steps", min=1, help="Step limit of an episode.")
    ] = 100,
    seed: Annotated[
        int | None,
        typer.Option("--seed", min=0, help="Seed of the first reset; episode i gets seed + i."),
    ] = None,
    overwrite: Annotated[
        bool, typer.Option("--overwrite", help="Replace an existing output file.")
    ] = False,
    push_to_hub: Annotated[
        str | None,
        typer.Option("--push-to-hub", help="Also upload the file to this dataset repo (NS/NAME)."),
    ] = None,
    private: Annotated[
        bool | None,
        typer.Option(
            "--private/--public", help="Visibility of a dataset repo created by the push."
        ),
    ] = None,
    token: TokenOption = None,
    plot: Annotated[
        bool | None,
        typer.Option(
            "--plot/--no-plot",
            help="Write a PNG of the returns beside the output (needs matplotlib).",
            show_default="when matplotlib is installed",
        ),
    ] = None,
) -> None:
    """Play episodes with a policy and record every step: observation, action, reward, done.

    The policy is a function of yours, 'def act(observation: dict) -> dict', returning the
    action as a dict. Each row of the output is one step; read them back with
    openenv_hub.trajectories.read_records, or datasets.load_dataset.
    """
    from openenv_hub.trajectories import TrajectoryWriter, record_episodes

    if output.exists() and not overwrite:
        raise CommandError(
            f"{output} already exists.", hint="Pass --overwrite, or choose another --output."
        )
    if plot:
        require_plots()
    choose = guarded(load_policy(policy), policy)
    with _server(env) as base_url:
        info = _environment(base_url)
        with _writer(TrajectoryWriter, output) as writer:
            summary = asyncio.run(
                record_episodes(
                    base_url,
                    choose,
                    writer,
                    episodes=episodes,
                    max_steps=max_steps,
                    seed=seed,
                    policy_name=policy,
                    env=info,
                )
            )
    print_episodes(summary, max_steps=max_steps)
    version = f" {info.version}" if info.version else ""
    episodes_text = f"{summary.episodes} episode{'s' if summary.episodes != 1 else ''}"
    console.print(
        f"Recorded {episodes_text} ({summary.steps} steps) of {info.name}{version} to {output}; "
        f"mean return {summary.mean_return:.4g}."
    )
    warn_errors(summary, policy)
    if plot or (plot is None and plots_available()):
        console.print(f"Plot of the returns: {write_plot(summary, output, policy=policy)}")
    elif plot is None:
        console.print(
            'No plot: pip install "openenv-hub[plots]" for one (matplotlib).', markup=False
        )
    if push_to_hub:
        from openenv_hub.trajectories import push_trajectories

        url = push_trajectories(
            output, push_to_hub, env_name=info.name, private=private, token=token
        )
        console.print(f"Pushed to {url}")


def load_policy(spec: str) -> Callable[..., Any]:
    """The function named by ``module:function`` (the current folder is importable)."""
    module_name, _, attribute = spec.partition(":")
    if not module_name or not attribute:
        raise CommandError(
            f"--policy {spec!r} is not 'module:function'.",
            hint="Name a module and a function in it, e.g. --policy my_policies:random_move",
        )
    sys.path.insert(0, str(Path.cwd()))
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise CommandError(
            f"Could not import the policy module '{module_name}': {exc}",
            hint="Run the command where the module is, or install its package.",
        ) from exc
    function = getattr(module, attribute, None)
    if not callable(function):
        raise CommandError(
            f"'{module_name}' has no function '{attribute}'.",
            hint=f"Define 'def {attribute}(observation: dict) -> dict' in {module_name}.",
        )
    return function  # type: ignore[no-any-return]


def guarded(function: Callable[..., Any], spec: str) -> Callable[..., Any]:
    """``function``, whose failures name the policy, its call and what it was given."""
    calls = 0

    def failed(exc: Exception, observation: Any) -> CommandError:
        keys = ", ".join(map(str, observation)) if isinstance(observation, dict) else "?"
        return CommandError(
            f"The policy {spec} failed on its call {calls}: {type(exc).__name__}: {exc}",
            hint=f"It was given an observation with the keys: {keys}. Fix the policy; "
            f"{DEBUG_ENV}=1 shows where it failed.",
        )

    if inspect.iscoroutinefunction(function):

        async def call_async(observation: Any) -> Any:
            nonlocal calls
            calls += 1
            try:
                return await function(observation)
            except Exception as exc:
                raise failed(exc, observation) from exc

        return call_async

    def call(observation: Any) -> Any:
        nonlocal calls
        calls += 1
        try:
            return function(observation)
        except Exception as exc:
            raise failed(exc, observation) from exc

    return call


@contextmanager
def _server(env: str) -> Iterator[str]:
    """The base URL of ``env``: as given for a URL, else a local server started for it."""
    if "://" in env:
        yield env
        return
    folder = Path(env)
    if not (folder / MANIFEST_FILE).is_file():
        raise CommandError(
            f"{env!r} is neither a server URL nor an environment folder (no {MANIFEST_FILE}).",
            hint="Pass http://host:port of a running server, or a folder made by 'openenv init'.",
        )
    from openenv_hub.runtimes import start

    with start("local", "folder", folder.resolve()) as server:
        yield server.base_url


def _environment(base_url: str) -> Any:
    from openenv_hub.trajectories import environment_info

    try:
        return environment_info(base_url)
    except Exception as exc:
        raise ConnectError(
            f"Could not read {base_url}/metadata: {type(exc).__name__}: {exc}", url=base_url
        ) from exc


@contextmanager
def _writer(writer_cls: Any, output: Path) -> Iterator[Any]:
    """The writer; if recording fails, the episodes recorded whole so far are kept."""
    writer = writer_cls(output)
    try:
        yield writer
    except BaseException:
        if writer.episodes:
            writer.close()
            err_console.print(f"Kept the {writer.episodes} whole episodes recorded in {output}.")
        else:
            writer.discard()
        raise
    writer.close()
