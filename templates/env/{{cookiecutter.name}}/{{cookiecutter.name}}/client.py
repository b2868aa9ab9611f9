"""``{{ cookiecutter.class_prefix }}Env``: the typed client of the {{ cookiecutter.title }} environment."""

from __future__ import annotations

from openenv_hub import EnvClient, State

from {{ cookiecutter.name }}.models import {{ cookiecutter.class_prefix }}Action, {{ cookiecutter.class_prefix }}Observation


class {{ cookiecutter.class_prefix }}Env(EnvClient[{{ cookiecutter.class_prefix }}Action, {{ cookiecutter.class_prefix }}Observation, State]):
    """Client of the {{ cookiecutter.title }} environment.

    Example::

        async with {{ cookiecutter.class_prefix }}Env(base_url="http://127.0.0.1:{{ cookiecutter.port }}") as env:
            await env.reset()
            result = await env.step({{ cookiecutter.class_prefix }}Action(message="hello"))
            result.observation.echoed_message  # "hello"
    """

    action_type = {{ cookiecutter.class_prefix }}Action
    observation_type = {{ cookiecutter.class_prefix }}Observation
    state_type = State


__all__ = ["{{ cookiecutter.class_prefix }}Env"]
