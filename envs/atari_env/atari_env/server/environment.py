"""The Atari environment: the Arcade Learning Environment (ale-py, whose wheels ship the ROMs).

Each session owns one emulator. The game and its settings are chosen at ``reset``; settings not
given keep their current values (at first, those given to the constructor or taken from
``ATARI_*`` variables). Sticky actions are drawn here from a generator seeded by ``reset``, so a
seeded episode replays exactly without reloading the ROM; the emulator itself is deterministic.

A step's reward is the game's score gained over its frames: a whole number, which games bound
differently (Pong's is -1, 0 or 1), so the declared range is ``(-inf, inf)``. Only the emulator
scores: an action is an index into the episode's action set (any other is a validation error),
``frameskip`` is chosen at reset (1 to 64) and nowhere else, and a step after the episode ended
is refused with ``ResetRequiredError``.
"""

from __future__ import annotations

import copy
import difflib
import hashlib
import math
import os
import uuid
from dataclasses import dataclass, replace
from typing import Any, get_args

import numpy as np

from atari_env.models import AtariAction, AtariObservation, AtariState, ObsType
from openenv_hub import Environment
from openenv_hub.errors import ActionValidationError, ResetRequiredError
from openenv_hub.types import EnvironmentMetadata

_OBS_TYPES = get_args(ObsType)


def all_games() -> list[str]:
    """Every game ale-py ships a ROM for."""
    from ale_py import roms

    return sorted(roms.get_all_rom_ids())


@dataclass(frozen=True)
class Settings:
    """What ``reset`` may choose."""

    game: str = "breakout"
    obs_type: str = "rgb"
    frameskip: int = 4
    repeat_action_probability: float = 0.25
    full_action_space: bool = False
    mode: int | None = None
    difficulty: int | None = None
    max_episode_frames: int = 108_000

    @classmethod
    def from_environment(cls) -> Settings:
        """Defaults from ``ATARI_GAME``, ``ATARI_OBS_TYPE`` and ``ATARI_FRAMESKIP``."""
        env = os.environ
        return cls(
            game=env.get("ATARI_GAME", cls.game),
            obs_type=env.get("ATARI_OBS_TYPE", cls.obs_type),
            frameskip=int(env.get("ATARI_FRAMESKIP", cls.frameskip)),
        )

    def check(self) -> None:
        """Raise ValueError naming the first setting that cannot work (a wrong type included)."""
        self._check_types()
        games = all_games()
        if self.game not in games:
            close = difflib.get_close_matches(self.game, games, n=3)
            hint = f"; did you mean {', '.join(close)}?" if close else ""
            raise ValueError(f"Unknown game {self.game!r}{hint} ({len(games)} games are available)")
        if self.obs_type not in _OBS_TYPES:
            raise ValueError(f"obs_type must be one of {list(_OBS_TYPES)}, got {self.obs_type!r}")
        if not 1 <= self.frameskip <= 64:
            raise ValueError(f"frameskip must be between 1 and 64, got {self.frameskip}")
        if not 0.0 <= self.repeat_action_probability <= 1.0:
            raise ValueError("repeat_action_probability must be between 0 and 1")
        if self.max_episode_frames < 1:
            raise ValueError("max_episode_frames must be at least 1")

    def _check_types(self) -> None:
        wanted: dict[str, tuple[type, ...]] = {
            "game": (str,),
            "obs_type": (str,),
            "frameskip": (int,),
            "repeat_action_probability": (int, float),
            "full_action_space": (bool,),
            "mode": (int, type(None)),
            "difficulty": (int, type(None)),
            "max_episode_frames": (int,),
        }
        for name, types in wanted.items():
            value = getattr(self, name)
            number = bool not in types and isinstance(value, bool)  # True is no frame count
            if number or not isinstance(value, types):
                kinds = " or ".join("None" if t is type(None) else t.__name__ for t in types)
                raise ValueError(f"{name} must be {kinds}, got {value!r}")
        if math.isnan(self.repeat_action_probability):
            raise ValueError("repeat_action_probability must be between 0 and 1, got nan")


class AtariEnvironment(Environment[AtariAction, AtariObservation, AtariState]):
    """Atari 2600 games for agents: frames, lives and rewards from the emulator.

    Args:
        **settings: Defaults for :class:`Settings` (game, obs_type, frameskip, ...).
    """

    #: Each game scores in its own way; a reward is the whole score gained during the step.
    reward_range = (-math.inf, math.inf)

    def __init__(self, **settings: Any) -> None:
        self._settings = replace(Settings.from_environment(), **settings)
        self._ale: Any = None
        self._loaded: tuple[str, int | None, int | None] | None = None
        self._action_set: list[Any] = []
        self._rng = np.random.default_rng()
        self._last_action: Any = None
        self._state = AtariState()
        self._ended = True

    def reset(
        self, seed: int | None = None, episode_id: str | None = None, **settings: Any
    ) -> AtariObservation:
        """Start an episode; keyword arguments change settings (see :class:`Settings`)."""
        unknown = set(settings) - set(Settings.__dataclass_fields__)
        if unknown:
            raise ValueError(
                f"Unknown reset argument(s) {sorted(unknown)}; the settings are "
                f"{sorted(Settings.__dataclass_fields__)}"
            )
        chosen = replace(self._settings, **{k: v for k, v in settings.items() if v is not None})
        chosen.check()
        self._load(chosen)
        self._settings = chosen
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        ale = self._ale
        ale.reset_game()
        full = chosen.full_action_space
        self._action_set = list(ale.getLegalActionSet() if full else ale.getMinimalActionSet())
        self._last_action = self._action_set[0]
        meanings = [action.name for action in self._action_set]
        self._state = AtariState(
            episode_id=episode_id or str(uuid.uuid4()),
            seed=seed,
            action_meanings=meanings,
            lives=ale.lives(),
            **{k: v for k, v in vars(chosen).items()},
        )
        self._ended = False
        return self._observation(reward=None, action_meanings=meanings)

    # -- snapshots (exact forks; see openenv_hub.server.snapshots) ---------------------------

    def snapshot(self) -> _Snapshot:
        """The emulator's state (ale-py's ``cloneState``), the sticky actions' generator, the
        settings and the episode's bookkeeping (kept by the server, never sent)."""
        if self._ale is None:
            raise ResetRequiredError("No episode yet; call reset() to start one.")
        return _Snapshot(
            self._ale.cloneState(),
            copy.deepcopy(self._rng),
            self._last_action,
            list(self._action_set),
            self._settings,
            self._state.model_copy(deep=True),
            self._ended,
        )

    def restore(self, snapshot: _Snapshot) -> None:
        self._load(snapshot.settings)
        self._ale.restoreState(snapshot.emulator)
        self._settings = snapshot.settings
        self._rng = copy.deepcopy(snapshot.rng)
        self._last_action, self._action_set = snapshot.last_action, list(snapshot.action_set)
        self._state = snapshot.state.model_copy(deep=True)
        self._ended = snapshot.ended

    # -- replay (forks by replay; see openenv_hub.client.fork) --------------------------------

    def state_digest(self) -> str | None:
        """A hash of what decides the episode's future: the console's RAM, the episode's frame
        count, lives and end, the settings, the last action and, where sticky actions are
        drawn, the generator's state (not the frames since the game was loaded)."""
        if self._ale is None:
            return None
        digest = hashlib.blake2b(digest_size=12)
        digest.update(self._ale.getRAM().tobytes())
        sticky = self._settings.repeat_action_probability > 0.0
        rng = self._rng.bit_generator.state if sticky else None
        facts = (
            int(self._ale.getEpisodeFrameNumber()),
            self._ale.lives(),
            self._ended,
            sorted(vars(self._settings).items()),
            getattr(self._last_action, "name", None),
            rng,
        )
        digest.update(repr(facts).encode())
        return digest.hexdigest()

    def replay_refusal(self) -> str | None:
        """Unseeded sticky actions are drawn from a generator no reset fixed."""
        if self._state.seed is None and self._settings.repeat_action_probability > 0.0:
            return (
                "no seed was given at reset, and sticky actions (repeat_action_probability "
                f"{self._settings.repeat_action_probability}) are drawn at random: reset with "
                "a seed, or with repeat_action_probability=0"
            )
        return None

    def _load(self, chosen: Settings) -> None:
        key = (chosen.game, chosen.mode, chosen.difficulty)
        if self._ale is not None and self._loaded == key:
            return
        from ale_py import ALEInterface, LoggerMode, roms

        ALEInterface.setLoggerMode(LoggerMode.Error)
        ale = ALEInterface()
        ale.setInt("random_seed", 0)  # the emulator stays deterministic; see the module doc
        ale.setFloat("repeat_action_probability", 0.0)
        ale.loadROM(roms.get_rom_path(chosen.game))
        for name, value, available in (
            ("mode", chosen.mode, ale.getAvailableModes()),
            ("difficulty", chosen.difficulty, ale.getAvailableDifficulties()),
        ):
            if value is not None:
                if value not in available:
                    raise ValueError(f"{chosen.game} has no {name} {value}; it has {available}")
                (ale.setMode if name == "mode" else ale.setDifficulty)(value)
        self._ale, self._loaded = ale, key

    def step(
        self, action: AtariAction, timeout_s: float | None = None, **kwargs: Any
    ) -> AtariObservation:
        if self._ale is None:
            raise ResetRequiredError("No episode yet; call reset() to start one.")
        if self._ended:
            raise ResetRequiredError("The episode is over; call reset() to start a new one.")
        actions = self._action_set
        if not 0 <= action.action < len(actions):
            raise _not_in_action_set(action.action, self._settings.game, actions)
        chosen = actions[action.action]
        ale, settings, rng = self._ale, self._settings, self._rng
        sticky = settings.repeat_action_probability
        reward = 0.0
        for _ in range(settings.frameskip):
            if sticky == 0.0 or rng.random() >= sticky:
                self._last_action = chosen
            reward += ale.act(self._last_action)
            if ale.game_over():
                break
        state = self._state
        state.step_count += 1
        state.episode_return += reward
        return self._observation(reward=reward)

    def _observation(
        self, reward: float | None, action_meanings: list[str] | None = None
    ) -> AtariObservation:
        ale, settings, state = self._ale, self._settings, self._state
        terminated = bool(ale.game_over())
        frame_number = int(ale.getEpisodeFrameNumber())
        truncated = not terminated and frame_number >= settings.max_episode_frames
        self._ended = terminated or truncated
        state.lives, state.episode_frame_number, state.game_over = (
            ale.lives(),
            frame_number,
            terminated,
        )
        frame = ram = None
        if settings.obs_type == "rgb":
            frame = ale.getScreenRGB()
        elif settings.obs_type == "grayscale":
            frame = ale.getScreenGrayscale()
        else:
            ram = ale.getRAM().tolist()
        return AtariObservation(
            frame=frame,
            ram=ram,
            lives=state.lives,
            episode_frame_number=frame_number,
            frame_number=int(ale.getFrameNumber()),
            terminated=terminated,
            truncated=truncated,
            action_meanings=action_meanings or [],
            reward=reward,
            done=terminated or truncated,
        )

    @property
    def state(self) -> AtariState:
        return self._state

    def get_metadata(self) -> EnvironmentMetadata:
        return EnvironmentMetadata(
            name="atari_env",
            description="Atari 2600 games from the Arcade Learning Environment: pick a game at "
            "reset, send action indices, get frames, lives and rewards.",
            version="0.1.0",
        )


@dataclass(frozen=True)
class _Snapshot:
    emulator: Any  # ale_py.ALEState
    rng: np.random.Generator
    last_action: Any
    action_set: list[Any]
    settings: Settings
    state: AtariState
    ended: bool


def _not_in_action_set(index: int, game: str, actions: list[Any]) -> ActionValidationError:
    names = ", ".join(f"{i} {a.name}" for i, a in enumerate(actions))
    message = (
        f"Action {index} is not in the action set of {game} ({names}); reset with "
        "full_action_space=True for all 18 actions."
    )
    error = {"type": "action_set", "loc": ["action"], "msg": message, "input": index}
    return ActionValidationError(message, data={"errors": [error]})
