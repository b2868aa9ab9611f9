"""What an agent sends to the Atari environment, and what it gets back."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from openenv_hub import Action, Observation, State
from openenv_hub.frames import ImageArray

ObsType = Literal["rgb", "grayscale", "ram"]


class AtariAction(Action):
    """One agent step: an index into the episode's action set, repeated for ``frameskip`` frames."""

    action: int = Field(
        ...,
        ge=0,
        le=17,
        description="Index into the action set (see action_meanings; 0 is NOOP)",
    )


class AtariObservation(Observation):
    """The screen (or RAM) after a step, with the game's bookkeeping.

    ``frame_number`` counts the emulator's frames since the session loaded the game, across
    its episodes: it is no part of an episode, so a fork by replay leaves it out of the
    comparison (``replay_ignores``); ``episode_frame_number`` is the episode's own count.
    """

    replay_ignores: ClassVar[frozenset[str]] = frozenset({"frame_number"})

    frame: ImageArray | None = Field(
        None, description="The screen: 210x160x3 (rgb) or 210x160 (grayscale), a PNG on the wire"
    )
    ram: list[int] | None = Field(None, description="The 128 bytes of RAM (obs_type 'ram')")
    lives: int = Field(0, description="Lives left")
    episode_frame_number: int = Field(0, description="Emulator frames since the episode began")
    frame_number: int = Field(
        0,
        description="Emulator frames since the session loaded the game, across episodes (left "
        "out of replay checks; episode_frame_number is the episode's own count)",
    )
    terminated: bool = Field(False, description="The game is over")
    truncated: bool = Field(False, description="The episode hit max_episode_frames")
    action_meanings: list[str] = Field(
        default_factory=list,
        description="What each action index does (sent by reset only; also in the state)",
    )


class AtariState(State):
    """The episode's settings, chosen at reset, and its progress."""

    game: str = "breakout"
    obs_type: ObsType = "rgb"
    frameskip: int = 4
    repeat_action_probability: float = 0.25
    full_action_space: bool = False
    mode: int | None = None
    difficulty: int | None = None
    max_episode_frames: int = 108_000
    seed: int | None = None
    action_meanings: list[str] = Field(default_factory=list)
    lives: int = 0
    episode_frame_number: int = 0
    episode_return: float = 0.0
    game_over: bool = False
