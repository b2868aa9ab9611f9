"""Errors of Hugging Face Hub operations."""

from __future__ import annotations

from openenv_hub.errors._base import OpenEnvError


class HubError(OpenEnvError):
    """A Hugging Face Hub operation failed. ``hint`` says what to do about it."""

    def __init__(self, message: str, *, repo_id: str | None = None, hint: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.repo_id = repo_id
        self.hint = hint


class InvalidRepoIdError(HubError, ValueError):
    """A repo id that is not ``namespace/name``."""


class HubAuthenticationError(HubError):
    """No token was found, or the Hub did not accept it."""


class HubPermissionError(HubError, PermissionError):
    """The token may not write to this namespace or Space."""


class SpaceNotFoundError(HubError, LookupError):
    """The Space does not exist, or it is private and the token cannot see it."""


class DatasetNotFoundError(HubError, LookupError):
    """The dataset does not exist, or it is private and the token cannot see it."""


class SpaceNotRunningError(HubError):
    """The Space exists, but its app is not serving (it failed, or was paused or stopped)."""

    def __init__(self, repo_id: str, stage: str, *, reason: str = "", hint: str = "") -> None:
        self.stage = stage
        self.reason = reason  # the Hub's own message for the stage (``errorMessage``), if any
        because = f": {reason}" if reason else "."
        super().__init__(
            f"Space {repo_id} is not running (stage {stage}){because}", repo_id=repo_id, hint=hint
        )


class RevisionNotFoundError(HubError, LookupError):
    """The Space has no such version (tag), branch or commit."""

    def __init__(
        self, message: str, *, repo_id: str | None = None, revision: str, hint: str = ""
    ) -> None:
        self.revision = revision
        super().__init__(message, repo_id=repo_id, hint=hint)


class RevisionNotServedError(HubError):
    """A running Space serves its latest commit only; an older revision must run locally."""

    def __init__(self, repo_id: str, revision: str, running: str) -> None:
        self.revision = revision
        super().__init__(
            f"Space {repo_id} runs its latest commit ({running[:7]}), not {revision}.",
            repo_id=repo_id,
            hint="Run that version on this machine: from_hub(..., revision=..., runtime='uv') "
            "(or runtime='docker', or local=True).",
        )


class VersionExistsError(HubError):
    """The version tag exists already; pushing it again needs ``force``."""

    def __init__(self, repo_id: str, version: str) -> None:
        self.version = version
        super().__init__(
            f"Version {version} of {repo_id} exists already; nothing was uploaded.",
            repo_id=repo_id,
            hint="Bump the version (e.g. in openenv.yaml and --version), or move the tag "
            "with --force.",
        )


class HubConflictError(HubError):
    """The target exists already, or the Space changed while we worked on it."""


class HubConnectionError(HubError, ConnectionError):
    """The Hub could not be reached, or it failed to answer."""

    def __init__(
        self, message: str, *, endpoint: str, repo_id: str | None = None, hint: str = ""
    ) -> None:
        self.endpoint = endpoint
        super().__init__(message, repo_id=repo_id, hint=hint)


class PushIncompleteError(HubError):
    """A push stopped half-way. The message says what the Space holds now; ``cause`` why."""

    def __init__(self, message: str, *, repo_id: str, stage: str, cause: HubError) -> None:
        self.stage = stage
        self.cause = cause
        super().__init__(
            message,
            repo_id=repo_id,
            hint="Run the same command again: push uploads what is missing and removes what "
            "was deleted." + (f" ({cause.hint})" if cause.hint else ""),
        )


class InstallError(HubError):
    """``pip install`` of an environment from the Hub failed."""

    def __init__(
        self, message: str, *, repo_id: str, revision: str | None = None, hint: str = ""
    ) -> None:
        self.revision = revision
        super().__init__(message, repo_id=repo_id, hint=hint)
