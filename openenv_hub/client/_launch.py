"""What ``from_docker_image``, ``from_folder`` and ``from_hub`` start, through the registry of
runtimes (:mod:`openenv_hub.runtimes`), and what the first two return: a client whose server
starts on use.

:class:`ClientLauncher` starts the server (a container, a uv environment, a process) when it is
resolved, in any of the three ways code written for OpenEnv resolves it::

    env = await MyEnv.from_docker_image("img")            # a connected async client
    env = MyEnv.from_docker_image("img").sync()           # a connected sync client
    async with MyEnv.from_docker_image("img") as env: ... # closed (and stopped) at the end

In async code the start runs in a worker thread, so the event loop keeps running meanwhile. If
the awaiting task is cancelled, the server that was being started is stopped once it is up.
Closing the client stops the server.

Keyword arguments are split: the client's own options (:data:`CLIENT_OPTIONS`) go to the
client, the rest to the runtime, which refuses those it does not take before anything starts.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Generator
from concurrent.futures import Future
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

if TYPE_CHECKING:
    from openenv_hub.client.sync_client import SyncEnvClient
    from openenv_hub.hub import EnvironmentDataset
    from openenv_hub.runtimes import Provider, Source, SpaceRef

__all__ = [
    "CLIENT_OPTIONS",
    "ClientLauncher",
    "LaunchedClient",
    "client_from_hub",
    "launcher",
    "split_options",
]


class LaunchedClient(Protocol):
    """What a launcher makes: an :class:`~openenv_hub.client.EnvClient` (or a subclass), seen
    through the few methods the launcher calls, so this module does not import it (it imports
    this one)."""

    dataset: EnvironmentDataset | None

    def __init__(self, base_url: str, *, provider: Provider | None = None, **options: Any): ...

    async def connect(self) -> Any: ...

    async def close(self) -> None: ...

    def sync(self) -> SyncEnvClient[Any, Any, Any]: ...


ClientT = TypeVar("ClientT", bound=LaunchedClient)

CLIENT_OPTIONS = frozenset(
    {
        "connect_timeout_s",
        "message_timeout_s",
        "ping_interval_s",
        "ping_timeout_s",
        "max_message_size_mb",
        "headers",
    }
)


_ALSO_TAKES = "the client's options (message_timeout_s, connect_timeout_s, ...)"


def split_options(options: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(client options, provider options)`` from one set of keyword arguments."""
    client = {key: value for key, value in options.items() if key in CLIENT_OPTIONS}
    provider = {key: value for key, value in options.items() if key not in CLIENT_OPTIONS}
    return client, provider


def launcher(
    client_class: type[ClientT],
    runtime: str,
    source: Source,
    target: str | Path,
    options: dict[str, Any],
    *,
    what: str,
) -> ClientLauncher[ClientT]:
    """A launcher of ``client_class`` whose server is ``target`` started with ``runtime``
    (everything is checked now; the server starts when the launcher is resolved)."""
    from openenv_hub.runtimes import starter

    client_options, runtime_options = split_options(options)
    start = starter(runtime, source, target, runtime_options, what=what, also_takes=_ALSO_TAKES)
    return ClientLauncher(client_class, start, client_options)


def client_from_hub(
    client_class: type[ClientT], space: SpaceRef, runtime: str, options: dict[str, Any]
) -> ClientT:
    """``client_class`` connected to the Space's app, or to a server of it that ``runtime``
    starts now (stopped if the client cannot be made)."""
    from openenv_hub.runtimes import starter

    client_options, runtime_options = split_options(options)
    what = f"from_hub(runtime={runtime!r})"
    provider = starter(
        runtime, "space", space, runtime_options, what=what, also_takes=_ALSO_TAKES
    )()
    try:
        return client_class(provider.base_url, provider=provider, **client_options)
    except BaseException:
        provider.stop()
        raise


class ClientLauncher(Generic[ClientT]):
    """A client of a server that starts when the launcher is awaited, entered or ``.sync()``-ed.

    Args:
        client_class: The client to make, e.g. ``EchoEnv``.
        start: Starts the server and returns its provider (blocking; run in a thread in async
            code).
        client_options: Passed to the client (``message_timeout_s``, ...).
    """

    def __init__(
        self,
        client_class: type[ClientT],
        start: Callable[[], Provider],
        client_options: dict[str, Any] | None = None,
    ) -> None:
        self.client_class = client_class
        self._start = start
        self._client_options = dict(client_options or {})
        self._entered: ClientT | None = None

    def start_provider(self) -> Provider:
        """Start the server now and return its provider (the caller must stop it)."""
        return self._start()

    def _client_of(self, provider: Provider) -> ClientT:
        try:
            return self.client_class(provider.base_url, provider=provider, **self._client_options)
        except BaseException:
            provider.stop()
            raise

    async def connect(self) -> ClientT:
        """Start the server without blocking the event loop; return a connected client."""
        provider = await _start_in_thread(self._start)
        client = self._client_of(provider)
        try:
            await client.connect()
        except BaseException:
            await asyncio.shield(client.close())
            raise
        return client

    def __await__(self) -> Generator[Any, None, ClientT]:
        return self.connect().__await__()

    async def __aenter__(self) -> ClientT:
        self._entered = await self.connect()
        return self._entered

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        client, self._entered = self._entered, None
        if client is not None:
            await client.close()

    def sync(self) -> SyncEnvClient[Any, Any, Any]:
        """Start the server (blocking) and return a connected synchronous client."""
        client = self._client_of(self._start()).sync()
        try:
            client.connect()
        except BaseException:
            client.close()
            raise
        return client

    def __enter__(self) -> None:
        name = self.client_class.__name__
        raise TypeError(
            f"This starts a server for {name}: use 'async with {name}.from_...(...) as env', "
            f"'env = await {name}.from_...(...)', or 'with {name}.from_...(...).sync() as env'."
        )

    def __exit__(self, *args: object) -> None:  # pragma: no cover - __enter__ always raises
        pass


async def _start_in_thread(start: Callable[[], Provider]) -> Provider:
    """Run ``start`` in a worker thread; if the caller is cancelled, stop what it started."""
    future: Future[Provider] = Future()

    def run() -> None:
        if not future.set_running_or_notify_cancel():
            return
        try:
            future.set_result(start())
        except BaseException as exc:
            future.set_exception(exc)

    task = asyncio.get_running_loop().run_in_executor(None, run)
    try:
        await asyncio.shield(task)
    except asyncio.CancelledError:
        future.add_done_callback(_stop_started)
        raise
    return future.result()


def _stop_started(future: Future[Provider]) -> None:
    if not future.cancelled() and future.exception() is None:
        with contextlib.suppress(Exception):
            future.result().stop()
