"""Carry out a push plan on the Hub, and say what the Space holds if the Hub fails half-way.

Every upload operation is built (and so checked by the Hub client) before the Space is created.
A bundled wheel that the Space does not hold yet goes first, in a commit of its own, so the
uploaded ``pyproject.toml`` can name it at that commit (:mod:`~openenv_hub.hub._wheel_pin`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from openenv_hub.errors import HubError, PushIncompleteError
from openenv_hub.hub._client import HubContext
from openenv_hub.hub._errors import hub_call, scrubbed
from openenv_hub.hub._reads import find_space

if TYPE_CHECKING:
    from openenv_hub.hub._bundle import Bundle
    from openenv_hub.hub._diff import RemoteSpace
    from openenv_hub.hub._plan import PushPlan
    from openenv_hub.hub._urls import SpaceUrls

__all__ = ["apply_push"]


def apply_push(
    ctx: HubContext,
    bundle: Bundle,
    plan: PushPlan,
    remote: RemoteSpace,
    secrets: Mapping[str, str],
    step: Callable[[str], None],
    urls: SpaceUrls,
) -> tuple[str | None, Any]:
    """Create or update the Space; return its commit and ``space_info`` after the push."""
    operations = _operations(bundle, plan)
    _prepare_space(ctx, plan, remote, step)
    stage, commit = "upload", remote.sha
    try:
        commit = _upload(ctx, bundle, plan, remote, operations, step, urls)
        stage = "variables"
        _set_variables(ctx, plan, step)
        stage = "secrets"
        _set_secrets(ctx, plan, secrets, step)
        if plan.version is not None:
            stage = "tag"
            _tag(ctx, plan, commit, step)
        info = find_space(ctx, plan.repo_id)
    except HubError as exc:
        raise PushIncompleteError(
            _state(plan, stage, commit, exc), repo_id=plan.repo_id, stage=stage, cause=exc
        ) from exc
    return commit, info


def _prepare_space(
    ctx: HubContext, plan: PushPlan, remote: RemoteSpace, step: Callable[[str], None]
) -> None:
    api: Any = ctx.api  # hardware flavours are plain strings here
    with hub_call(ctx, "create the Space", repo_id=plan.repo_id):
        if plan.create:
            step(f"Creating Space {plan.repo_id}")
            api.create_repo(
                plan.repo_id,
                repo_type="space",
                space_sdk="docker",
                private=plan.private,
                space_hardware=plan.hardware,
            )
            return
        if plan.private != remote.private:
            step(f"Making {plan.repo_id} {'private' if plan.private else 'public'}")
            api.update_repo_settings(plan.repo_id, private=plan.private, repo_type="space")
        if plan.hardware:
            api.request_space_hardware(plan.repo_id, plan.hardware)


def _operations(bundle: Bundle, plan: PushPlan) -> dict[str, Any]:
    """``{path: operation}`` of every upload and deletion, checked by the Hub client now."""
    from openenv_hub.hub._client import hf

    hub = hf()
    operations: dict[str, Any] = {}
    try:
        for rel in [*plan.files.added, *plan.files.changed]:
            operations[rel] = _add(bundle, rel)
        for rel in plan.files.deleted:
            operations[rel] = hub.CommitOperationDelete(path_in_repo=rel)
    except ValueError as exc:
        raise HubError(
            f"The Hub would refuse a file of {bundle.source}: {exc}. Nothing was sent.",
            repo_id=plan.repo_id,
            hint="Leave the file out with --exclude PATTERN (or .gitignore), then push again.",
        ) from None
    return operations


def _add(bundle: Bundle, rel: str) -> Any:
    from openenv_hub.hub._client import hf

    return hf().CommitOperationAdd(path_in_repo=rel, path_or_fileobj=str(bundle.root / rel))


def _upload(
    ctx: HubContext,
    bundle: Bundle,
    plan: PushPlan,
    remote: RemoteSpace,
    operations: dict[str, Any],
    step: Callable[[str], None],
    urls: SpaceUrls,
) -> str | None:
    """The wheel first when the pin waits for its commit, then everything else."""
    from openenv_hub.hub._wheel_pin import write_pin

    parent = None if plan.create else remote.sha
    pin = plan.pin
    if pin is not None and pin.commit is None:
        wheel = {pin.wheel: operations.pop(pin.wheel)}
        step(f"Uploading the bundled wheel {pin.wheel}")
        pin.commit = parent = _commit(ctx, plan, wheel, parent, "bundled openenv-hub wheel")
        write_pin(bundle, pin, urls)
        operations["pyproject.toml"] = _add(bundle, "pyproject.toml")
    if not operations and not plan.create:
        return parent
    uploads = [rel for rel, op in operations.items() if hasattr(op, "path_or_fileobj")]
    deleted = len(operations) - len(uploads)
    size_kb = sum((bundle.root / rel).stat().st_size for rel in uploads) / 1024
    step(f"Uploading {len(uploads)} files ({size_kb:.1f} kB), deleting {deleted}")
    details = f"{len(uploads)} added or changed, {deleted} deleted"
    return _commit(ctx, plan, operations, parent, details)


def _commit(
    ctx: HubContext, plan: PushPlan, operations: dict[str, Any], parent: str | None, details: str
) -> str:
    summary = f"openenv push{' ' + plan.version if plan.version else ''}"
    with hub_call(ctx, "upload the files", repo_id=plan.repo_id):
        info = ctx.api.create_commit(
            plan.repo_id,
            list(operations.values()),
            commit_message=f"{summary}: {details}",
            repo_type="space",
            parent_commit=parent,
        )
    return str(info.oid)


def _set_variables(ctx: HubContext, plan: PushPlan, step: Callable[[str], None]) -> None:
    if not plan.variables:
        return
    step(f"Setting {len(plan.variables)} variables")
    with hub_call(ctx, "set variables", repo_id=plan.repo_id):
        for key, value in plan.variables.items():
            ctx.api.add_space_variable(plan.repo_id, key, value)


def _set_secrets(
    ctx: HubContext, plan: PushPlan, secrets: Mapping[str, str], step: Callable[[str], None]
) -> None:
    if not secrets:
        return
    step(f"Setting {len(secrets)} secrets")
    for key, value in secrets.items():
        try:
            with hub_call(ctx, f"set secret {key}", repo_id=plan.repo_id):
                ctx.api.add_space_secret(plan.repo_id, key, value)
        except HubError as exc:  # never let a value travel in a message or a traceback
            raise scrubbed(exc, value) from None


def _tag(ctx: HubContext, plan: PushPlan, commit: str | None, step: Callable[[str], None]) -> None:
    assert plan.version is not None
    step(f"Tagging version {plan.version}")
    with hub_call(ctx, "tag the version", repo_id=plan.repo_id, revision=plan.version):
        if plan.move_tag:
            ctx.api.delete_tag(plan.repo_id, tag=plan.version, repo_type="space")
        ctx.api.create_tag(plan.repo_id, tag=plan.version, revision=commit, repo_type="space")


def _state(plan: PushPlan, stage: str, commit: str | None, exc: HubError) -> str:
    """What the Space holds after a failure in ``stage``."""
    rid, short = plan.repo_id, (commit or "?")[:7]
    cause = f"{type(exc).__name__}: {exc}"
    if stage == "upload":
        held = "only the files the Hub puts in a new Space" if plan.create else "its previous files"
        made = " was created, but" if plan.create else ""
        return f"The Space {rid}{made} still holds {held}; the upload did not complete. ({cause})"
    if stage in ("variables", "secrets"):
        return (
            f"The files of {rid} are uploaded (commit {short}), but setting its {stage} failed, "
            f"so some may be missing. ({cause})"
        )
    if stage == "tag":
        return (
            f"The files, variables and secrets of {rid} are in place (commit {short}), but "
            f"version {plan.version} was not tagged. ({cause})"
        )
    return f"The push to {rid} is complete (commit {short}), but reading it back failed. ({cause})"
