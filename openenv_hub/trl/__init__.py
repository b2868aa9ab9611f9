"""Training with TRL's ``GRPOTrainer``: environments as TRL tools
(:mod:`openenv_hub.trl.environment_tools`).

Layer: client.
"""

from __future__ import annotations

from openenv_hub.trl.environment_tools import ToolEnvironment, environment_factory, tool_schemas

__all__ = ["ToolEnvironment", "environment_factory", "tool_schemas"]
