"""The toolkit's settings that environment variables give, outside a server or shared by a server
and the runtimes that serve one (the server's own are in :mod:`openenv_hub.server.settings`),
each read here and nowhere else.

- ``OPENENV_HUB_CACHE``: where openenv-hub keeps what it makes and downloads (uv environments,
  Space files, wheels); default ``$XDG_CACHE_HOME/openenv-hub``, or ``~/.cache/openenv-hub``.
- ``OPENENV_MAX_MESSAGE_SIZE_MB``: the largest WebSocket frame and HTTP body a server accepts
  (default 16): read by the server, and by :mod:`openenv_hub.transport.uvicorn_serving` for the servers that
  runtimes run in-process.
- ``OPENENV_MAX_HEADER_SIZE_KB``: the largest request head (request line and headers) a server
  (an environment's, or LocalHub) reads, in KB (default 64); a larger one is answered 431.
- ``OPENENV_HEADER_TIMEOUT_S``: how long a server waits for a request's head once the connection
  opened or the request's first byte came (default 20); then it answers 408 and closes.
- ``OPENENV_DISABLE_PROGRESS`` (or huggingface_hub's ``HF_HUB_DISABLE_PROGRESS_BARS``): no live
  progress line on a terminal.
- ``OPENENV_TRUST_REMOTE_CODE``: run a Space's or a dataset's code without asking.
- ``HF_ENDPOINT``, ``HF_TOKEN``: the Hub to talk to, and whether a token comes from the
  environment (huggingface_hub reads the token itself).
- ``DOCKER_HOST``: the Docker engine (as the Docker SDK reads it), for messages.
- ``OPENENV_BASE_IMAGE``, ``OPENENV_BUILD_ARGS`` (space-separated ``KEY=VALUE``): the build
  arguments of environment images; ``OPENENV_SPACE_WHEELHOUSE``: the wheels LocalHub's Space
  builds may install.
- ``RAY_ADDRESS``: the Ray cluster; ``KUBECONFIG`` and ``KUBERNETES_SERVICE_HOST``: the
  Kubernetes cluster; ``DAYTONA_API_KEY``, ``DAYTONA_API_URL``, ``DAYTONA_TARGET``: Daytona.
- ``OPENENV_LOCALHUB_ADMIN_TOKEN``, ``OPENENV_LOCALDAYTONA_API_KEY``: the secrets of LocalHub and
  of the local Daytona when run as commands; ``OPENENV_LOCALHUB_PORT`` and the pytest plugin's
  switches (:mod:`openenv_hub.testing.pytest_plugin`).
- ``ENV_README_PATH``: the README the web UI shows.
- ``OPENENV_TASK``, ``OPENENV_APP_DIR``, ``OPENENV_EPISODE``: an exported Harbor task's episode.
- ``PATH``: where a sandboxed harness finds its programs.

Variables whose name a user chooses (``--api-key-env``, the secrets a manifest declares, a
``${NAME}`` in a Harbor task) are read by :func:`named_variable`; a child process's environment
starts from :func:`environment`, a copy of this one. The server's own settings, and the rule of
who may watch its sessions, are in :mod:`openenv_hub.server.settings`. ``tests/test_settings.py``
fails on a read of ``os.environ`` anywhere else.

Example:
    >>> import os
    >>> os.environ["OPENENV_HUB_CACHE"] = "/tmp/oh-cache"
    >>> str(cache_dir("wheels"))
    '/tmp/oh-cache/wheels'
    >>> del os.environ["OPENENV_HUB_CACHE"]

Layer: core.
"""

from __future__ import annotations

import os
from pathlib import Path

from openenv_hub.errors import ConfigurationError

__all__ = [
    "DEFAULT_HEADER_TIMEOUT_S",
    "DEFAULT_MAX_HEADER_SIZE_KB",
    "DEFAULT_MAX_MESSAGE_SIZE_MB",
    "DISABLE_PROGRESS_VARIABLE",
    "LOCALDAYTONA_API_KEY_VARIABLE",
    "LOCALHUB_ADMIN_TOKEN_VARIABLE",
    "TRUST_REMOTE_CODE_VARIABLE",
    "base_image",
    "build_args",
    "cache_dir",
    "docker_host",
    "environment",
    "header_timeout_s",
    "hub_endpoint",
    "hub_token_in_environment",
    "is_true",
    "max_header_size_kb",
    "max_message_size_mb",
    "named_variable",
    "number_setting",
    "progress_disabled",
    "trusts_remote_code",
]

DEFAULT_MAX_MESSAGE_SIZE_MB = 16.0
DEFAULT_MAX_HEADER_SIZE_KB = 64.0
DEFAULT_HEADER_TIMEOUT_S = 20.0

DISABLE_PROGRESS_VARIABLE = "OPENENV_DISABLE_PROGRESS"
TRUST_REMOTE_CODE_VARIABLE = "OPENENV_TRUST_REMOTE_CODE"
LOCALHUB_ADMIN_TOKEN_VARIABLE = "OPENENV_LOCALHUB_ADMIN_TOKEN"
LOCALDAYTONA_API_KEY_VARIABLE = "OPENENV_LOCALDAYTONA_API_KEY"

_TRUE = ("1", "true", "yes", "on")


def cache_dir(*parts: str) -> Path:
    """The toolkit's cache folder (``$OPENENV_HUB_CACHE``, else ``$XDG_CACHE_HOME/openenv-hub``,
    else ``~/.cache/openenv-hub``), or the folder ``parts`` inside it. Nothing is created."""
    base = os.environ.get("OPENENV_HUB_CACHE")
    if base:
        root = Path(base)
    else:
        xdg = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
        root = Path(xdg) / "openenv-hub"
    return root.joinpath(*parts)


def max_message_size_mb(requested: float | None) -> float:
    """The largest message a server accepts, in MB: ``requested``, else
    ``$OPENENV_MAX_MESSAGE_SIZE_MB``, else 16."""
    return number_setting(
        "max_message_size_mb",
        requested,
        "OPENENV_MAX_MESSAGE_SIZE_MB",
        float,
        DEFAULT_MAX_MESSAGE_SIZE_MB,
    )


def max_header_size_kb(requested: float | None) -> float:
    """The largest request head a server reads, in KB: ``requested``, else
    ``$OPENENV_MAX_HEADER_SIZE_KB``, else 64."""
    return number_setting(
        "max_header_size_kb",
        requested,
        "OPENENV_MAX_HEADER_SIZE_KB",
        float,
        DEFAULT_MAX_HEADER_SIZE_KB,
    )


def header_timeout_s(requested: float | None) -> float:
    """How long a server waits for a request's head: ``requested``, else
    ``$OPENENV_HEADER_TIMEOUT_S``, else 20."""
    return number_setting(
        "header_timeout_s", requested, "OPENENV_HEADER_TIMEOUT_S", float, DEFAULT_HEADER_TIMEOUT_S
    )


def number_setting(
    argument: str,
    requested: float | None,
    variable: str,
    kind: type[int] | type[float],
    default: float,
) -> float:
    """``requested`` if given, else the variable, else ``default``; a positive ``kind``, or a
    :class:`~openenv_hub.errors.ConfigurationError` naming ``argument`` or ``variable``."""
    if requested is not None:
        if requested <= 0:
            raise ConfigurationError(f"{argument} must be a positive number, got {requested}")
        return requested
    raw = os.environ.get(variable, "").strip()
    if not raw:
        return default
    try:
        value = kind(raw)
    except ValueError:
        kind_name = "a whole number" if kind is int else "a number"
        raise ConfigurationError(f"{variable} must be {kind_name}, got {raw!r}") from None
    if value <= 0:
        raise ConfigurationError(f"{variable} must be positive, got {raw!r}")
    return value


def named_variable(name: str) -> str | None:
    """The value of the variable ``name`` (None when unset or empty): for the variables listed
    in this module's docstring, and for those whose name a user chose."""
    return os.environ.get(name) or None


def is_true(name: str) -> bool:
    """Whether the variable ``name`` says yes (``1``, ``true``, ``yes``, ``on``)."""
    return os.environ.get(name, "").strip().lower() in _TRUE


def environment() -> dict[str, str]:
    """A copy of this process's environment: what a child process's environment starts from."""
    return dict(os.environ)


def progress_disabled() -> bool:
    """``$OPENENV_DISABLE_PROGRESS`` or ``$HF_HUB_DISABLE_PROGRESS_BARS`` says yes."""
    return is_true(DISABLE_PROGRESS_VARIABLE) or is_true("HF_HUB_DISABLE_PROGRESS_BARS")


def trusts_remote_code() -> bool:
    """``$OPENENV_TRUST_REMOTE_CODE`` says yes: a Space's or a dataset's code runs unasked."""
    return is_true(TRUST_REMOTE_CODE_VARIABLE)


def hub_endpoint() -> str | None:
    """``$HF_ENDPOINT``: the Hub to talk to when none is given."""
    return named_variable("HF_ENDPOINT")


def hub_token_in_environment() -> bool:
    """Whether ``$HF_TOKEN`` is set (huggingface_hub reads it first)."""
    return named_variable("HF_TOKEN") is not None


def docker_host() -> str | None:
    """``$DOCKER_HOST``: the Docker engine the SDK talks to (its default socket when None)."""
    return named_variable("DOCKER_HOST")


def base_image() -> str | None:
    """``$OPENENV_BASE_IMAGE``: the ``BASE_IMAGE`` build argument of environment images."""
    return named_variable("OPENENV_BASE_IMAGE")


def build_args() -> list[str]:
    """``$OPENENV_BUILD_ARGS``: more ``KEY=VALUE`` build arguments, space-separated."""
    return (named_variable("OPENENV_BUILD_ARGS") or "").split()
