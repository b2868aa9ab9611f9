"""What an agent sends to the {{ cookiecutter.title }} environment, and what it gets back."""

from __future__ import annotations

from pydantic import Field

from openenv_hub import Action, Observation


class {{ cookiecutter.class_prefix }}Action(Action):
    """A message to echo."""

    message: str = Field(..., description="Message to echo back")


class {{ cookiecutter.class_prefix }}Observation(Observation):
    """The echoed message and its length."""

    echoed_message: str = Field(default="", description="The echoed message")
    message_length: int = Field(default=0, description="Length of the echoed message")
