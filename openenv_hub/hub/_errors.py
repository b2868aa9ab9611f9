"""The one place where errors of the Hub client become openenv-hub errors with a hint.

``huggingface_hub`` raises its own classes (``RepositoryNotFoundError``, ``HfHubHTTPError`` with
a status, ...) and its HTTP library raises transport errors (httpx, httpx2 or requests, depending
on its version). :func:`hub_error` maps them, by the classes themselves (a class merely named
like one of them is not one), the most specific first. :func:`hub_call` applies it to the block
of one operation on a :class:`~openenv_hub.hub.HubContext`; :func:`translate` is the same for
callers that hold only an endpoint.
"""

from __future__ import annotations

import importlib
import socket
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass, replace
from functools import cache
from types import TracebackType
from typing import TYPE_CHECKING, Any

from openenv_hub.errors import (
    DatasetNotFoundError,
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

if TYPE_CHECKING:
    from openenv_hub.hub._client import HubContext

__all__ = ["hub_call", "hub_error", "is_network_error", "scrubbed", "translate"]

#: The transport errors of each HTTP library the Hub client may use (module, class names).
_TRANSPORT_CLASSES = (
    ("httpx", ("TransportError",)),
    ("httpx2", ("TransportError",)),
    ("requests.exceptions", ("ConnectionError", "Timeout")),
)


@dataclass(frozen=True)
class _Failure:
    """One failed operation, as the messages of :func:`hub_error` speak of it."""

    exc: BaseException
    endpoint: str
    repo_id: str | None
    revision: str | None
    doing: str  # " (action)", or "" when no action was named
    repo_type: str = "space"

    @property
    def kind(self) -> str:
        """``Space`` or ``dataset`` (or ``model``), as a message names the repository."""
        return "Space" if self.repo_type == "space" else self.repo_type

    @property
    def what(self) -> str:
        return f"{self.kind.capitalize()} {self.repo_id}" if self.repo_id else "the Hub"


def _no_token(f: _Failure) -> HubError:
    return HubAuthenticationError(f"No Hugging Face token found{f.doing}.", hint=LOGIN_HINT)


def _offline(f: _Failure) -> HubError:
    return HubConnectionError(
        f"Cannot reach {f.endpoint}{f.doing}: HF_HUB_OFFLINE is set.",
        endpoint=f.endpoint,
        repo_id=f.repo_id,
        hint="Unset HF_HUB_OFFLINE to use the Hub.",
    )


def _invalid_id(f: _Failure) -> HubError:
    return InvalidRepoIdError(
        f"{f.repo_id!r} is not a valid {f.kind} id: {f.exc}",
        repo_id=f.repo_id,
        hint="Use 'namespace/name', e.g. 'alice/echo_env'.",
    )


def _no_revision(f: _Failure) -> HubError:
    return RevisionNotFoundError(
        f"{f.what} has no version, branch or commit {f.revision!r}.",
        repo_id=f.repo_id,
        revision=f.revision or "?",
        hint=f"List its versions with 'openenv versions {f.repo_id}'."
        if f.repo_type == "space"
        else "Check the revision: a branch, a tag or a commit of the repository.",
    )


def _no_repo(f: _Failure) -> HubError:
    error = SpaceNotFoundError if f.repo_type == "space" else DatasetNotFoundError
    return error(
        f"{f.what} was not found on {f.endpoint}{f.doing}.",
        repo_id=f.repo_id,
        hint=f"Check the id. If the {f.kind} is private, use a token that can read it: "
        + LOGIN_HINT,
    )


def _http(f: _Failure) -> HubError:
    status = _status(f.exc)
    if status is None:
        return HubError(f"The Hub refused the request{f.doing}: {_server_message(f.exc)}")
    return _from_status(status, f)


def _unreachable(f: _Failure) -> HubError:
    return HubConnectionError(
        f"Could not reach the Hub at {f.endpoint}{f.doing}: {type(f.exc).__name__}: {f.exc}",
        endpoint=f.endpoint,
        repo_id=f.repo_id,
        hint="Check your network connection (and HF_ENDPOINT), then run the command again.",
    )


def _not_cached(f: _Failure) -> HubError:
    """A download that could neither ask the Hub nor find a copy on disk: what stopped it asking
    (the error it was raised from) decides, e.g. a Hub that does not answer."""
    cause = f.exc.__cause__
    if cause is not None and (mapped := _mapped(replace(f, exc=cause))) is not None:
        return mapped
    return HubError(
        f"{f.what} could not be read from {f.endpoint}{f.doing}, and no copy of it is on disk.",
        repo_id=f.repo_id,
        hint="Check your network connection (and HF_ENDPOINT), then run the command again.",
    )


#: huggingface_hub's error classes (in ``huggingface_hub.errors``) and what each becomes. A
#: class not listed maps as its nearest listed base class does.
_HUB_CLASSES: dict[str, Callable[[_Failure], HubError]] = {
    "LocalEntryNotFoundError": _not_cached,
    "LocalTokenNotFoundError": _no_token,
    "OfflineModeIsEnabled": _offline,
    "HFValidationError": _invalid_id,
    "RevisionNotFoundError": _no_revision,
    "RepositoryNotFoundError": _no_repo,  # GatedRepoError too, its subclass
    "HfHubHTTPError": _http,
}


@cache
def _mapped_classes() -> dict[type[BaseException], Callable[[_Failure], HubError]]:
    """The classes of :data:`_HUB_CLASSES` and the HTTP libraries' transport errors, imported
    (a library that is not installed raises none of its errors)."""
    mapped: dict[type[BaseException], Callable[[_Failure], HubError]] = {}
    hub_errors = _module("huggingface_hub.errors")
    for name, factory in _HUB_CLASSES.items():
        cls = getattr(hub_errors, name, None)
        if isinstance(cls, type):
            mapped[cls] = factory
    for module_name, names in _TRANSPORT_CLASSES:
        module = _module(module_name)
        for name in names:
            cls = getattr(module, name, None)
            if isinstance(cls, type):
                mapped.setdefault(cls, _unreachable)
    return mapped


def _module(name: str) -> Any:
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


def hub_call(
    ctx: HubContext,
    action: str,
    *,
    repo_id: str | None = None,
    revision: str | None = None,
    repo_type: str = "space",
) -> AbstractContextManager[None]:
    """The block of one operation on the Hub of ``ctx``: its errors become :class:`HubError`.

    ``action`` says what the block does ("list versions"); messages put it in parentheses and
    name the repository by its ``repo_type`` ("Space alice/echo", "Dataset alice/runs").

    Example::

        with hub_call(ctx, "list versions", repo_id=repo_id):
            refs = ctx.api.list_repo_refs(repo_id, repo_type="space")
    """
    return translate(
        endpoint=ctx.endpoint, repo_id=repo_id, revision=revision, action=action,
        repo_type=repo_type,
    )  # fmt: skip


def translate(
    *,
    endpoint: str,
    repo_id: str | None = None,
    revision: str | None = None,
    action: str = "",
    repo_type: str = "space",
) -> AbstractContextManager[None]:
    """Re-raise Hub client errors inside the block as :class:`~openenv_hub.errors.HubError`.

    The client's own error stays reachable as ``__context__`` but is not chained for display:
    a traceback ends with the one clear message, not 50 lines of the client's first.
    """
    return _Translated(endpoint, repo_id, revision, action, repo_type)


@dataclass(frozen=True)
class _Translated(AbstractContextManager[None]):
    """The block of :func:`translate` (a class, so a traceback shows one frame of it)."""

    endpoint: str
    repo_id: str | None
    revision: str | None
    action: str
    repo_type: str = "space"

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if not isinstance(exc, Exception) or isinstance(exc, OpenEnvError):
            return
        mapped = hub_error(
            exc,
            endpoint=self.endpoint,
            repo_id=self.repo_id,
            revision=self.revision,
            action=self.action,
            repo_type=self.repo_type,
        )
        if mapped is not None:
            raise mapped from None


def hub_error(
    exc: BaseException,
    *,
    endpoint: str,
    repo_id: str | None = None,
    revision: str | None = None,
    action: str = "",
    repo_type: str = "space",
) -> HubError | None:
    """The :class:`HubError` for an exception of the Hub client, or ``None`` if it is not one.

    The first class of ``type(exc).__mro__`` that is mapped decides: a subclass of a mapped
    class maps as that class does, and a more specific class before its bases.
    """
    doing = f" ({action})" if action else ""
    return _mapped(_Failure(exc, endpoint, repo_id, revision, doing, repo_type))


def _mapped(f: _Failure) -> HubError | None:
    mapped = _mapped_classes()
    factory = next((mapped[cls] for cls in type(f.exc).__mro__ if cls in mapped), None)
    if factory is None and isinstance(f.exc, (ConnectionError, TimeoutError, socket.gaierror)):
        factory = _unreachable
    return None if factory is None else factory(f)


def _from_status(status: int, f: _Failure) -> HubError:
    endpoint, repo_id, doing = f.endpoint, f.repo_id, f.doing
    detail = _server_message(f.exc)
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
            hint=f"If the {f.kind} changed meanwhile, run the command again; if the target exists "
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
    return any(_mapped_classes().get(cls) is _unreachable for cls in type(exc).__mro__)


def scrubbed(exc: HubError, *secrets: str | None) -> HubError:
    """``exc`` with each secret replaced by ``***`` in its message and hint (raise it ``from None``)."""
    exc.message = redact(exc.message, *secrets)
    exc.args = (exc.message,)
    exc.hint = redact(exc.hint, *secrets)
    return exc.with_traceback(None)
