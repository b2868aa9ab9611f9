"""What the async and sync clients share and that does no I/O: options, URLs, encoding,
decoding replies, and tracking whether an episode would be lost with a connection."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any, ClassVar, Generic, TypeVar
from urllib.parse import urlsplit

import pydantic_core
from websockets.exceptions import InvalidHandshake, InvalidStatus, InvalidURI

from openenv_hub.errors import (
    ConfigurationError,
    ConnectError,
    EnvTimeoutError,
    MessageTooLargeError,
    OpenEnvError,
    ServerReplyError,
    SessionLostError,
    TransportError,
    error_from_wire,
)
from openenv_hub.shown_urls import hide_credentials, shown
from openenv_hub.types import Action, State, StepResult

ActT = TypeVar("ActT")
ObsT = TypeVar("ObsT")
StateT = TypeVar("StateT")

CLOSE_MESSAGE_TOO_BIG = 1009

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
        said = f": {body}" if body else ""
        return ConnectError(
            f"Failed to connect to {shown(url)}: the server answered HTTP {status}{said}",
            url=url,
            status_code=status,
            body=body,
        )
    said = hide_credentials(str(exc), url)
    return ConnectError(f"Failed to connect to {shown(url)}: {said}", url=url)


def ws_url(base_url: str, path: str = "/ws") -> str:
    """The WebSocket URL for a server given as http(s)://, ws(s):// or host:port."""
    url = base_url.strip().rstrip("/")
    if not url:
        raise ConfigurationError("base_url is empty; pass e.g. 'http://127.0.0.1:8000'")
    if "://" not in url:
        url = f"ws://{url}"
    scheme, rest = url.split("://", 1)
    mapped = {"http": "ws", "https": "wss", "ws": "ws", "wss": "wss"}.get(scheme.lower())
    if mapped is None:
        raise ConfigurationError(
            f"base_url {shown(base_url)!r} has scheme '{scheme}'; use http, https, ws or wss"
        )
    url = f"{mapped}://{rest}"
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number in range
    except ValueError as exc:
        raise ConfigurationError(
            f"base_url {shown(base_url)!r} is not a valid URL ({exc}); pass e.g. "
            "'http://127.0.0.1:8000'"
        ) from None
    if not parts.hostname:
        raise ConfigurationError(
            f"base_url {shown(base_url)!r} names no host; pass e.g. 'http://127.0.0.1:8000'"
        )
    if url.endswith(path):
        return url
    return url + path


def http_url(base_url: str) -> str:
    """The HTTP base URL for a server given as http(s)://, ws(s):// or host:port."""
    url = ws_url(base_url).removesuffix("/ws")
    return "http" + url[2:] if url.startswith("ws") else url


def provider_headers(provider: object) -> dict[str, str]:
    """The headers a provider's servers want with each connection (a token its proxy checks),
    or none."""
    headers = getattr(provider, "headers", None)
    return dict(headers) if headers else {}


def is_loopback(url: str) -> bool:
    host = urlsplit(url).hostname or ""
    return host in ("localhost", "127.0.0.1", "::1") or host.startswith("127.")


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


class Exchange:
    """The bookkeeping of one client's requests: encoding, decoding, lost-episode detection."""

    def __init__(self, url: str, options: ClientOptions) -> None:
        self.url = url
        self.options = options
        self.episode_active = False  # a reset succeeded on the current connection
        self.episode_lost = False  # the connection dropped mid-episode; reset() clears it

    @staticmethod
    def encode(kind: str, data: dict[str, Any] | None = None) -> str:
        message: dict[str, Any] = {"type": kind}
        if data is not None:
            message["data"] = data
        return pydantic_core.to_json(message).decode()

    def decode(self, raw: str | bytes, expect: str) -> dict[str, Any]:
        try:
            frame = pydantic_core.from_json(raw)
        except ValueError as exc:
            raise ServerReplyError(f"Server sent a frame that is not JSON: {exc}") from None
        kind = frame.get("type") if isinstance(frame, dict) else None
        data = frame.get("data") if isinstance(frame, dict) else None
        if kind == "error":
            raise error_from_wire(data if isinstance(data, dict) else {})
        if kind != expect or not isinstance(data, dict):
            raise ServerReplyError(f"Expected a '{expect}' reply, got {str(raw)[:200]!r}")
        return data

    def connection_dropped(self) -> None:
        """The connection is gone; an episode in progress went with it."""
        if self.episode_active:
            self.episode_lost = True
        self.episode_active = False

    def check_not_lost(self, kind: str) -> None:
        if kind in ("step", "state", "mcp") and self.episode_lost:
            raise self.lost_error()

    @staticmethod
    def lost_error() -> SessionLostError:
        return SessionLostError(
            "The connection to the environment server closed during an episode, and the "
            "episode was lost with it (the server may have restarted or reaped an idle "
            "session). The client has reconnected: call reset() to start a new episode.",
        )

    def closed_during(self, kind: str, code: int | None, reason: str) -> OpenEnvError:
        """The error for a connection found closed while waiting for the reply to ``kind``:
        the episode is lost if one was running (for a call that needs it), else the closure."""
        if kind in ("step", "state", "mcp") and self.episode_lost:
            return self.lost_error()
        return self.closed_error(code, reason)

    def succeeded(self, kind: str) -> None:
        if kind == "reset":
            self.episode_active, self.episode_lost = True, False

    def timeout_error(self, timeout_s: float) -> EnvTimeoutError:
        return EnvTimeoutError(
            f"No reply from {shown(self.url)} within {timeout_s:g} s. The connection was closed so "
            "that a late reply cannot be mistaken for the answer to a later call; the next call "
            "reconnects. Raise message_timeout_s if the environment is slow.",
            url=self.url,
            timeout_s=timeout_s,
        )

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
