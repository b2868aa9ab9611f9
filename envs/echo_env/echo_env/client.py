"""``EchoEnv``: the typed client of the echo environment."""

from openenv_hub import MCPToolClient


class EchoEnv(MCPToolClient):
    """Client of the echo environment.

    Example::

        async with EchoEnv(base_url="http://127.0.0.1:8000") as env:
            await env.reset()
            result = await env.step(CallToolAction(tool_name="echo_message", arguments={"message": "Hi"}))
            result.observation.result["data"]  # "Hi"
            await env.call_tool("echo_with_length", message="Hi")  # {"message": "Hi", "length": 2}
    """


__all__ = ["EchoEnv"]
