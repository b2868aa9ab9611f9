"""``SyncEnvClient``: the synchronous twin of :class:`~openenv_hub.client.EnvClient`.

It speaks the same protocol with the same options over websockets' synchronous client, so no
event loop or helper thread of ours is involved.

Layer: client.
"""

from __future__ import annotations

import contextlib
import inspect
import socket
import threading
from types import TracebackType
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from websockets.exceptions import ConnectionClosed
from websockets.protocol import State as WsState
from websockets.sync.client import ClientConnection, connect

from openenv_hub.client._core import (
    CONNECT_ERRORS,
    TIMEOUT_ERRORS,
    ActT,
    ClientOptions,
    Codec,
    Exchange,
    ObsT,
    StateT,
    connect_error,
)
from openenv_hub.protocol.urls import ws_url
from openenv_hub.types import StepResult

if TYPE_CHECKING:
    from collections.abc import Sequence

    from openenv_hub.client.fork import ForkedResult
    from openenv_hub.hub import EnvironmentDataset
    from openenv_hub.runtimes import Provider

__all__ = ["SyncEnvClient"]

# websockets >= 17.1 wants connections opened outside a ``with`` block to say so.
_DIRECT: dict[str, Any] = (
    {"legacy": True} if "legacy" in inspect.signature(connect).parameters else {}
)

Self = TypeVar("Self", bound="SyncEnvClient[Any, Any, Any]")


class SyncEnvClient(Generic[ActT, ObsT, StateT]):
    """Talks to one environment session over a WebSocket, synchronously.

    Usually obtained from :meth:`EnvClient.sync`, which passes the async client as ``codec`` so
    both parse replies into the same types::

        with EchoEnv(base_url="http://127.0.0.1:8000").sync() as env:
            env.reset()
            env.step(CallToolAction(tool_name="echo_message", arguments={"message": "Hi"}))
    """

    def __init__(
        self,
        base_url: str,
        *,
        codec: Codec[ActT, ObsT, StateT] | None = None,
        options: ClientOptions | None = None,
        provider: Provider | None = None,
        dataset: EnvironmentDataset | None = None,
    ) -> None:
        self.base_url = base_url
        self.options = options or ClientOptions()
        self.codec: Codec[ActT, ObsT, StateT] = codec or self._default_codec()
        self._exchange = Exchange(ws_url(base_url), self.options)
        self._ws: ClientConnection | None = None
        self._lock = threading.Lock()
        self.provider = provider
        #: The dataset the environment came with (``from_hub("hf://datasets/...")``), or None.
        self.dataset = dataset

    @classmethod
    def _default_codec(cls) -> Codec[ActT, ObsT, StateT]:
        """Without the async client's types, observations and state are plain dicts."""
        return Codec()

    @property
    def url(self) -> str:
        return self._exchange.url

    # -- connection ------------------------------------------------------------------------

    def connect(self: Self) -> Self:
        self._connection()
        return self

    def _connection(self) -> ClientConnection:
        ws = self._ws
        if ws is not None and ws.protocol.state is WsState.OPEN:
            return ws
        if ws is not None:
            self._discard()
        try:
            self._ws = connect(self.url, **{**self.options.connect_kwargs(self.url), **_DIRECT})
        except CONNECT_ERRORS as exc:
            raise connect_error(self.url, exc) from exc
        return self._ws

    def _discard(self) -> None:
        ws, self._ws = self._ws, None
        self._exchange.connection_lost()
        if ws is not None:
            with contextlib.suppress(Exception):
                ws.close()

    def _abort(self) -> None:
        """Drop the connection at once, without waiting for a closing handshake."""
        ws, self._ws = self._ws, None
        self._exchange.connection_lost()
        if ws is not None:
            with contextlib.suppress(OSError):
                ws.socket.shutdown(socket.SHUT_RDWR)
            with contextlib.suppress(Exception):
                ws.close()

    def close(self) -> None:
        ws, self._ws = self._ws, None
        farewell = self._exchange.close_frame()
        if ws is not None:
            with contextlib.suppress(Exception):
                if ws.protocol.state is WsState.OPEN:
                    ws.send(farewell)
                ws.close()
        if self.provider is not None:
            self.provider.stop()

    def __enter__(self: Self) -> Self:
        return self.connect()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # -- requests --------------------------------------------------------------------------

    def _request(self, kind: str, data: dict[str, Any] | None = None) -> dict[str, Any]:
        """Send one request and read its reply. Calls from several threads are serialised; a
        call interrupted between the two (``KeyboardInterrupt`` included) drops the connection,
        so the next call can never read the reply meant for this one."""
        with self._lock:
            exchange = self._exchange
            ws = self._connection()
            request = exchange.send(kind, data)
            timeout_s = self.options.message_timeout_s
            try:
                ws.send(request)
                raw = ws.recv(timeout=timeout_s)
            except TIMEOUT_ERRORS:
                self._abort()
                raise exchange.timeout_error(timeout_s or 0.0) from None
            except ConnectionClosed as exc:
                last_words = _last_frame(ws)  # e.g. a refusal sent just before closing
                self._discard()
                raise exchange.closed_during(kind, exc.rcvd or exc.sent, last_words) from exc
            except BaseException:  # interrupted while the reply was owed
                self._abort()
                raise
            return exchange.receive(raw)

    def reset(self, **kwargs: Any) -> StepResult[ObsT]:
        return self.codec._parse_result(self._request("reset", kwargs))

    def step(self, action: ActT) -> StepResult[ObsT]:
        return self.codec._parse_result(self._request("step", self.codec._step_payload(action)))

    def state(self) -> StateT:
        return self.codec._parse_state(self._request("state"))

    def fork(
        self, episode: Sequence[Any], step: int, *, allow_inexact_replay: bool = False
    ) -> ForkedResult[ObsT]:
        """Bring this session to a recorded ``episode``'s state at ``step``: from the snapshot
        the server kept there where it holds one, else by replay (see
        :mod:`openenv_hub.client.fork`). The result's ``method`` says which (``"snapshot"`` or
        ``"replay"``). Raises ``ReplayMismatchError`` where the replay differs (naming the
        fields), and ``ReplayRefusedError`` before replaying an episode its environment said
        would not replay exactly (no seed, say), unless ``allow_inexact_replay``."""
        from openenv_hub.client.fork import fork_episode_sync

        return fork_episode_sync(self, episode, step, allow_inexact_replay=allow_inexact_replay)


def _last_frame(ws: ClientConnection) -> str | bytes | None:
    """A frame the server sent before closing, if one is still buffered."""
    try:
        return ws.recv(timeout=0.05)
    except (ConnectionClosed, TimeoutError):
        return None
