"""``GenericEnvClient``: dicts in, dicts out, for any environment without its models.

Layer: client.
"""

from __future__ import annotations

from typing import Any

from openenv_hub.client.env_client import EnvClient

__all__ = ["GenericEnvClient"]


class GenericEnvClient(EnvClient[dict[str, Any], dict[str, Any], dict[str, Any]]):
    """Drives any environment with plain dicts: actions are sent as given, observations and
    state come back as dicts.

    Example::

        async with GenericEnvClient("http://127.0.0.1:8000") as env:
            result = await env.reset()
            result = await env.step({"message": "hello"})
            result.observation["echoed_message"]
    """

    observation_type = None
    state_type = None
