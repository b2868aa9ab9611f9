"""Serve any Gymnasium environment over OpenEnv's protocol.

One line makes an app::

    from openenv_hub import create_app
    from openenv_hub.gymnasium import GymnasiumEnvironment

    app = create_app(GymnasiumEnvironment.factory("Blackjack-v1"))

The factory builds one environment up front to read its spaces, and from them the action and
observation models that the server validates against and publishes at ``/schema``. Every
session then gets an environment of its own.

On the wire an action is ``{"action": <a value of the action space>}``; an observation holds
``observation`` (a value of the observation space), ``terminated``, ``truncated``, ``info``
and, with ``render=True``, ``frame`` (the ``render()`` image, a PNG: see
:mod:`openenv_hub.frames`). ``done`` is ``terminated or truncated``. ``reset(seed=...)`` seeds
the environment as Gymnasium does, so the same seed and the same actions give the same
trajectory; ``reset(options={...})`` passes options through. ``snapshot()`` / ``restore()``
copy the whole environment (``copy.deepcopy``), so a recorded episode forks exactly. The server
refuses a step before the first reset (a stateless ``POST /step`` resets its fresh environment
first, as for every environment); a step after the episode ended is refused with
``ResetRequiredError``.

An action is validated against the action space before the environment sees it (bounds, shape,
whole numbers, a ``Text`` space's length and characters), so the environment's own
``action_space.contains`` checks never fail on the wire's input. The reward range is the one
given to the factory (``reward_range=(low, high)``), else the environment's own
``reward_range`` attribute when it has one, else ``(-inf, inf)``; the server publishes it and
flags any reward outside it.

gymnasium is an optional dependency: ``pip install "openenv-hub[gymnasium]"``.

Layer: client.
"""

from __future__ import annotations

import contextlib
import copy
import importlib
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Optional

from pydantic import Field, create_model

from openenv_hub.environment import Environment
from openenv_hub.errors import ConfigurationError, DependencyNotInstalledError, ResetRequiredError
from openenv_hub.frames import ImageArray
from openenv_hub.gym_spaces import field_type, from_wire, jsonable, to_wire
from openenv_hub.rubrics.ranges import reward_range as checked_range
from openenv_hub.types import Action, EnvironmentMetadata, Observation, State

if TYPE_CHECKING:
    from openenv_hub.client.env_client import EnvClient

__all__ = [
    "GymnasiumEnvironment",
    "GymnasiumFactory",
    "GymnasiumModels",
    "GymnasiumObservation",
    "GymnasiumState",
]

#: Modules that register a namespace of environment ids when imported.
_NAMESPACE_MODULES = {"ALE": "ale_py"}


def _gymnasium() -> Any:
    try:
        import gymnasium
    except ImportError:
        raise DependencyNotInstalledError(
            "gymnasium", "gymnasium", feature="Serving Gymnasium environments"
        ) from None
    return gymnasium


class GymnasiumObservation(Observation):
    """Fields every Gymnasium observation carries besides ``observation`` itself."""

    terminated: bool = Field(False, description="The episode reached a terminal state.")
    truncated: bool = Field(False, description="The episode was cut short (e.g. a time limit).")
    info: dict[str, Any] = Field(default_factory=dict, description="The info dict, JSON-ready.")
    frame: ImageArray | None = Field(None, description="render() output, with render=True.")


class GymnasiumState(State):
    env_id: str = ""
    seed: int | None = None
    episode_return: float = 0.0
    terminated: bool = False
    truncated: bool = False


@dataclass(frozen=True)
class GymnasiumModels:
    """The action and observation models built from one environment's spaces."""

    action_cls: type[Action]
    observation_cls: type[GymnasiumObservation]

    @classmethod
    def of(cls, env: Any, name: str) -> GymnasiumModels:
        prefix = "".join(c if c.isalnum() else "_" for c in name)
        action_type = field_type(env.action_space, name="action")
        observation_type = field_type(env.observation_space, name="observation", check_bounds=False)
        action_cls = create_model(
            f"{prefix}Action",
            __base__=Action,
            __doc__=f"An action of {name}: a value of {env.action_space}.",
            action=(action_type, Field(..., description=f"A value of {env.action_space}")),
        )
        observation_cls = create_model(
            f"{prefix}Observation",
            __base__=GymnasiumObservation,
            __doc__=f"An observation of {name}.",
            observation=(
                Optional[observation_type],  # noqa: UP045 - a runtime type expression
                Field(None, description=f"A value of {env.observation_space}"),
            ),
        )
        return cls(action_cls, observation_cls)


EnvSource = Any  # an id, an EnvSpec, a gymnasium.Env class or instance, or a function


def make_env(source: EnvSource, *, render: bool = False, **kwargs: Any) -> Any:
    """A new ``gymnasium.Env`` from an id, a spec, a class, an instance (copied) or a function."""
    gym = _gymnasium()
    render_kwargs = {"render_mode": "rgb_array"} if render else {}
    if isinstance(source, (str, gym.envs.registration.EnvSpec)):
        return _make_registered(gym, source, {**render_kwargs, **kwargs})
    if isinstance(source, gym.Env):
        try:
            return copy.deepcopy(source)
        except Exception as exc:
            raise ConfigurationError(
                f"Each session needs its own copy of {type(source).__name__}, and copying it "
                f"failed ({type(exc).__name__}: {exc}). Pass the class or a function that "
                "builds a new environment instead of an instance."
            ) from exc
    if callable(source):
        env = source(**render_kwargs, **kwargs)
        if not isinstance(env, gym.Env):
            raise ConfigurationError(
                f"{getattr(source, '__name__', source)!r} returned {type(env).__name__}, "
                "not a gymnasium.Env"
            )
        return env
    raise ConfigurationError(
        f"Cannot build a Gymnasium environment from {type(source).__name__}; pass an id such "
        "as 'CartPole-v1', a gymnasium.Env class or instance, or a function returning one."
    )


def _make_registered(gym: Any, source: Any, kwargs: dict[str, Any]) -> Any:
    env_id = source if isinstance(source, str) else source.id
    namespace = env_id.split(":")[-1].split("/")[0] if "/" in env_id else None
    module = _NAMESPACE_MODULES.get(namespace or "")
    if module is not None and ":" not in env_id:
        # When the module is missing, gymnasium's own error below names the package.
        with contextlib.suppress(ImportError):
            gym.register_envs(importlib.import_module(module))
    try:
        return gym.make(source, **kwargs)
    except gym.error.Error as exc:
        raise ConfigurationError(
            f"Gymnasium cannot make {env_id!r}: {exc} (ids from other packages can be "
            "written 'module:Id', e.g. 'ale_py:ALE/Pong-v5')"
        ) from exc


class GymnasiumEnvironment(Environment[Action, GymnasiumObservation, GymnasiumState]):
    """A Gymnasium environment as an OpenEnv environment (one instance per session).

    Args:
        env: An environment id (``"Blackjack-v1"``), an ``EnvSpec``, a ``gymnasium.Env``
            class, an instance (copied), or a function returning a new environment.
        render: Make it with ``render_mode="rgb_array"`` and send each ``render()`` frame.
        models: Models built from the same spaces (the factory passes its own).
        reward_range: The ``(low, high)`` its rewards lie in; default: the environment's own
            ``reward_range`` attribute, if it has one, else ``(-inf, inf)``.
        **make_kwargs: Passed to ``gymnasium.make`` or to the class or function.
    """

    def __init__(
        self,
        env: EnvSource,
        *,
        render: bool = False,
        models: GymnasiumModels | None = None,
        reward_range: tuple[float, float] | None = None,
        **make_kwargs: Any,
    ) -> None:
        self.env = make_env(env, render=render, **make_kwargs)
        self.env_id = _name_of(env, self.env)
        self.render_frames = render
        self.models = models or GymnasiumModels.of(self.env, self.env_id)
        self.reward_range = _reward_range_of(self.env, self.env_id, reward_range)
        self._state = GymnasiumState(env_id=self.env_id)
        self._needs_reset = True

    @classmethod
    def factory(
        cls,
        env: EnvSource,
        *,
        render: bool = False,
        reward_range: tuple[float, float] | None = None,
        **make_kwargs: Any,
    ) -> GymnasiumFactory:
        """A factory for ``create_app`` that also declares the action and observation models."""
        return GymnasiumFactory(
            env,
            render=render,
            reward_range=reward_range,
            make_kwargs=make_kwargs,
            environment_cls=cls,
        )

    def reset(
        self,
        seed: int | None = None,
        episode_id: str | None = None,
        options: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> GymnasiumObservation:
        observation, info = self.env.reset(seed=seed, options=options)
        self._state = GymnasiumState(
            episode_id=episode_id or str(uuid.uuid4()), env_id=self.env_id, seed=seed
        )
        self._needs_reset = False
        return self._observation(observation, info, reward=None)

    def replay_refusal(self) -> str | None:
        """Gymnasium environments draw from ``np_random``, which only a seed fixes."""
        if self._state.seed is None:
            return (
                f"no seed was given at reset, and {self.env_id} draws from its random "
                "generator (np_random), which only reset(seed=...) fixes"
            )
        return None

    def step(
        self, action: Action, timeout_s: float | None = None, **kwargs: Any
    ) -> GymnasiumObservation:
        if self._needs_reset:
            raise ResetRequiredError(
                "The episode ended; call reset() to start a new one."
                if self._state.terminated or self._state.truncated
                else "No episode yet; call reset() to start one."
            )
        value = from_wire(self.env.action_space, getattr(action, "action", None))
        observation, reward, terminated, truncated, info = self.env.step(value)
        state = self._state
        state.step_count += 1
        state.episode_return += float(reward)
        state.terminated, state.truncated = bool(terminated), bool(truncated)
        self._needs_reset = state.terminated or state.truncated
        return self._observation(
            observation, info, reward=float(reward), terminated=terminated, truncated=truncated
        )

    def _observation(
        self,
        observation: Any,
        info: dict[str, Any],
        *,
        reward: float | None,
        terminated: bool = False,
        truncated: bool = False,
    ) -> GymnasiumObservation:
        observation_cls: Any = self.models.observation_cls
        return observation_cls(  # type: ignore[no-any-return]
            observation=to_wire(self.env.observation_space, observation),
            terminated=bool(terminated),
            truncated=bool(truncated),
            info=jsonable(info),
            frame=self.env.render() if self.render_frames else None,
            reward=reward,
            done=bool(terminated or truncated),
        )

    @property
    def state(self) -> GymnasiumState:
        return self._state

    def snapshot(self) -> tuple[Any, GymnasiumState, bool]:
        """A deep copy of the environment, wrappers and random generator included (an ALE
        game copies through ale-py's state cloning), with the episode's bookkeeping."""
        return copy.deepcopy(self.env), self._state.model_copy(deep=True), self._needs_reset

    def restore(self, snapshot: tuple[Any, GymnasiumState, bool]) -> None:
        env, state, needs_reset = snapshot
        previous, self.env = self.env, copy.deepcopy(env)
        previous.close()
        self._state, self._needs_reset = state.model_copy(deep=True), needs_reset

    def close(self) -> None:
        self.env.close()

    def get_metadata(self) -> EnvironmentMetadata:
        spec = getattr(self.env, "spec", None)
        return EnvironmentMetadata(
            name=self.env_id,
            description=f"The Gymnasium environment {self.env_id}: actions are values of "
            f"{self.env.action_space}, observations values of {self.env.observation_space}.",
            version=str(getattr(spec, "version", None) or "1.0.0"),
        )


def _reward_range_of(
    env: Any, name: str, given: tuple[float, float] | None
) -> tuple[float, float] | None:
    """The range given, else the environment's own ``reward_range`` (Gymnasium before 1.0 had
    one on every environment), else None (no bound)."""
    declared = given if given is not None else getattr(env, "reward_range", None)
    if declared is None:
        return None
    return checked_range(declared, owner=f"The reward range of {name}")


def _name_of(source: EnvSource, env: Any) -> str:
    if isinstance(source, str):
        return source.split(":")[-1]
    spec = getattr(env, "spec", None)
    return str(getattr(spec, "id", None) or type(env.unwrapped).__name__)


class GymnasiumFactory:
    """Creates a :class:`GymnasiumEnvironment` per session; ``create_app`` reads its models.

    Building it builds one environment to read the spaces (and closes it), so a wrong id fails
    here, when the app is created, rather than in the first session.
    """

    def __init__(
        self,
        env: EnvSource,
        *,
        render: bool = False,
        reward_range: tuple[float, float] | None = None,
        make_kwargs: dict[str, Any] | None = None,
        environment_cls: type[GymnasiumEnvironment] = GymnasiumEnvironment,
    ) -> None:
        self.source, self.render, self.reward_range = env, render, reward_range
        self.make_kwargs = dict(make_kwargs or {})
        self.environment_cls = environment_cls
        probe = environment_cls(env, render=render, reward_range=reward_range, **self.make_kwargs)
        try:
            self.models = probe.models
            self.__name__ = probe.env_id
        finally:
            probe.close()

    @property
    def action_cls(self) -> type[Action]:
        return self.models.action_cls

    @property
    def observation_cls(self) -> type[Observation]:
        return self.models.observation_cls

    @property
    def state_cls(self) -> type[State]:
        return GymnasiumState

    def client_class(self) -> type[EnvClient[Any, Any, GymnasiumState]]:
        """An :class:`~openenv_hub.EnvClient` subclass that parses replies into these models.

        Example::

            BlackjackEnv = GymnasiumEnvironment.factory("Blackjack-v1").client_class()
            with BlackjackEnv(base_url="http://127.0.0.1:8000").sync() as env:
                env.reset(seed=1).observation.observation  # e.g. [7, 10, 0]
        """
        from openenv_hub.client.env_client import EnvClient

        return type(
            f"{self.models.action_cls.__name__.removesuffix('Action')}Env",
            (EnvClient,),
            {
                "action_type": self.models.action_cls,
                "observation_type": self.models.observation_cls,
                "state_type": GymnasiumState,
            },
        )

    def __call__(self) -> GymnasiumEnvironment:
        return self.environment_cls(
            self.source,
            render=self.render,
            models=self.models,
            reward_range=self.reward_range,
            **self.make_kwargs,
        )
