"""pytest plugin: run the whole session against a :class:`~openenv_hub.localhub.LocalHub` on
127.0.0.1. Opt-in: installing openenv-hub changes no pytest run that does not ask for it.

Ask for it with ``-p openenv_hub.testing`` (on the command line, or in ``addopts``), or with
``pytest_plugins = ["openenv_hub.testing"]`` in the root ``conftest.py``; the module name
``openenv_hub.testing.pytest_plugin`` works in both places too.

``huggingface_hub`` reads ``HF_ENDPOINT`` once, when it is imported. This module therefore
picks a free port and exports the environment *when it is loaded*, before test modules (or
the code they import) load huggingface_hub:

* ``HF_ENDPOINT=http://127.0.0.1:<port>``
* ``HF_TOKEN=hf_alice_write`` (a demo token of LocalHub's user alice)
* ``HF_HOME`` and ``HF_TOKEN_PATH`` inside a temporary directory
* ``HF_HUB_DISABLE_TELEMETRY=1`` (no ``/api/agent-harnesses`` request)
* ``HF_HUB_DISABLE_PROGRESS_BARS=1``
* ``GIT_TERMINAL_PROMPT=0`` (git fails instead of prompting for a password)

``HF_OIDC_RESOURCE``, ``HUGGING_FACE_HUB_TOKEN`` and ``HF_HUB_OFFLINE`` are
unset. Everything is restored when the session ends.

The server itself starts lazily, on that port, the first time the ``local_hub`` fixture is
used, with LocalHub's demo tokens (``hf_alice_write``, ``hf_bob_write``, ``hf_alice_read``).
Set ``OPENENV_LOCALHUB_PORT`` to pin the port, ``OPENENV_LOCALHUB_RUN_SPACES=1`` to have it
build and run pushed Docker Spaces (with ``BASE_IMAGE`` from ``OPENENV_BASE_IMAGE`` and the
wheels builds install from ``OPENENV_SPACE_WHEELHOUSE``, when set; see docs/runtimes.md), and
``OPENENV_LOCALHUB_RUN_JOBS=1`` to have it run Jobs on the Docker engine (built the same way).

Fixtures:

* ``local_hub`` (session): the running :class:`~openenv_hub.localhub.LocalHub`.
* ``hub_env``: per-test :class:`HubEnv` (``login``, ``logout``, ``api``, ``repo_id``).
* ``make_space``: factory of fresh docker Spaces, deleted after the test.

Layer: ui.
"""

from __future__ import annotations

import atexit
import os
import shutil
import socket
import sys
import tempfile
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import pytest

from openenv_hub.support.settings import base_image as base_image_setting
from openenv_hub.support.settings import environment, is_true, named_variable

if TYPE_CHECKING:
    from huggingface_hub import HfApi

    from openenv_hub.localhub import LocalHub
    from openenv_hub.localhub.auth import Role

PLUGIN_NAME = "openenv_hub.testing.pytest_plugin"
PORT_VARIABLE = "OPENENV_LOCALHUB_PORT"
RUN_SPACES_VARIABLE = "OPENENV_LOCALHUB_RUN_SPACES"
RUN_JOBS_VARIABLE = "OPENENV_LOCALHUB_RUN_JOBS"
DEFAULT_TOKEN = "hf_alice_write"
HOST = "127.0.0.1"

_CLEARED_VARIABLES = ("HF_OIDC_RESOURCE", "HUGGING_FACE_HUB_TOKEN", "HF_HUB_OFFLINE")


@dataclass(frozen=True)
class SessionSettings:
    """Where this session's LocalHub lives, fixed when the plugin loads."""

    port: int
    root: Path

    @property
    def endpoint(self) -> str:
        """``http://127.0.0.1:<port>``."""
        return f"http://{HOST}:{self.port}"


_settings: SessionSettings | None = None
_saved_environment: dict[str, str | None] = {}


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


def _export(name: str, value: str | None) -> None:
    _saved_environment.setdefault(name, environment().get(name))
    if value is None:
        os.environ.pop(name, None)
    else:
        os.environ[name] = value


def configure_environment() -> SessionSettings:
    """Choose the port and export the ``HF_*`` variables (idempotent).

    Returns:
        The session's settings.
    """
    global _settings
    if _settings is None:
        port = int(named_variable(PORT_VARIABLE) or 0) or _free_port()
        root = Path(tempfile.mkdtemp(prefix="localhub-pytest-"))
        # pytest_unconfigure deletes it; this covers a process that imported the plugin alone.
        atexit.register(shutil.rmtree, root, ignore_errors=True)
        _settings = SessionSettings(port=port, root=root)
        hf_home = root / "hf_home"
        hf_home.mkdir()
        for name in _CLEARED_VARIABLES:
            _export(name, None)
        _export("HF_ENDPOINT", _settings.endpoint)
        _export("HF_TOKEN", DEFAULT_TOKEN)
        _export("HF_HOME", str(hf_home))
        _export("HF_TOKEN_PATH", str(hf_home / "token"))
        _export("HF_HUB_DISABLE_TELEMETRY", "1")
        _export("HF_HUB_DISABLE_PROGRESS_BARS", "1")
        _export("GIT_TERMINAL_PROMPT", "0")
    return _settings


configure_environment()


def endpoint_problem() -> str | None:
    """Explain why huggingface_hub would not talk to LocalHub, or return None.

    huggingface_hub freezes ``HF_ENDPOINT`` when ``huggingface_hub.constants``
    is first imported; if that happened before this plugin loaded, module-level
    helpers such as ``hf_hub_download`` would contact the real Hub.
    """
    settings = configure_environment()
    constants = sys.modules.get("huggingface_hub.constants")
    endpoint = getattr(constants, "ENDPOINT", settings.endpoint)
    if endpoint == settings.endpoint:
        return None
    return (
        f"huggingface_hub was imported before {PLUGIN_NAME} set HF_ENDPOINT "
        f"(it uses {endpoint}). Load the plugin early, with `-p openenv_hub.testing` or "
        '`pytest_plugins = ["openenv_hub.testing"]` in the root conftest.py, and do not '
        "import huggingface_hub at the top of conftest.py files."
    )


def pytest_configure(config: pytest.Config) -> None:
    """Make sure the environment is exported (the module import already did it)."""
    configure_environment()


def pytest_sessionstart(session: pytest.Session) -> None:
    """Abort the run before any test if the endpoint was frozen too early."""
    problem = endpoint_problem()
    if problem:
        raise pytest.UsageError(problem)


def pytest_unconfigure(config: pytest.Config) -> None:
    """Restore the environment and delete the session's temporary files."""
    global _settings
    for name, value in _saved_environment.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
    _saved_environment.clear()
    if _settings is not None:
        shutil.rmtree(_settings.root, ignore_errors=True)
        _settings = None


@pytest.fixture(scope="session")
def local_hub() -> Iterator[LocalHub]:
    """The session's LocalHub, started on first use at ``HF_ENDPOINT``."""
    from openenv_hub.localhub import DEMO_TOKENS, LocalHub

    problem = endpoint_problem()
    if problem:
        pytest.fail(problem, pytrace=False)
    settings = configure_environment()
    base_image = base_image_setting()
    hub = LocalHub(
        data_dir=settings.root / "data",
        tokens=DEMO_TOKENS,
        host=HOST,
        port=settings.port,
        run_spaces=_enabled(RUN_SPACES_VARIABLE),
        space_build_args={"BASE_IMAGE": base_image} if base_image else None,
        space_wheelhouse=named_variable("OPENENV_SPACE_WHEELHOUSE"),
        run_jobs=_enabled(RUN_JOBS_VARIABLE),
    )
    try:
        hub.start()
    except OSError as exc:
        raise RuntimeError(
            f"LocalHub could not bind {settings.endpoint}: {exc}. "
            f"Pin a free port with {PORT_VARIABLE}=<port>."
        ) from exc
    yield hub
    hub.stop()


def _enabled(variable: str) -> bool:
    return is_true(variable)


@dataclass
class HubEnv:
    """Per-test view of the LocalHub session with helpers to switch users.

    Attributes:
        hub: The running server.
        monkeypatch: Used to change ``HF_TOKEN``; undone after the test.
    """

    hub: LocalHub
    monkeypatch: pytest.MonkeyPatch

    @property
    def endpoint(self) -> str:
        """The server's base URL (also in ``HF_ENDPOINT``)."""
        return self.hub.endpoint

    def login(self, user: str, role: Role = "write") -> str:
        """Make ``user`` the default identity (``HF_TOKEN``) and return its token."""
        token = self.hub.token_for(user, role)
        self.monkeypatch.setenv("HF_TOKEN", token)
        return token

    def logout(self) -> None:
        """Make the default client anonymous."""
        self.monkeypatch.delenv("HF_TOKEN", raising=False)

    def api(self, user: str | None = None, role: Role = "write") -> HfApi:
        """An ``HfApi`` for the server, as ``user`` or with the current ``HF_TOKEN``."""
        from huggingface_hub import HfApi

        token = self.hub.token_for(user, role) if user else None
        return HfApi(endpoint=self.endpoint, token=token)

    def repo_id(self, prefix: str = "repo", namespace: str = "alice") -> str:
        """A fresh ``namespace/prefix-<random>`` id, unique across the session."""
        return f"{namespace}/{prefix}-{uuid.uuid4().hex[:10]}"


@pytest.fixture
def hub_env(local_hub: LocalHub, monkeypatch: pytest.MonkeyPatch) -> HubEnv:
    """Per-test helpers over ``local_hub``; ``HF_TOKEN`` is reset to alice afterwards."""
    monkeypatch.setenv("HF_ENDPOINT", local_hub.endpoint)
    monkeypatch.setenv("HF_TOKEN", DEFAULT_TOKEN)
    return HubEnv(local_hub, monkeypatch)


class SpaceFactory(Protocol):
    """Signature of the ``make_space`` fixture."""

    def __call__(
        self,
        namespace: str = "alice",
        *,
        private: bool = False,
        files: Mapping[str, str | bytes] | None = None,
    ) -> str:
        """Create a docker Space with a fresh name (and ``files``); return its id."""
        ...


@pytest.fixture
def make_space(hub_env: HubEnv) -> Iterator[SpaceFactory]:
    """Factory creating uniquely named docker Spaces as alice; deleted after the test."""
    from huggingface_hub import CommitOperationAdd

    api = hub_env.api("alice")
    created: list[str] = []

    def factory(
        namespace: str = "alice",
        *,
        private: bool = False,
        files: Mapping[str, str | bytes] | None = None,
    ) -> str:
        repo_id = hub_env.repo_id("space", namespace)
        api.create_repo(repo_id, repo_type="space", space_sdk="docker", private=private)
        created.append(repo_id)
        if files:
            operations = [
                CommitOperationAdd(path, content.encode() if isinstance(content, str) else content)
                for path, content in files.items()
            ]
            api.create_commit(repo_id, operations, commit_message="add files", repo_type="space")
        return repo_id

    yield factory
    for repo_id in created:
        api.delete_repo(repo_id, repo_type="space", missing_ok=True)
