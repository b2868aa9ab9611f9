"""``push``: publish an environment folder as a Docker Space, in one commit.

Steps: stage and validate the bundle (nothing is sent if a check fails), check that the token
may write to the namespace, read the Space, refuse an existing version tag unless ``force``,
then build every upload operation (so a file the Hub would refuse stops the push before the
Space exists), create the Space if needed, upload every change and delete what was removed
locally in one commit, set variables and secrets, and tag the version. ``dry_run`` stops after
reading the Space and reports what would change, including every file left out and why.

Secrets go only when named (:mod:`openenv_hub.hub._secrets`): the manifest's ``secrets`` say
what the Space needs, and push reports those it still lacks.

If the Hub fails half-way, :class:`~openenv_hub.errors.PushIncompleteError` says what the Space
holds; running the same push again completes it.
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from openenv_hub.errors import HubPermissionError, InvalidVersionError, VersionExistsError
from openenv_hub.hub._access import check_write_access, read_only_token, whoami
from openenv_hub.hub._bundle import Bundle, stage_bundle
from openenv_hub.hub._client import HubContext, parse_repo_id
from openenv_hub.hub._diff import RemoteSpace, diff_files
from openenv_hub.hub._errors import hub_call
from openenv_hub.hub._plan import PushPlan
from openenv_hub.hub._publish import apply_push
from openenv_hub.hub._secrets import SecretChoice, choose_secrets
from openenv_hub.hub._target import PushTarget, choose_target, remember_push
from openenv_hub.hub._urls import SpaceUrls
from openenv_hub.hub._wheel_pin import plan_pin
from openenv_hub.model.manifest import MANIFEST_FILE, ManifestError

__all__ = ["PushResult", "check_version", "push"]

StepCallback = Callable[[str], None]
_VERSION = re.compile(r"^[0-9A-Za-z][0-9A-Za-z._+-]{0,127}$")


@dataclass
class PushResult:
    """The outcome of :func:`push`.

    Attributes:
        plan: What was (or would be) changed.
        dry_run: True when nothing was changed.
        url: The Space's page.
        app_url: Where the Space serves the environment.
        pip_install: The command that installs the environment's client ("" for an app Space).
        commit: The commit the Space is at after the push (``None`` for a dry run).
        target: Why the push went to this Space (named, remembered by the folder, or default).
    """

    plan: PushPlan
    dry_run: bool
    url: str
    app_url: str
    pip_install: str
    commit: str | None = None
    target: PushTarget | None = None

    @property
    def repo_id(self) -> str:
        return self.plan.repo_id


def push(
    path: str | Path = ".",
    repo_id: str | None = None,
    *,
    private: bool | None = None,
    token: str | None = None,
    variables: Mapping[str, str] | None = None,
    secrets: Mapping[str, str] | None = None,
    hardware: str | None = None,
    version: str | None = None,
    exclude: Sequence[str] = (),
    include_secrets: Sequence[str] = (),
    allow_hard_links: bool = False,
    confirm_secret: Callable[[str], bool] | None = None,
    dry_run: bool = False,
    force: bool = False,
    endpoint: str | None = None,
    bundle_wheel: bool = True,
    on_step: StepCallback | None = None,
    on_target: Callable[[PushTarget], None] | None = None,
) -> PushResult:
    """Publish the environment at ``path`` as the Docker Space ``repo_id``.

    Args:
        path: The environment folder (with ``openenv.yaml``), or an app Space's folder (its
            manifest says ``kind: app``: checked and carded as an app, not an environment).
        repo_id: ``namespace/name``; default the Space the folder was last pushed to or pulled
            from (``.openenv/space.json``), else ``<your user name>/<manifest name>``.
        private: Make the Space private (``True``) or public (``False``); default: a new Space
            public, an existing one as it is.
        token: Hub token; default ``HF_TOKEN`` or the saved login.
        variables: Space variables; override the manifest's ``variables`` defaults.
        secrets: Space secrets to set, ``{name: value}``: the only way a secret goes without
            a question. The manifest's ``secrets`` are names the Space needs; their values are
            never read from the environment unless ``confirm_secret`` says yes.
        hardware: Space hardware flavour, e.g. ``cpu-basic``.
        version: Tag the pushed commit with this version (refused if it exists, unless ``force``).
        exclude: More ``.gitignore``-style patterns to leave out.
        include_secrets: Secret-looking files to upload anyway (paths or patterns); others
            (``*.pem``, ``*.key``, ``id_rsa*``, ...) are left out and listed.
        allow_hard_links: Upload files that have more than one hard link (left out and listed
            otherwise: another name of such a file may be outside the folder).
        confirm_secret: Asked, at a terminal only and never in a dry run, whether to upload a
            secret the manifest names, the Space lacks and the environment holds (a Hub token
            is never asked about). ``None`` uploads none of them.
        dry_run: Report what would change; change nothing.
        force: Move an existing version tag to this push.
        endpoint: The Hub; default ``HF_ENDPOINT`` or https://huggingface.co.
        bundle_wheel: Bundle the openenv-hub wheel when it is a development install.
        on_step: Called with a short description before each step (progress display).
        on_target: Called with the Space chosen and why, once the folder passed its checks
            and before anything is sent.

    Raises:
        EnvironmentValidationError: The environment failed a static check; nothing was sent.
        VersionExistsError: ``version`` is tagged already and ``force`` is not set.
        PushIncompleteError: The Hub failed half-way; the message says what the Space holds.
        HubPermissionError: The token may not write to the namespace; nothing was sent.
        HubConflictError: No ``repo_id``, and the folder comes from another Hub.
        HubError: Any other Hub failure (bad token, network).
    """
    step = on_step or (lambda _message: None)
    source = _env_dir(Path(path))
    if repo_id is not None:
        parse_repo_id(repo_id)
    if version is not None:
        check_version(version)
    ctx = HubContext.create(endpoint=endpoint, token=token, required=True, action="push")
    with tempfile.TemporaryDirectory(prefix="openenv-push-") as tmp:
        step(f"Checking {source.name}")
        bundle = stage_bundle(
            source,
            Path(tmp) / source.name,
            exclude=exclude,
            include_secrets=include_secrets,
            allow_hard_links=allow_hard_links,
            bundle_wheel=bundle_wheel,
        )
        user = whoami(ctx)
        target = choose_target(
            source, repo_id, user_name=user["name"], manifest_name=bundle.manifest.name,
            endpoint=ctx.endpoint,
        )  # fmt: skip
        rid = target.repo_id
        _check_access(user, target, ctx.endpoint)
        if on_target is not None:
            on_target(target)
        step(f"Reading Space {rid}")
        remote = read_space(ctx, rid, with_tags=version is not None)
        if version is not None and version in remote.tags and not force:
            raise VersionExistsError(rid, version)
        urls = SpaceUrls(ctx.endpoint, rid)
        pip_line = urls.pip_line(version) if bundle.manifest.is_environment else ""
        pin = plan_pin(ctx, bundle, remote, urls)
        chosen = choose_secrets(
            bundle.manifest.secrets, secrets, repo_id=rid, on_space=remote.secrets,
            token=ctx.token, confirm=None if dry_run else confirm_secret,
        )  # fmt: skip
        plan = _plan(bundle, remote, rid, private, variables, chosen, hardware, version)
        plan.pin = pin
        if dry_run:
            return PushResult(
                plan, True, urls.web, urls.app_url(remote.info), pip_line, None, target
            )
        commit, info = apply_push(ctx, bundle, plan, remote, chosen.values, step, urls)
    remember_push(source, endpoint=ctx.endpoint, repo_id=rid)
    return PushResult(plan, False, urls.web, urls.app_url(info), pip_line, commit, target)


def _check_access(user: dict[str, Any], target: PushTarget, endpoint: str) -> None:
    """:func:`check_write_access`, saying so when the folder remembers a Space of someone else."""
    try:
        check_write_access(user, target.repo_id, endpoint=endpoint)
    except HubPermissionError as exc:
        remembered_space = target.link is not None and target.link.remembered == target.repo_id
        if not remembered_space or read_only_token(user):  # no other name helps a read token
            raise
        name = target.repo_id.split("/")[1]
        raise HubPermissionError(
            f"{target.repo_id} is {target.reason}, and it is not yours to write. {exc}",
            repo_id=target.repo_id,
            hint=f"Push your own copy with --repo-id {user.get('name') or 'YOUR_NAME'}/{name}, "
            f"or fork the Space first (openenv fork {target.repo_id}).",
        ) from None


def _env_dir(path: Path) -> Path:
    if not (path / MANIFEST_FILE).is_file():
        raise ManifestError(
            f"not found in {path.resolve()}: not an environment folder",
            path=path / MANIFEST_FILE,
            hint="Push an environment folder, or create one with 'openenv init NAME'.",
        )
    return path.resolve()


def check_version(version: str) -> None:
    """Raise :class:`InvalidVersionError` unless ``version`` can name a tag on the Hub."""
    if not _VERSION.match(version) or ".." in version or version.endswith((".", ".lock")):
        raise InvalidVersionError(version)


def read_space(ctx: HubContext, repo_id: str, *, with_tags: bool = False) -> RemoteSpace:
    """The Space as it is now; ``exists`` is False if there is none (visible to the token)."""
    from openenv_hub.errors import SpaceNotFoundError

    api = ctx.api
    try:
        with hub_call(ctx, "read the Space", repo_id=repo_id):
            remote = RemoteSpace.from_info(api.space_info(repo_id, files_metadata=True))
            if with_tags:
                refs = api.list_repo_refs(repo_id, repo_type="space")
                remote.tags = {tag.name: tag.target_commit for tag in refs.tags}
    except SpaceNotFoundError:
        return RemoteSpace(exists=False)
    remote.secrets = _secret_names(api, repo_id)
    return remote


def _secret_names(api: Any, repo_id: str) -> set[str]:
    reader = getattr(api, "get_space_secrets", None)  # huggingface_hub >= 2.0
    if reader is None:
        return set()
    try:
        return set(reader(repo_id))
    except Exception:  # only used to say which declared secrets are still missing
        return set()


def _plan(
    bundle: Bundle,
    remote: RemoteSpace,
    repo_id: str,
    private: bool | None,
    variables: Mapping[str, str] | None,
    secrets: SecretChoice,
    hardware: str | None,
    version: str | None,
) -> PushPlan:
    manifest = bundle.manifest
    merged = {key: str(value) for key, value in manifest.variables.items()}
    merged.update(variables or {})
    return PushPlan(
        repo_id=repo_id,
        create=not remote.exists,
        private=remote.private if private is None else private,
        files=diff_files(bundle.root, bundle.files, remote.files),
        card_changes=bundle.card_changes,
        scorecard=bundle.scorecard,
        wheels=bundle.wheels,
        ignored=bundle.ignored,
        skipped=bundle.skipped,
        large=bundle.large,
        variables=merged,
        secrets=sorted(secrets.values),
        missing_secrets=secrets.missing,
        hub_token_secrets=secrets.hub_tokens,
        hardware=hardware or (manifest.hardware if not remote.exists else None),
        version=version,
        move_tag=version is not None and version in remote.tags,
    )
