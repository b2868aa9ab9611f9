"""``AtariEnv``: the typed client of the Atari environment."""

from __future__ import annotations

from atari_env.models import AtariAction, AtariObservation, AtariState
from openenv_hub import EnvClient


class AtariEnv(EnvClient[AtariAction, AtariObservation, AtariState]):
    """Client of the Atari environment; frames arrive as numpy arrays.

    Example::

        async with AtariEnv(base_url="http://127.0.0.1:8000") as env:
            result = await env.reset(game="breakout", seed=1)
            result.observation.action_meanings  # ['NOOP', 'FIRE', 'RIGHT', 'LEFT']
            result = await env.step(AtariAction(action=1))
            result.observation.frame.shape  # (210, 160, 3)
    """

    action_type = AtariAction
    observation_type = AtariObservation
    state_type = AtariState


__all__ = ["AtariEnv"]
