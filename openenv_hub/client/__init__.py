"""Clients of environment servers: async, sync, generic and MCP."""

from openenv_hub.client.env_client import EnvClient
from openenv_hub.client.generic import GenericEnvClient
from openenv_hub.client.mcp import MCPToolClient, SyncMCPToolClient
from openenv_hub.client.sync_client import SyncEnvClient

__all__ = ["EnvClient", "GenericEnvClient", "MCPToolClient", "SyncEnvClient", "SyncMCPToolClient"]
