"""``CartPoleEnv``: the typed client of the CartPole environment.

Example::

    with CartPoleEnv(base_url="http://127.0.0.1:8000").sync() as env:
        result = env.reset(seed=1)
        result = env.step(CartPoleAction(action=1))
"""

from cartpole_env.models import FACTORY, CartPoleAction

CartPoleEnv = FACTORY.client_class()

__all__ = ["CartPoleAction", "CartPoleEnv"]
