"""The echo environment: two MCP tools that repeat what they are given."""

from __future__ import annotations

from typing import Any

from openenv_hub import MCPEnvironment, Observation, tool
from openenv_hub.types import EnvironmentMetadata


class EchoEnvironment(MCPEnvironment):
    """Echoes messages back through MCP tools; the smallest complete environment."""

    def reset(
        self, seed: int | None = None, episode_id: str | None = None, **kwargs: Any
    ) -> Observation:
        super().reset(seed=seed, episode_id=episode_id)
        return Observation(done=False, reward=0.0, metadata={"status": "ready"})

    @tool
    async def echo_message(self, message: str) -> str:
        """Echo back the provided message.

        Args:
            message: The message to echo back

        Returns:
            The same message that was provided
        """
        return message

    @tool
    async def echo_with_length(self, message: str) -> dict[str, Any]:
        """Echo back the message with its length.

        Args:
            message: The message to echo back

        Returns:
            Dictionary with the message and its length
        """
        return {"message": message, "length": len(message)}

    def get_metadata(self) -> EnvironmentMetadata:
        return EnvironmentMetadata(
            name="echo_env",
            description="Echoes messages back through MCP tools.",
            version="0.1.0",
        )
