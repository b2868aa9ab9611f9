"""A Space run on this machine at an exact commit: in a uv environment, or in Docker.

Both download the Space's files at the commit its revision names (a version tag, a branch or a
sha) into the cache, once per commit, and run them only with the user's consent
(``trust_remote_code=True``, ``OPENENV_TRUST_REMOTE_CODE=1``, or a "yes" at a terminal):

- ``uv``: :class:`~openenv_hub.providers.uv.UvProvider` installs the Space's package into an
  environment of its own, kept for that commit;
- ``docker``: the Space's Dockerfile is built (as the Hub builds it; ``BASE_IMAGE`` from
  ``$OPENENV_BASE_IMAGE`` and more build arguments from ``$OPENENV_BUILD_ARGS``, space-separated
  ``KEY=VALUE``, when set) into ``openenv-space-ns-name-HASH:COMMIT`` (:func:`space_image_tag`),
  once per commit, and
  :class:`~openenv_hub.providers.docker.DockerProvider` runs it.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from openenv_hub.providers.docker import DockerProvider, docker_client
from openenv_hub.providers.uv import UvProvider, cache_root

__all__ = [
    "SpaceSource",
    "download_space",
    "space_image_tag",
    "start_space_docker",
    "start_space_uv",
]


def space_image_tag(repo_id: str, commit: str, *, prefix: str = "openenv-space") -> str:
    """The image built from ``repo_id`` at ``commit``: one name per Space and commit.

    Docker names are lower case with few symbols, so the readable part alone would be the same
    for ``alice/my_env`` and ``alice-my/env`` (or ``Alice/env`` and ``alice/env``): a hash of
    the exact id follows it, and the tag is the full commit.

    Example:
        >>> space_image_tag("alice/my_env", "0" * 40)
        'openenv-space-alice-my-env-3130b422c07d:0000000000000000000000000000000000000000'
    """
    slug = "".join(c if c.isalnum() else "-" for c in repo_id.lower()).strip("-")
    digest = hashlib.sha256(repo_id.encode()).hexdigest()[:12]
    return f"{prefix}-{'-'.join(filter(None, slug.split('-')))}-{digest}:{commit}"


@dataclass(frozen=True)
class SpaceSource:
    """The files of ``repo_id`` at ``commit``, in ``path``."""

    repo_id: str
    commit: str
    path: Path

    @property
    def key(self) -> str:
        """A name for what is made from this commit (environments, images)."""
        digest = hashlib.sha256(f"{self.repo_id}@{self.commit}".encode()).hexdigest()[:16]
        return f"space-{digest}"

    @property
    def image_tag(self) -> str:
        """The image built from this commit (:func:`space_image_tag`)."""
        return space_image_tag(self.repo_id, self.commit)


def download_space(
    repo_id: str,
    revision: str | None,
    *,
    endpoint: str | None = None,
    token: str | None = None,
    trust_remote_code: bool = False,
) -> SpaceSource:
    """The Space's files at ``revision``, downloaded once per commit (after consent)."""
    from openenv_hub.hub._client import HubContext
    from openenv_hub.hub._errors import translate
    from openenv_hub.hub._install import ensure_trusted

    ctx = HubContext.create(endpoint=endpoint, token=token)
    with translate(
        endpoint=ctx.endpoint, repo_id=repo_id, revision=revision, action="find the Space"
    ):
        commit = str(ctx.api.space_info(repo_id, revision=revision).sha)
    ensure_trusted(repo_id, f"Run {repo_id} at {commit[:12]}", yes=trust_remote_code)
    source = SpaceSource(repo_id, commit, cache_root().parent / "spaces" / repo_id / commit)
    marker = source.path.with_name(f"{commit}.complete")
    source.path.parent.mkdir(parents=True, exist_ok=True)
    with open(source.path.with_name(f"{commit}.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not marker.is_file():
            shutil.rmtree(source.path, ignore_errors=True)
            with translate(endpoint=ctx.endpoint, repo_id=repo_id, action="download the Space"):
                ctx.api.snapshot_download(
                    repo_id, repo_type="space", revision=commit, local_dir=source.path
                )
            shutil.rmtree(source.path / ".cache", ignore_errors=True)
            marker.write_text(commit)
    return source


def start_space_uv(
    repo_id: str,
    revision: str | None = None,
    *,
    endpoint: str | None = None,
    token: str | None = None,
    trust_remote_code: bool = False,
    python: str | None = None,
    env: dict[str, str] | None = None,
    startup_timeout_s: float = 120.0,
) -> UvProvider:
    """Serve the Space at ``revision`` from a uv environment made for that commit."""
    source = download_space(
        repo_id, revision, endpoint=endpoint, token=token, trust_remote_code=trust_remote_code
    )
    return UvProvider.from_source(
        source.path, source.key, python=python, env=env, startup_timeout_s=startup_timeout_s
    )


def start_space_docker(
    repo_id: str,
    revision: str | None = None,
    *,
    endpoint: str | None = None,
    token: str | None = None,
    trust_remote_code: bool = False,
    env: dict[str, str] | None = None,
    secrets: dict[str, str] | None = None,
    base_image: str | None = None,
    build_args: tuple[str, ...] = (),
    startup_timeout_s: float = 120.0,
) -> DockerProvider:
    """Build the Space's image at ``revision`` (once per commit) and run it."""
    from openenv_hub.validation.docker import build_image

    source = download_space(
        repo_id, revision, endpoint=endpoint, token=token, trust_remote_code=trust_remote_code
    )
    client = docker_client()
    if not client.images.list(name=source.image_tag):
        build_image(
            source.path,
            source.image_tag,
            base_image=base_image or os.environ.get("OPENENV_BASE_IMAGE"),
            build_args=build_args or tuple(os.environ.get("OPENENV_BUILD_ARGS", "").split()),
            quiet=True,
            include_secrets=("*",),  # published on purpose: the Hub builds them in too
        )
    return DockerProvider.start(
        source.image_tag,
        env=env,
        secrets=secrets,
        pull="never",
        extra_labels={"openenv-hub.space": repo_id, "openenv-hub.commit": source.commit},
        startup_timeout_s=startup_timeout_s,
    )
