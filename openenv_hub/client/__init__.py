"""Clients of environment servers: async, sync, generic, MCP, and pools of sessions.

Layer: client.
"""

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
]
