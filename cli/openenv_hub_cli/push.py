"""``openenv push``: publish an environment folder as a Hugging Face Space."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape
from rich.table import Table

from openenv_hub_cli._hub import (
    EnvVarOption,
    HardwareOption,
    SecretOption,
    TokenOption,
    parse_secrets,
    parse_variables,
    progress,
)
from openenv_hub_cli._progress import showing_progress
from openenv_hub_cli._utils import (
    CommandError,
    EnvPathArg,
    console,
    err_console,
    resolve_env_dir,
)

if TYPE_CHECKING:
    from openenv_hub.hub import PushResult, PushTarget

__all__ = ["command"]


def command(
    path: EnvPathArg = Path("."),
    repo_id: Annotated[
        str | None,
        typer.Option(
            "--repo-id",
            "-r",
            help="NS/NAME of the Space.",
            show_default="the Space the folder was pulled from or last pushed to, else "
            "YOU/<manifest name>",
        ),
    ] = None,
    private: Annotated[
        bool | None,
        typer.Option(
            "--private/--public",
            help="Make the Space private, or public.",
            show_default="a new Space public; an existing one as it is",
        ),
    ] = None,
    token: TokenOption = None,
    env_var: EnvVarOption = None,
    secret: SecretOption = None,
    hardware: HardwareOption = None,
    version: Annotated[
        str | None, typer.Option("--version", help="Tag this push as a version, e.g. 0.1.0.")
    ] = None,
    exclude: Annotated[
        list[str] | None,
        typer.Option(
            "--exclude", help="Also leave out files matching this .gitignore-style pattern."
        ),
    ] = None,
    include_secret: Annotated[
        list[str] | None,
        typer.Option(
            "--include-secret",
            help="Upload this secret-looking file (*.pem, *.key, id_rsa*, credentials*.json, ...) "
            "on purpose; a path or a .gitignore-style pattern (repeatable).",
        ),
    ] = None,
    allow_hard_links: Annotated[
        bool,
        typer.Option(
            "--allow-hard-links",
            help="Upload files that have more than one hard link (another name of such a file may "
            "be outside the folder).",
        ),
    ] = False,
    force: Annotated[
        bool, typer.Option("--force", help="Move an existing version tag here.")
    ] = False,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Show what would change; change nothing.")
    ] = False,
    wait: Annotated[
        bool,
        typer.Option("--wait", help="Wait until the Space runs; print its build log if it fails."),
    ] = False,
    wait_timeout: Annotated[
        float,
        typer.Option("--wait-timeout", min=1, help="Seconds --wait waits.", show_default=True),
    ] = 900.0,
    dataset: Annotated[
        bool,
        typer.Option(
            "--dataset",
            help="Publish it as a dataset that declares the environment (environment.yaml), for "
            "'openenv eval hf://datasets/NS/NAME', instead of a Space.",
        ),
    ] = False,
) -> None:
    """Validate the environment and upload it to a Space in one commit (.gitignore honoured).

    Without --repo-id it goes to the Space the folder was pulled from or last pushed to (kept in
    .openenv/space.json, which is never uploaded), else to YOU/<name in openenv.yaml>; the
    target is printed before anything is sent. 'openenv whoami' tells where it would go.

    Files deleted locally are deleted from the Space. Links to outside the folder, hard links,
    .git files and secret-looking files are never uploaded; each is listed. Variables come from
    openenv.yaml and --env-var. A secret is uploaded only when --secret names it, or when you
    say yes at a terminal to one that openenv.yaml lists (never a Hugging Face token): the
    Space's code reads every secret it gets. Push names the secrets it uploaded, and those the
    Space needs and lacks.

    With --dataset it goes to a dataset instead (--repo-id, else YOU/<name in openenv.yaml>):
    the same files, an environment.yaml that declares the environment and its tasks, and a
    dataset card tagged openenv and rl-environment. Who evaluates it runs its code on their
    machine, after saying yes to the commit they get.
    """
    from openenv_hub.hub import push

    if include_secret is None:
        include_secret = []
    if exclude is None:
        exclude = []
    env_dir = resolve_env_dir(path)
    if dataset:
        _refuse_space_options(env_var, secret, hardware, wait)
        _push_dataset(env_dir, repo_id, private, token, version, force, exclude, include_secret,
                      allow_hard_links, dry_run)  # fmt: skip
        return
    variables, secrets = parse_variables(env_var), parse_secrets(secret)

    def show_target(target: PushTarget) -> None:
        verb = "Would push" if dry_run else "Pushing"
        console.print(
            f"{verb} {escape(env_dir.name)} to [bold]{target.repo_id}[/] ({escape(target.reason)})",
            markup=True,
        )

    with progress(f"Checking {env_dir.name}") as step:

        def ask(question: str) -> bool:
            with step.paused():
                return typer.confirm(question, default=False, err=True)

        result = push(
            env_dir,
            repo_id,
            private=private,
            token=token,
            variables=variables,
            secrets=secrets,
            hardware=hardware,
            version=version,
            exclude=exclude,
            include_secrets=include_secret,
            allow_hard_links=allow_hard_links,
            confirm_secret=ask if sys.stdin.isatty() else None,
            dry_run=dry_run,
            force=force,
            on_step=step,
            on_target=show_target,
        )
    _report(result)
    if wait and not result.dry_run:
        _wait(result.repo_id, token=token, timeout_s=wait_timeout)


def _refuse_space_options(
    env_var: list[str] | None, secret: list[str] | None, hardware: str | None, wait: bool
) -> None:
    given = [
        name
        for name, value in (
            ("--env-var", env_var),
            ("--secret", secret),
            ("--hardware", hardware),
            ("--wait", wait),
        )
        if value
    ]
    if given:
        raise CommandError(
            f"{', '.join(given)} set up a Space; a dataset has no server of its own.",
            hint="Drop them, or push to a Space (without --dataset).",
        )


def _push_dataset(
    env_dir: Path,
    repo_id: str | None,
    private: bool | None,
    token: str | None,
    version: str | None,
    force: bool,
    exclude: list[str],
    include_secret: list[str],
    allow_hard_links: bool,
    dry_run: bool,
) -> None:
    from openenv_hub.hub import push_dataset

    with progress(f"Publishing {env_dir.name} as a dataset"):
        result = push_dataset(
            env_dir, repo_id, private=private, token=token, version=version, force=force,
            exclude=exclude, include_secrets=include_secret, allow_hard_links=allow_hard_links,
            dry_run=dry_run,
        )  # fmt: skip
    verb = "Would push" if dry_run else "Pushed"
    console.print(
        f"{verb} {escape(env_dir.name)} to dataset [bold]{result.repo_id}[/]", markup=True
    )
    console.print(f"Files: {escape(', '.join(result.files))}", markup=True)
    for item in result.skipped:
        console.print(f"  not uploaded: {escape(item.path)}: {escape(item.reason)}", markup=True)
    console.print(f"Tags: {', '.join(result.tags)}")
    if dry_run:
        console.print("[bold]Dry run:[/] nothing was changed.", markup=True)
        return
    tag = f" (version {version})" if version else ""
    console.print(f"[green]Pushed[/] {result.url}{tag}", markup=True)
    console.print(f"Evaluate: openenv eval {result.reference} --policy MODULE:FUNCTION")


def _wait(repo_id: str, *, token: str | None, timeout_s: float) -> None:
    """Follow the Space's stage until it runs; on failure print its log and fail."""
    from openenv_hub.errors import SpaceNotRunningError
    from openenv_hub.hub import wait_for_space

    with showing_progress():
        state = wait_for_space(repo_id, token=token, timeout_s=timeout_s)
    if state.running:
        console.print(f"[green]Running[/] {repo_id}", markup=True)
        return
    kind = "Build" if state.stage in ("BUILD_ERROR", "CONFIG_ERROR", "NO_APP_FILE") else "Run"
    err_console.print(f"{kind} log of {repo_id} (last lines):")
    for line in state.logs[-60:] or ["(empty)"]:
        err_console.print(f"  {escape(line)}", markup=True)
    if state.error_message:
        err_console.print(
            f"Reason: {escape(state.error_message.splitlines()[0][:300])}", markup=True
        )
    raise SpaceNotRunningError(
        repo_id, state.stage, hint="Fix what the log above shows, then push again."
    )


def _report(result: PushResult) -> None:
    plan = result.plan
    _print_files(result)
    _print_left_out(result)
    for change in plan.card_changes:
        console.print(f"[yellow]Space card:[/] {escape(change)}", markup=True)
    if plan.scorecard:
        console.print(f"Quality scorecard: {escape(plan.scorecard)}")
    if plan.wheels:
        console.print(f"Bundled (development install): {', '.join(plan.wheels)}")
    for change in plan.pin.changes if plan.pin else []:
        console.print(f"[yellow]pyproject.toml:[/] {escape(change)}", markup=True)
    if plan.variables:
        console.print("Variables: " + ", ".join(f"{k}={v}" for k, v in plan.variables.items()))
    _print_secrets(result)
    if result.dry_run:
        console.print("[bold]Dry run:[/] nothing was changed.", markup=True)
        return
    tag = f" as version {plan.version}" if plan.version else ""
    console.print(f"[green]Pushed[/] {plan.repo_id}{tag}: {result.url}", markup=True)
    console.print(f"App:     {result.app_url}")
    if result.pip_install:  # an app Space (kind: app) installs nothing
        console.print(f"Install: {result.pip_install}")


def _print_secrets(result: PushResult) -> None:
    """The names of the secrets uploaded, and of those the Space needs and will lack."""
    plan = result.plan
    if plan.secrets:
        done = "Secrets to upload" if result.dry_run else "Secrets uploaded"
        console.print(f"{done}: {', '.join(plan.secrets)} (names only; values are never shown)")
    for name in plan.hub_token_secrets:
        err_console.print(
            f"[yellow]Note:[/] {name} holds the Hugging Face token this push uses: the Space's "
            "code can act as you with it.",
            markup=True,
        )
    for missing in plan.missing_secrets:
        err_console.print(
            f"[yellow]Secret {missing.name} not uploaded:[/] openenv.yaml says the Space needs "
            f"it, but {escape(missing.reason)}; or add it in the Space's settings "
            f"({result.url}/settings).",
            markup=True,
        )


def _print_files(result: PushResult) -> None:
    plan, files = result.plan, result.plan.files
    state = ("new, " if plan.create else "") + ("private" if plan.private else "public")
    console.print(f"Space {plan.repo_id} ({state})")
    table = Table(show_header=True, box=None, pad_edge=False)
    table.add_column("change")
    table.add_column("files", overflow="fold")
    for label, names in (
        ("added", files.added),
        ("changed", files.changed),
        ("deleted", files.deleted),
    ):
        if names:
            table.add_row(label, escape(", ".join(names)))
    table.add_row("unchanged", str(len(files.unchanged)))
    if plan.ignored:
        table.add_row("ignored", escape(", ".join(plan.ignored)))
    console.print(table)


def _print_left_out(result: PushResult) -> None:
    """Every file a safety rule left out, and every file the Hub will store with Xet."""
    plan = result.plan
    if plan.skipped:
        console.print("[yellow]Not uploaded:[/]", markup=True)
    for item in plan.skipped:
        console.print(f"  {escape(item.path)}: {escape(item.reason)}")
    for large in plan.large:
        err_console.print(
            f"[yellow]Warning:[/] {escape(large.path)} is {large.size / 1e6:.1f} MB. The Hub "
            "stores files over 10 MB with Xet (Git LFS): push uploads it that way, and a git "
            "clone (or pip install git+...) without git-lfs gets a small pointer file instead.",
            markup=True,
        )
