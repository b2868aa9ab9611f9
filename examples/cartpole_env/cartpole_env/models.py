"""CartPole's action and observation, made from its Gymnasium spaces."""

from openenv_hub.gymnasium import GymnasiumEnvironment

#: Makes one environment per session; each step that keeps the pole up earns 1.
FACTORY = GymnasiumEnvironment.factory("CartPole-v1", reward_range=(0.0, 1.0))
CartPoleAction = FACTORY.action_cls
CartPoleObservation = FACTORY.observation_cls

__all__ = ["FACTORY", "CartPoleAction", "CartPoleObservation"]
