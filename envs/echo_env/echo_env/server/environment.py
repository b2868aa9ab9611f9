"""The echo environment: two MCP tools that repeat what they are given."""

from __future__ import annotations

from typing import Any

from openenv_hub import MCPEnvironment, Observation, tool
from openenv_hub.rubrics import WeightedSum, rubric
from openenv_hub.types import CallToolAction, CallToolObservation, EnvironmentMetadata

#: A message this long (or longer) earns the whole length reward.
FULL_LENGTH = 32


@rubric(range=(0, 1))
def tool_succeeded(observation: Observation) -> float:
    """1 when a tool was called and returned a result, else 0."""
    return float(isinstance(observation, CallToolObservation) and observation.error is None)


@rubric(range=(0, 1))
def message_length(action: Any) -> float:
    """The message's length over FULL_LENGTH characters, at most 1."""
    if not isinstance(action, CallToolAction):
        return 0.0
    return min(len(str(action.arguments.get("message", ""))) / FULL_LENGTH, 1.0)


class EchoEnvironment(MCPEnvironment):
    """Echoes messages back through MCP tools; the smallest complete environment.

    Each step is rewarded by its rubric: half for a tool call that succeeded, half for the
    message's length (full marks from 32 characters), so every reward lies in [0, 1] (the
    rubric's range, published in ``/metadata``). Its tools keep no episode, so they may be
    called before ``reset``.
    """

    rubric = WeightedSum([tool_succeeded, message_length], weights=[0.5, 0.5])
    ALLOWS_STEP_BEFORE_RESET = True

    def reset(
        self, seed: int | None = None, episode_id: str | None = None, **kwargs: Any
    ) -> Observation:
        super().reset(seed=seed, episode_id=episode_id)
        return Observation(done=False, reward=0.0, metadata={"status": "ready"})

    def state_digest(self) -> str | None:
        """Its tools keep nothing: the episode's state is its step count."""
        return f"echo-{self.state.step_count}"

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
