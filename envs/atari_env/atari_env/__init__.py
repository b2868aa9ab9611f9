"""The Atari environment: client and models (``atari_env.server`` holds the server side)."""

from atari_env.client import AtariEnv
from atari_env.models import AtariAction, AtariObservation, AtariState

__all__ = ["AtariAction", "AtariEnv", "AtariObservation", "AtariState"]
