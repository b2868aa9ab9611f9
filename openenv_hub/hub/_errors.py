"""The one place where errors of the Hub client become openenv-hub errors with a hint.

``huggingface_hub`` raises its own classes (``RepositoryNotFoundError``, ``HfHubHTTPError`` with
a status, ...) and its HTTP library raises transport errors (httpx, httpx2 or requests, depending
on its version). :func:`hub_error` maps all of them; :func:`translate` applies it to a block.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from openenv_hub.errors import (
    HubAuthenticationError,
    HubConflictError,
    HubConnectionError,
    HubError,
    HubPermissionError,
    InvalidRepoIdError,
    OpenEnvError,
    RevisionNotFoundError,
    SpaceNotFoundError,
)
from openenv_hub.hub._client import LOGIN_HINT
from openenv_hub.hub._urls import redact

__all__ = ["hub_error", "is_network_error", "scrubbed", "translate"]

_TRANSPORT_MODULES = {"httpx", "httpx2", "requests", "urllib3"}
_TRANSPORT_NAMES = {"TransportError", "RequestException", "ConnectionError", "TimeoutException"}


@contextmanager
def translate(
    *, endpoint: str, repo_id: str | None = None, revision: str | None = None, action: str = ""
) -> Iterator[None]:
    """Re-raise Hub client errors inside the block as :class:`~openenv_hub.errors.HubError`.

    The client's own error stays reachable as ``__context__`` but is not chained for display:
    a traceback ends with the one clear message, not 50 lines of the client's first.
    """
    try:
        yield
    except OpenEnvError:
        raise
    except Exception as exc:
        mapped = hub_error(
            exc, endpoint=endpoint, repo_id=repo_id, revision=revision, action=action
        )
        if mapped is None:
            raise
        raise mapped from None


def hub_error(
    exc: BaseException,
    *,
    endpoint: str,
    repo_id: str | None = None,
    revision: str | None = None,
    action: str = "",
) -> HubError | None:
    """The :class:`HubError` for an exception of the Hub client, or ``None`` if it is not one."""
    kind = {cls.__name__ for cls in type(exc).__mro__}
    what = f"Space {repo_id}" if repo_id else "the Hub"
    doing = f" ({action})" if action else ""
    if "LocalTokenNotFoundError" in kind:
        return HubAuthenticationError(f"No Hugging Face token found{doing}.", hint=LOGIN_HINT)
    if "OfflineModeIsEnabled" in kind:
        return HubConnectionError(
            f"Cannot reach {endpoint}{doing}: HF_HUB_OFFLINE is set.",
            endpoint=endpoint,
            repo_id=repo_id,
            hint="Unset HF_HUB_OFFLINE to use the Hub.",
        )
    if "HFValidationError" in kind:
        return InvalidRepoIdError(
            f"{repo_id!r} is not a valid Space id: {exc}",
            repo_id=repo_id,
            hint="Use 'namespace/name', e.g. 'alice/echo_env'.",
        )
    if "RevisionNotFoundError" in kind:
        return RevisionNotFoundError(
            f"{what} has no version, branch or commit {revision!r}.",
            repo_id=repo_id,
            revision=revision or "?",
            hint=f"List its versions with 'openenv versions {repo_id}'.",
        )
    if "RepositoryNotFoundError" in kind:
        return SpaceNotFoundError(
            f"{what} was not found on {endpoint}{doing}.",
            repo_id=repo_id,
            hint="Check the id. If the Space is private, use a token that can read it: "
            + LOGIN_HINT,
        )
    status = _status(exc)
    if status is not None:
        return _from_status(status, exc, endpoint=endpoint, repo_id=repo_id, doing=doing)
    if is_network_error(exc):
        return HubConnectionError(
            f"Could not reach the Hub at {endpoint}{doing}: {type(exc).__name__}: {exc}",
            endpoint=endpoint,
            repo_id=repo_id,
            hint="Check your network connection (and HF_ENDPOINT), then run the command again.",
        )
    return None


def _from_status(
    status: int, exc: BaseException, *, endpoint: str, repo_id: str | None, doing: str
) -> HubError:
    detail = _server_message(exc)
    if status == 401:
        return HubAuthenticationError(
            f"The Hub at {endpoint} did not accept the token{doing}: {detail}",
            repo_id=repo_id,
            hint=LOGIN_HINT,
        )
    if status == 403:
        namespace = repo_id.split("/")[0] if repo_id else "this namespace"
        return HubPermissionError(
            f"The token may not do this{doing}: {detail}",
            repo_id=repo_id,
            hint=f"Use a token with write access to '{namespace}', or publish under your own "
            "namespace with --repo-id YOUR_NAME/NAME.",
        )
    if status in (409, 412):
        return HubConflictError(
            f"Conflict on the Hub{doing}: {detail}",
            repo_id=repo_id,
            hint="If the Space changed meanwhile, run the command again; if the target exists "
            "already, choose another --repo-id.",
        )
    if status >= 500 or status in (408, 429):
        return HubConnectionError(
            f"The Hub at {endpoint} failed{doing} (HTTP {status}): {detail}",
            endpoint=endpoint,
            repo_id=repo_id,
            hint="The Hub may be busy or down; try again in a minute.",
        )
    return HubError(
        f"The Hub refused the request{doing} (HTTP {status}): {detail}", repo_id=repo_id
    )


def _status(exc: BaseException) -> int | None:
    response: Any = getattr(exc, "response", None)
    status = getattr(response, "status_code", None)
    return status if isinstance(status, int) else None


def _server_message(exc: BaseException) -> str:
    message = getattr(exc, "server_message", None)
    if isinstance(message, str) and message.strip():
        return message.strip().splitlines()[0]
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


def is_network_error(exc: BaseException) -> bool:
    """Whether ``exc`` is a transport failure (no answer, reset, timeout) of any HTTP library."""
    if isinstance(exc, (ConnectionError, TimeoutError, socket.gaierror)):
        return True
    return any(
        cls.__module__.split(".")[0] in _TRANSPORT_MODULES and cls.__name__ in _TRANSPORT_NAMES
        for cls in type(exc).__mro__
    )


def scrubbed(exc: HubError, *secrets: str | None) -> HubError:
    """``exc`` with each secret replaced by ``***`` in its message and hint (raise it ``from None``)."""
    exc.message = redact(exc.message, *secrets)
    exc.args = (exc.message,)
    exc.hint = redact(exc.hint, *secrets)
    return exc.with_traceback(None)
