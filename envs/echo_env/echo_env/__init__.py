"""The echo environment: client and models (``echo_env.server`` holds the server side)."""

from echo_env.client import EchoEnv
from echo_env.models import (
    CallToolAction,
    CallToolObservation,
    ListToolsAction,
    ListToolsObservation,
    State,
)

__all__ = [
    "CallToolAction",
    "CallToolObservation",
    "EchoEnv",
    "ListToolsAction",
    "ListToolsObservation",
    "State",
]
