"""``EnvClient``: the asynchronous client of an environment server, over ``/ws``.

Layer: client.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import Mapping
from types import TracebackType
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed
from websockets.protocol import State as WsState

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
    provider_headers,
)
from openenv_hub.errors import ConfigurationError
from openenv_hub.protocol.urls import ws_url
from openenv_hub.types import StepResult

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

    from openenv_hub.client._launch import ClientLauncher
    from openenv_hub.client.fork import ForkedResult
    from openenv_hub.client.sync_client import SyncEnvClient
    from openenv_hub.hub import EnvironmentDataset
    from openenv_hub.runtimes import Provider

__all__ = ["EnvClient"]

Self = TypeVar("Self", bound="EnvClient[Any, Any, Any]")
#: How ``from_hub`` tells a dataset that declares an environment from a Space.
_DATASET_PREFIX = "hf://datasets/"


class EnvClient(Codec[ActT, ObsT, StateT], Generic[ActT, ObsT, StateT]):
    """Talks to one environment session over a WebSocket.

    Subclass it with your models, or use :class:`GenericEnvClient` for plain dicts::

        class CounterEnv(EnvClient[Count, Total, State]):
            action_type, observation_type, state_type = Count, Total, State

        async with CounterEnv(base_url="http://127.0.0.1:8000") as env:
            result = await env.reset()
            result = await env.step(Count(n=3))

    A reply that does not arrive within ``message_timeout_s`` raises
    :class:`~openenv_hub.errors.EnvTimeoutError` and discards the socket, so a late reply is never
    read as the answer to a later call. A socket found closed is reopened on the next call; if
    that lost an episode in progress, the call raises
    :class:`~openenv_hub.errors.SessionLostError` instead of silently starting over.

    Args:
        base_url: ``http(s)://host:port``, ``ws(s)://host:port`` or ``host:port``.
        connect_timeout_s: Time allowed to open the connection.
        message_timeout_s: Time allowed for each reply (``None``: wait forever).
        ping_interval_s: Keepalive ping interval (``None`` disables pings, e.g. behind tunnels
            that drop them).
        ping_timeout_s: Close the connection when a ping is not answered in this time.
        max_message_size_mb: Largest reply accepted.
        headers: Sent with the opening handshake (e.g. ``{"Authorization": "Bearer ..."}`` for
            a server behind a proxy that checks a token; a provider that needs one gives its
            own).
        provider: A running server (process, container) to stop when the client closes.
    """

    def __init__(
        self,
        base_url: str,
        *,
        connect_timeout_s: float = 10.0,
        message_timeout_s: float | None = 60.0,
        ping_interval_s: float | None = 20.0,
        ping_timeout_s: float | None = 20.0,
        max_message_size_mb: float = 100.0,
        headers: Mapping[str, str] | None = None,
        provider: Provider | None = None,
    ) -> None:
        self.base_url = base_url
        self.options = ClientOptions(
            connect_timeout_s=connect_timeout_s,
            message_timeout_s=message_timeout_s,
            ping_interval_s=ping_interval_s,
            ping_timeout_s=ping_timeout_s,
            max_message_size_mb=max_message_size_mb,
            headers=tuple(({**provider_headers(provider, base_url), **(headers or {})}).items()),
        )
        self._exchange = Exchange(ws_url(base_url), self.options)
        self._ws: ClientConnection | None = None
        self._lock = asyncio.Lock()
        self.provider = provider
        #: The dataset the environment came with (``from_hub("hf://datasets/...")``), or None.
        self.dataset: EnvironmentDataset | None = None

    @property
    def url(self) -> str:
        return self._exchange.url

    @classmethod
    def from_hub(
        cls: type[Self],
        repo_id: str,
        *,
        revision: str | None = None,
        runtime: str | None = None,
        local: bool = False,
        token: str | None = None,
        endpoint: str | None = None,
        trust_remote_code: bool = False,
        python: str | None = None,
        **options: Any,
    ) -> Self:
        """A client of the Space ``repo_id`` (not yet connected; this call blocks while it works).

        ``runtime="space"`` (the default) talks to the Space's running app. The others run the
        environment at ``revision`` on this machine and stop it when the client closes:
        ``"local"`` (or ``local=True``) installs it into ``python`` (default: this interpreter),
        ``"uv"`` into an environment of its own made by uv, ``"docker"`` builds and runs its
        image (``"swarm"`` as a service). Running the Space's code needs
        ``trust_remote_code=True`` or ``OPENENV_TRUST_REMOTE_CODE=1`` (or a "yes" at a
        terminal). Other options go to the runtime (``env``, ...) or the client
        (``message_timeout_s``, ...).

        ``repo_id`` may also name a dataset that declares an environment (``environment.yaml``
        at its root): ``hf://datasets/NS/NAME[/ENV_ID][@REVISION]``. Its server is what the
        declaration names: the dataset's own folder (``runtime`` ``"local"`` by default, or
        ``"uv"``, ``"docker"``), a Space, or an image; the client's :attr:`dataset` holds the
        dataset at the commit it resolved to, and its task rows (see docs/importing.md).

        Example::

            async with EchoEnv.from_hub("openenv/echo_env", local=True, trust_remote_code=True) as env:
                await env.reset()
        """
        from openenv_hub.client._launch import client_from_hub
        from openenv_hub.runtimes import SpaceRef

        if python is not None:
            options["python"] = python
        if repo_id.startswith(_DATASET_PREFIX):
            from openenv_hub.client._from_dataset import client_from_dataset

            where = _dataset_ref(repo_id, revision)
            chosen_runtime = "local" if local else runtime
            return client_from_dataset(
                cls, where, chosen_runtime, options, token, endpoint, trust_remote_code
            )
        chosen = _hub_runtime(runtime, local)
        space = SpaceRef(repo_id, revision, token, endpoint, trust_remote_code)
        return client_from_hub(cls, space, chosen, options)

    @classmethod
    def from_docker_image(
        cls: type[Self], image: str, *, runtime: str = "docker", **options: Any
    ) -> ClientLauncher[Self]:
        """A client of a container of ``image``, started when awaited, entered or ``.sync()``-ed.

        Options: ``port``, ``env`` (or ``env_vars``), ``secrets``, ``name``, ``network``,
        ``startup_timeout_s``, ... (see :class:`~openenv_hub.runtimes.docker.DockerProvider`),
        and the client's own. ``runtime`` may be another that runs images (``"swarm"``,
        ``"kubernetes"``). Closing the client removes the container::

            async with EchoEnv.from_docker_image("openenv-echo-env:latest") as env:
                await env.reset()
        """
        from openenv_hub.client._launch import launcher

        what = "from_docker_image" + (f"(runtime={runtime!r})" if runtime != "docker" else "")
        return launcher(cls, runtime, "image", image, options, what=what)

    @classmethod
    def from_folder(
        cls: type[Self], path: str | Path, *, runtime: str = "local", **options: Any
    ) -> ClientLauncher[Self]:
        """A client of the environment folder ``path`` served with ``runtime``.

        ``"local"`` runs it with this interpreter, ``"uv"`` in an environment of its own,
        ``"docker"`` builds its image and runs it; ``"swarm"``, ``"ray"`` and ``"kubernetes"``
        run replicas (``openenv_hub.runtimes.runtime_names("folder")`` lists them all).
        Started when awaited, entered or ``.sync()``-ed; stopped when the client closes.
        """
        from openenv_hub.client._launch import launcher

        what = f"from_folder(runtime={runtime!r})"
        return launcher(cls, runtime, "folder", path, options, what=what)

    # -- connection ------------------------------------------------------------------------

    async def connect(self: Self) -> Self:
        """Open the connection (done lazily by the first call otherwise)."""
        await self._connection()
        return self

    async def _connection(self) -> ClientConnection:
        ws = self._ws
        if ws is not None and ws.state is WsState.OPEN:
            return ws
        if ws is not None:  # found closed: the server went away or reaped the session
            await self._discard()
        try:
            self._ws = await connect(self.url, **self.options.connect_kwargs(self.url))
        except CONNECT_ERRORS as exc:
            raise connect_error(self.url, exc) from exc
        return self._ws

    async def _discard(self) -> None:
        ws, self._ws = self._ws, None
        self._exchange.connection_lost()
        if ws is not None:
            with contextlib.suppress(Exception):
                await ws.close()

    def _abort(self) -> None:
        """Drop the connection at once, without a closing handshake (safe while cancelled)."""
        ws, self._ws = self._ws, None
        self._exchange.connection_lost()
        if ws is not None:
            ws.transport.abort()

    async def close(self) -> None:
        """End the session, close the connection, and stop the provider if there is one."""
        ws, self._ws = self._ws, None
        farewell = self._exchange.close_frame()
        if ws is not None:
            try:
                with contextlib.suppress(Exception):
                    if ws.state is WsState.OPEN:
                        await ws.send(farewell)
                    await ws.close()
            finally:
                # A close cancelled while it waits for the server's half of the handshake (a
                # caller's time limit shorter than the connection's close timeout) would leave
                # the socket open; closed connections ignore this.
                ws.transport.abort()
        if self.provider is not None:
            await asyncio.to_thread(self.provider.stop)

    async def __aenter__(self: Self) -> Self:
        return await self.connect()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    def __enter__(self) -> None:
        raise TypeError(
            f"{type(self).__name__} is asynchronous: use 'async with {type(self).__name__}(...)', "
            f"or 'with {type(self).__name__}(...).sync() as env' in synchronous code."
        )

    def __exit__(self, *args: object) -> None:  # pragma: no cover - __enter__ always raises
        pass

    # -- requests --------------------------------------------------------------------------

    async def _request(self, kind: str, data: dict[str, Any] | None = None) -> dict[str, Any]:
        """Send one request and read its reply. Calls are serialised (one in flight at a time);
        a call that fails or is cancelled between the two drops the connection, so the next
        call can never read the reply meant for this one."""
        async with self._lock:
            exchange = self._exchange
            ws = await self._connection()
            request = exchange.send(kind, data)
            timeout_s = self.options.message_timeout_s
            try:
                await ws.send(request)
                raw = await _recv_within(ws, timeout_s)
            except TIMEOUT_ERRORS:
                self._abort()
                raise exchange.timeout_error(timeout_s or 0.0) from None
            except ConnectionClosed as exc:
                last_words = await _last_frame(ws)  # e.g. a refusal sent just before closing
                await self._discard()
                raise exchange.closed_during(kind, exc.rcvd or exc.sent, last_words) from exc
            except BaseException:  # cancelled or interrupted while the reply was owed
                self._abort()
                raise
            return exchange.receive(raw)

    async def reset(self, **kwargs: Any) -> StepResult[ObsT]:
        """Start a new episode. Keyword arguments (``seed``, ``episode_id``, ...) go to ``reset``."""
        return self._parse_result(await self._request("reset", kwargs))

    async def step(self, action: ActT) -> StepResult[ObsT]:
        return self._parse_result(await self._request("step", self._step_payload(action)))

    async def state(self) -> StateT:
        return self._parse_state(await self._request("state"))

    async def fork(
        self, episode: Sequence[Any], step: int, *, allow_inexact_replay: bool = False
    ) -> ForkedResult[ObsT]:
        """Bring this session to a recorded ``episode``'s state at ``step``: from the snapshot
        the server kept there where it holds one, else by replay (see
        :mod:`openenv_hub.client.fork`). The result's ``method`` says which (``"snapshot"`` or
        ``"replay"``). Raises ``ReplayMismatchError`` where the replay differs (naming the
        fields), and ``ReplayRefusedError`` before replaying an episode its environment said
        would not replay exactly (no seed, say), unless ``allow_inexact_replay``."""
        from openenv_hub.client.fork import fork_episode

        return await fork_episode(self, episode, step, allow_inexact_replay=allow_inexact_replay)

    def sync(self) -> SyncEnvClient[ActT, ObsT, StateT]:
        """A synchronous twin of this client, with the same options and parsing."""
        from openenv_hub.client.sync_client import SyncEnvClient

        return SyncEnvClient(
            self.base_url,
            codec=self,
            options=self.options,
            provider=self.provider,
            dataset=self.dataset,
        )


def _dataset_ref(repo_id: str, revision: str | None) -> str:
    """``repo_id`` (``hf://datasets/...``) with ``revision`` written into it, if given."""
    if revision is None:
        return repo_id
    if "@" in repo_id:
        raise ConfigurationError(
            f"{repo_id} names its revision already; revision={revision!r} cannot go with it."
        )
    return f"{repo_id}@{revision}"


def _hub_runtime(runtime: str | None, local: bool) -> str:
    """The runtime ``from_hub`` uses: ``runtime``, ``"local"`` for ``local=True``, else the
    Space's own app."""
    if local and runtime not in (None, "local"):
        raise ConfigurationError(
            f"local=True means runtime='local'; it cannot go with {runtime!r}."
        )
    return "local" if local else (runtime or "space")


async def _recv_within(ws: ClientConnection, timeout_s: float | None) -> str | bytes:
    """The next frame, or ``TimeoutError`` after ``timeout_s`` (``None``: no limit). On Python
    3.11 ``asyncio.timeout`` does it without the task ``wait_for`` starts for every call."""
    if sys.version_info < (3, 11):
        return await asyncio.wait_for(ws.recv(), timeout_s)
    async with asyncio.timeout(timeout_s):
        return await ws.recv()


async def _last_frame(ws: ClientConnection) -> str | bytes | None:
    """A frame the server sent before closing, if one is still buffered."""
    try:
        return await asyncio.wait_for(ws.recv(), 0.05)
    except (ConnectionClosed, TimeoutError, asyncio.TimeoutError):
        return None
