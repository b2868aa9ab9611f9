"""Clients of environment servers: async, sync, generic, MCP, and pools of sessions.

A client whose server sends its own observation type overrides ``_parse_result`` and builds
the result with :func:`observation_fields` and :func:`step_result`, as the generic clients do.

Layer: client.
"""

from openenv_hub.client._core import observation_fields, step_result
from openenv_hub.client.env_client import EnvClient
from openenv_hub.client.generic import GenericEnvClient
from openenv_hub.client.mcp import MCPToolClient, SyncMCPToolClient
from openenv_hub.client.pool import EnvPool
from openenv_hub.client.sync_client import SyncEnvClient
from openenv_hub.client.sync_pool import SyncEnvPool

__all__ = [
    "EnvClient",
    "EnvPool",
    "GenericEnvClient",
    "MCPToolClient",
    "SyncEnvClient",
    "SyncEnvPool",
    "SyncMCPToolClient",
    "observation_fields",
    "step_result",
]
