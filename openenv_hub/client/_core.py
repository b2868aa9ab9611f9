"""What the async and sync clients share and that does no I/O: options, URLs, parsing replies
into the client's types, and the wording of what a transport ran into. The protocol's
:class:`~openenv_hub.protocol.connection.ClientConnection` encodes requests, reads replies and
tracks whether an episode was lost with a connection."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from typing import Any, ClassVar, Generic, TypeVar

from websockets.exceptions import InvalidHandshake, InvalidStatus, InvalidURI
from websockets.frames import Close

from openenv_hub.errors import (
    ConfigurationError,
    ConnectError,
    EnvTimeoutError,
    MessageTooLargeError,
    OpenEnvError,
    ServerReplyError,
    TransportError,
)
from openenv_hub.protocol.codes import CLOSE_MESSAGE_TOO_BIG
from openenv_hub.protocol.connection import REPLY_TYPES, ClientConnection
from openenv_hub.protocol.replies import reply_data
from openenv_hub.protocol.urls import is_loopback, web_ui_path_hint
from openenv_hub.shown_urls import hide_credentials, shown
from openenv_hub.types import Action, State, StepResult

ActT = TypeVar("ActT")
ObsT = TypeVar("ObsT")
StateT = TypeVar("StateT")

#: What a timeout raises: on Python 3.10, asyncio's TimeoutError is not the builtin one.
TIMEOUT_ERRORS: tuple[type[Exception], ...] = (TimeoutError, asyncio.TimeoutError)
#: What opening a connection raises when it fails.
CONNECT_ERRORS: tuple[type[Exception], ...] = (
    OSError,
    InvalidHandshake,
    InvalidURI,
    *TIMEOUT_ERRORS,
)


def connect_error(url: str, exc: Exception) -> ConnectError:
    """The :class:`ConnectError` for a failed opening handshake, with the HTTP status and body
    when the server answered with a refusal (e.g. a Space whose app is not running)."""
    if isinstance(exc, InvalidStatus):
        status = exc.response.status_code
        body = (exc.response.body or b"").decode(errors="replace").strip()[:1000]
        explained = _explanation(body)
        said = f": {explained}" if explained else ""
        hint = web_ui_path_hint(url)
        if hint:
            said = f"{said.rstrip('.')}. {hint}"
        return ConnectError(
            f"Failed to connect to {shown(url)}: the server answered HTTP {status}{said}",
            url=url,
            status_code=status,
            body=body,
        )
    said = hide_credentials(str(exc), url)
    return ConnectError(f"Failed to connect to {shown(url)}: {said}", url=url)


def _explanation(body: str) -> str:
    """What a refusal's body says: the message of a JSON error body (``{"error": ...}``,
    ``{"detail": ...}``, ``{"message": ...}``), else the body as it is."""
    try:
        data = json.loads(body)
    except ValueError:
        return body
    if isinstance(data, dict):
        for key in ("error", "detail", "message"):
            if isinstance(data.get(key), str) and data[key].strip():
                return str(data[key]).strip()
    return body


def provider_headers(provider: object, url: str | None = None) -> dict[str, str]:
    """The headers a provider's servers want with each connection (a token its proxy checks),
    or none: those of the replica at ``url`` when the provider gives each its own
    (``headers_for(url)``), else the provider's ``headers``."""
    per_replica = getattr(provider, "headers_for", None)
    headers = per_replica(url) if url is not None and callable(per_replica) else None
    headers = headers if headers is not None else getattr(provider, "headers", None)
    return dict(headers) if headers else {}


@dataclass(frozen=True)
class ClientOptions:
    """Connection options shared by the async and sync clients."""

    connect_timeout_s: float = 10.0
    message_timeout_s: float | None = 60.0
    ping_interval_s: float | None = 20.0
    ping_timeout_s: float | None = 20.0
    max_message_size_mb: float = 100.0
    #: Sent with the opening handshake, e.g. a token for a server behind a proxy that checks
    #: one (never put in the URL, and never shown in a repr).
    headers: tuple[tuple[str, str], ...] = field(default=(), repr=False)

    def __post_init__(self) -> None:
        for name in ("connect_timeout_s", "max_message_size_mb"):
            if not getattr(self, name) > 0:
                raise ConfigurationError(
                    f"{name} must be greater than 0, not {getattr(self, name)}."
                )
        for name in ("message_timeout_s", "ping_interval_s", "ping_timeout_s"):
            value = getattr(self, name)
            if value is not None and not value > 0:
                raise ConfigurationError(f"{name} must be greater than 0, or None, not {value}.")

    def connect_kwargs(self, url: str) -> dict[str, Any]:
        return {
            "open_timeout": self.connect_timeout_s,
            "ping_interval": self.ping_interval_s,
            "ping_timeout": self.ping_timeout_s,
            "max_size": int(self.max_message_size_mb * 1024 * 1024),
            "compression": None,
            "proxy": None if is_loopback(url) else True,
            "additional_headers": dict(self.headers) or None,
        }


def observation_fields(payload: dict[str, Any]) -> dict[str, Any]:
    """The observation's own fields plus ``reward`` and ``done`` from a reset/step payload."""
    fields = dict(payload.get("observation") or {})
    fields["reward"] = payload.get("reward")
    fields["done"] = payload.get("done", False)
    return fields


def step_result(payload: dict[str, Any], observation: Any) -> StepResult[Any]:
    """The :class:`StepResult` of a reset/step payload, around ``observation`` (already parsed);
    ``metadata`` is the payload's, else the observation's."""
    observed = payload.get("observation")
    metadata = payload.get("metadata")
    if metadata is None and isinstance(observed, dict):
        metadata = observed.get("metadata") or None
    return StepResult(
        observation=observation,
        reward=payload.get("reward"),
        done=bool(payload.get("done", False)),
        metadata=metadata,
    )


class Codec(Generic[ActT, ObsT, StateT]):
    """Turns actions into step payloads and replies into typed results.

    Subclasses set ``action_type``, ``observation_type`` and ``state_type``, or override the
    three hooks for full control. A client that names no observation type speaks plain dicts
    (observations and state); one that names an observation type but no state type gets
    :class:`~openenv_hub.types.State`.
    """

    action_type: ClassVar[type[Any]] = Action
    observation_type: ClassVar[type[Any] | None] = None
    state_type: ClassVar[type[Any] | None] = None

    def _step_payload(self, action: ActT) -> dict[str, Any]:
        if isinstance(action, dict):
            return action
        if hasattr(action, "model_dump"):
            payload: dict[str, Any] = action.model_dump()
            if not payload.get("metadata"):
                payload.pop("metadata", None)
            return payload
        raise TypeError(
            f"Cannot send {type(action).__name__} as an action; pass a pydantic model or a dict"
        )

    def _parse_result(self, payload: dict[str, Any]) -> StepResult[ObsT]:
        if self.observation_type is None:
            return step_result(payload, dict(payload.get("observation") or {}))
        fields = observation_fields(payload)
        return step_result(payload, self.observation_type.model_validate(fields))

    def _parse_state(self, payload: dict[str, Any]) -> StateT:
        state_type = self.state_type or (State if self.observation_type is not None else None)
        if state_type is None:
            return dict(payload)  # type: ignore[return-value]
        return state_type.model_validate(payload)  # type: ignore[return-value]


class Exchange(ClientConnection):
    """The protocol's :class:`~openenv_hub.protocol.connection.ClientConnection`, with the
    client's wording of what its transport ran into (the server's URL, the client's options)."""

    def __init__(self, url: str, options: ClientOptions) -> None:
        super().__init__()
        self.url = url
        self.options = options

    def timeout_error(self, timeout_s: float) -> EnvTimeoutError:
        return EnvTimeoutError(
            f"No reply from {shown(self.url)} within {timeout_s:g} s. The connection was closed so "
            "that a late reply cannot be mistaken for the answer to a later call; the next call "
            "reconnects. Raise message_timeout_s if the environment is slow.",
            url=self.url,
            timeout_s=timeout_s,
        )

    def closed_during(
        self, kind: str, close: Close | None, last_words: str | bytes | None
    ) -> OpenEnvError:
        """The error for a socket found closed while the reply to ``kind`` was owed: the error
        frame the server sent before closing (``last_words``), else the episode that was lost
        (for a request that needs it), else the closure."""
        if last_words is not None:
            try:
                reply_data(last_words, REPLY_TYPES.get(kind, "observation"))
            except ServerReplyError as refusal:
                return refusal
        lost = self.lost_during(kind)
        if lost is not None:
            return lost
        return self.closed_error(close.code if close else None, close.reason if close else "")

    def closed_error(self, code: int | None, reason: str) -> TransportError:
        if code == CLOSE_MESSAGE_TOO_BIG:
            return MessageTooLargeError(
                f"A message exceeded the size limit and {shown(self.url)} closed the connection "
                f"(close code 1009). Raise max_message_size_mb (now {self.options.max_message_size_mb:g}) "
                "and the server's limit, or send smaller messages.",
                url=self.url,
            )
        detail = f" (code {code}: {reason})" if code else ""
        return TransportError(f"Connection to {shown(self.url)} closed{detail}", url=self.url)
