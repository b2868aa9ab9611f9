"""Errors of the connection itself."""

from __future__ import annotations

from openenv_hub.errors._base import OpenEnvError


class TransportError(OpenEnvError, ConnectionError):
    """The connection to the server failed."""

    def __init__(self, message: str, *, url: str | None = None) -> None:
        super().__init__(message)
        self.url = url


class ConnectError(TransportError):
    """The connection could not be opened. When the server refused the handshake, ``status_code``
    and ``body`` are what it answered (e.g. why a Space's app is not serving)."""

    def __init__(
        self,
        message: str,
        *,
        url: str | None = None,
        status_code: int | None = None,
        body: str = "",
    ) -> None:
        super().__init__(message, url=url)
        self.status_code = status_code
        self.body = body


class ServerStartError(ConnectError):
    """A provider started a server that never answered ``/health``, or could not start it.

    The message names the runtime, what it ran (secrets shown by name only) and the last lines
    of the server's log; ``hint`` says what to try next.
    """

    def __init__(
        self,
        message: str,
        *,
        runtime: str,
        command: str = "",
        logs: str = "",
        url: str | None = None,
        hint: str = "",
    ) -> None:
        self.runtime, self.command, self.logs, self.hint = runtime, command, logs, hint
        text = f"[{runtime}] {message}"
        if command:
            text += f"\nRan: {command}"
        if logs.strip():
            text += f"\nLast lines of its log:\n{logs.rstrip()}"
        super().__init__(text, url=url)


class ImageNotFoundError(ServerStartError):
    """The Docker image is not on the engine and could not be pulled."""

    def __init__(self, image: str, *, detail: str = "") -> None:
        self.image = image
        super().__init__(
            f"The image {image!r} is not on this Docker engine"
            + (f" and could not be pulled ({detail})." if detail else "."),
            runtime="docker",
            hint=f"Build it from an environment folder with 'openenv build PATH --tag {image}', "
            f"or pull it with 'docker pull {image}'.",
        )


class EnvTimeoutError(TransportError, TimeoutError):
    """No reply arrived in time. The socket was closed so a late reply can never be misread."""

    def __init__(self, message: str, *, url: str | None = None, timeout_s: float) -> None:
        super().__init__(message, url=url)
        self.timeout_s = timeout_s


class MessageTooLargeError(TransportError):
    pass
