"""The local Daytona: the part of Daytona's REST API that the ``daytona`` SDK calls to run
environment servers (sandboxes from an image, with variables, resources, labels and auto-stop;
start, stop, delete, list; the toolbox's command execution; preview links with tokens and a
token-checked preview proxy for HTTP and WebSocket), with sandboxes as containers on the local
Docker engine, with no network unless asked. The SDK runs against it unmodified; tests and
offline work use it as LocalHub stands in for the Hub.

Example:
    >>> from openenv_hub.localdaytona import LocalDaytona
    >>> with LocalDaytona() as daytona:  # doctest: +SKIP
    ...     print(daytona.environment())  # DAYTONA_API_URL, DAYTONA_API_KEY, DAYTONA_TARGET

Layer: runtimes.
"""

from __future__ import annotations

from .app import LocalDaytonaApp, create_app
from .errors import ApiError
from .server import LocalDaytona

__all__ = ["ApiError", "LocalDaytona", "LocalDaytonaApp", "create_app"]
