"""The coding environment: client and models (``coding_env.server`` holds the server side)."""

from coding_env.client import CodingEnv
from coding_env.models import (
    CallToolAction,
    CallToolObservation,
    CodeAction,
    CodeObservation,
    CodingState,
    ExecutionError,
    ListToolsAction,
    ListToolsObservation,
)

__all__ = [
    "CallToolAction",
    "CallToolObservation",
    "CodeAction",
    "CodeObservation",
    "CodingEnv",
    "CodingState",
    "ExecutionError",
    "ListToolsAction",
    "ListToolsObservation",
]
