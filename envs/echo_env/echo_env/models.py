"""The echo environment's actions and observations: the standard MCP tool messages."""

from openenv_hub.types import (
    CallToolAction,
    CallToolObservation,
    ListToolsAction,
    ListToolsObservation,
    State,
)

__all__ = [
    "CallToolAction",
    "CallToolObservation",
    "ListToolsAction",
    "ListToolsObservation",
    "State",
]
