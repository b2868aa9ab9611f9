"""openenv-hub: make, debug and share RL and agent environments on the Hugging Face Hub.

The names below are loaded on first use, so ``import openenv_hub`` stays fast and a client-only
program never imports the server, gradio or huggingface_hub.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from openenv_hub.support import moved_modules as _moved_modules

__version__ = "0.1.0"

_moved_modules.install()  # the modules that moved into model/, transport/ and support/

_EXPORTS: dict[str, str] = {
    # types
    "Action": "openenv_hub.types",
    "Observation": "openenv_hub.types",
    "State": "openenv_hub.types",
    "StepResult": "openenv_hub.types",
    "EnvironmentMetadata": "openenv_hub.types",
    "Tool": "openenv_hub.types",
    "ToolError": "openenv_hub.types",
    "ToolErrorType": "openenv_hub.types",
    "ListToolsAction": "openenv_hub.types",
    "CallToolAction": "openenv_hub.types",
    "ListToolsObservation": "openenv_hub.types",
    "CallToolObservation": "openenv_hub.types",
    # environments
    "Environment": "openenv_hub.model.environment",
    "InProcess": "openenv_hub.model.in_process",
    "MCPEnvironment": "openenv_hub.model.tools",
    "tool": "openenv_hub.model.tools",
    # server
    "create_app": "openenv_hub.server.app",
    "serve_app": "openenv_hub.server.app",
    # clients
    "EnvClient": "openenv_hub.client.env_client",
    "SyncEnvClient": "openenv_hub.client.sync_client",
    "GenericEnvClient": "openenv_hub.client.generic",
    "MCPToolClient": "openenv_hub.client.mcp",
    "SyncMCPToolClient": "openenv_hub.client.mcp",
    "EnvPool": "openenv_hub.client.pool",
    "SyncEnvPool": "openenv_hub.client.sync_pool",
}

#: Old names, still importable: each warns (on use) and is not in ``__all__``.
_DEPRECATED: dict[str, str] = {
    "run": "openenv_hub.server.app",  # serve_app
}

__all__ = ["__version__", *_EXPORTS]


def _web_ui(app: Any, pool: Any, **ui_options: Any) -> None:
    """The web UI's mount, imported only when an app asks for it (``create_app(web=True)``)."""
    from openenv_hub.ui.later import mount_ui_when_ready

    mount_ui_when_ready(app, pool, **ui_options)


def __getattr__(name: str) -> Any:
    if name in _DEPRECATED:  # not cached: the old name stays out of the package's namespace
        return getattr(importlib.import_module(_DEPRECATED[name]), name)
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'openenv_hub' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    if name == "create_app":  # the server imports no UI: give it the web UI's mount
        importlib.import_module("openenv_hub.server.web_ui").register_web_ui(_web_ui)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)


if TYPE_CHECKING:
    from openenv_hub.client.env_client import EnvClient
    from openenv_hub.client.generic import GenericEnvClient
    from openenv_hub.client.mcp import MCPToolClient, SyncMCPToolClient
    from openenv_hub.client.pool import EnvPool
    from openenv_hub.client.sync_client import SyncEnvClient
    from openenv_hub.client.sync_pool import SyncEnvPool
    from openenv_hub.model.environment import Environment
    from openenv_hub.model.in_process import InProcess
    from openenv_hub.model.tools import MCPEnvironment, tool
    from openenv_hub.server.app import create_app, serve_app
    from openenv_hub.types import (
        Action,
        CallToolAction,
        CallToolObservation,
        EnvironmentMetadata,
        ListToolsAction,
        ListToolsObservation,
        Observation,
        State,
        StepResult,
        Tool,
        ToolError,
        ToolErrorType,
    )
