"""The one error type raised by LocalHub handlers, and its HTTP rendering.

The real Hub tells clients *which* thing is missing through the ``X-Error-Code``
header; ``huggingface_hub`` maps it to ``RepositoryNotFoundError``,
``RevisionNotFoundError`` and ``RemoteEntryNotFoundError``. Every failure in
LocalHub is a :class:`HubError` so that header is never forgotten.

Layer: runtimes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from starlette.responses import JSONResponse

INVALID_CREDENTIALS = "Invalid credentials in Authorization header"


class HubError(Exception):
    """A client-visible failure with an HTTP status and an optional Hub error code.

    Attributes:
        status: HTTP status code of the response.
        message: Human-readable message, sent as JSON ``error`` and ``X-Error-Message``.
        code: Value of the ``X-Error-Code`` header (``RepoNotFound``...), if any.
        headers: Extra response headers.
        extra: Extra keys merged into the JSON body (e.g. ``url`` on a 409).
    """

    def __init__(
        self,
        status: int,
        message: str,
        *,
        code: str | None = None,
        headers: Mapping[str, str] | None = None,
        extra: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.code = code
        self.headers = dict(headers or {})
        self.extra = dict(extra or {})

    @classmethod
    def repo_not_found(cls, repo_id: str) -> HubError:
        """Missing repo, or a private one the caller may not see (the Hub does not tell)."""
        return cls(404, f"Repository not found: {repo_id}", code="RepoNotFound")

    @classmethod
    def revision_not_found(cls, revision: str) -> HubError:
        """Unknown branch, tag or commit."""
        return cls(404, f"Invalid rev id: {revision}", code="RevisionNotFound")

    @classmethod
    def entry_not_found(cls, path: str, commit: str | None = None) -> HubError:
        """Missing file or folder; ``commit`` lets the client cache the miss."""
        headers = {"X-Repo-Commit": commit} if commit else None
        return cls(404, f"Entry not found: {path}", code="EntryNotFound", headers=headers)

    @classmethod
    def unauthorized(cls, message: str = INVALID_CREDENTIALS) -> HubError:
        """No usable token where one is required."""
        return cls(401, message)

    @classmethod
    def forbidden(cls, message: str) -> HubError:
        """Authenticated, but without the rights for this action."""
        return cls(403, message)

    @classmethod
    def bad_request(cls, message: str) -> HubError:
        """Malformed or unsupported request."""
        return cls(400, message)


def _header_safe(text: str) -> str:
    """Return ``text`` on one latin-1 line, as HTTP headers require."""
    one_line = " ".join(text.split())
    return one_line.encode("latin-1", "replace").decode("latin-1")[:500]


def error_response(error: HubError) -> JSONResponse:
    """Render ``error`` the way the Hub does: JSON body plus ``X-Error-*`` headers."""
    headers = {"X-Error-Message": _header_safe(error.message), **error.headers}
    if error.code:
        headers["X-Error-Code"] = error.code
    body = {"error": error.message, **error.extra}
    return JSONResponse(body, status_code=error.status, headers=headers)
