"""Which secrets a push sets on a Space: those the user names, never what a manifest asks for.

A manifest's ``secrets:`` says which secrets the Space needs. Its author also wrote the code
the Space runs, which reads every secret it is given, so push never takes a value from the
pusher's environment because a manifest names it. A secret is uploaded when:

- the caller gives it (``secrets=``; ``openenv push --secret NAME`` reads ``$NAME``), or
- the manifest names it, it is set in the environment, and the user says yes when asked at a
  terminal (``confirm``; never in a run without a terminal, never in a dry run).

A Hugging Face token is never asked about: ``HF_TOKEN``, ``HUGGING_FACE_HUB_TOKEN``,
``HF_API_TOKEN``, any variable holding the token the push uses, or a value shaped like a Hub
token (``hf_...``) goes only when the caller names it. Every name the manifest lists that the
Space will still lack is reported, with why it was not uploaded and how to add it.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from openenv_hub.support.settings import environment

__all__ = ["HUB_TOKEN_VARIABLES", "MissingSecret", "SecretChoice", "choose_secrets"]

HUB_TOKEN_VARIABLES = ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HF_API_TOKEN")
"""Variables that hold a Hugging Face token: never uploaded unless named on purpose."""

_HUB_TOKEN_SHAPE = re.compile(r"^hf_[A-Za-z0-9]{30,}$")

Confirm = Callable[[str], bool]


@dataclass(frozen=True)
class MissingSecret:
    """A secret the manifest says the Space needs and the Space will not have after the push.

    Attributes:
        name: The secret's name.
        reason: Why push did not upload it and how to (a clause that follows "the Space
            needs it, but"; never a value).
    """

    name: str
    reason: str


@dataclass
class SecretChoice:
    """What a push uploads (``values``, never shown) and what the Space still lacks.

    Attributes:
        values: ``{name: value}`` to set as the Space's secrets.
        missing: Declared secrets neither uploaded nor already on the Space.
        hub_tokens: Uploaded names whose value is the Hub token the push uses.
    """

    values: dict[str, str] = field(default_factory=dict)
    missing: list[MissingSecret] = field(default_factory=list)
    hub_tokens: list[str] = field(default_factory=list)


def choose_secrets(
    declared: Sequence[str],
    given: Mapping[str, str] | None,
    *,
    repo_id: str,
    on_space: set[str],
    token: str | None,
    confirm: Confirm | None = None,
    environ: Mapping[str, str] | None = None,
) -> SecretChoice:
    """The secrets to upload to ``repo_id``: ``given``, and declared ones the user confirms.

    Args:
        declared: The manifest's ``secrets`` (names the Space needs).
        given: Secrets the caller names on purpose; uploaded as they are.
        repo_id: The Space (named in the question).
        on_space: Names the Space holds already (not asked about again).
        token: The Hub token the push uses (never offered at the prompt, whatever its name).
        confirm: Asks a yes/no question; consulted only when stdin is a terminal. ``None``
            (a dry run, a library call that asks nobody) uploads no declared secret.
        environ: Where declared values are read (default this process's environment).
    """
    env = environment() if environ is None else environ
    choice = SecretChoice(values=dict(given or {}))
    choice.hub_tokens = sorted(name for name, value in choice.values.items() if value == token)
    ask = confirm if confirm is not None and sys.stdin.isatty() else None
    for name in dict.fromkeys(declared):
        if name in choice.values or name in on_space:
            continue
        value = env.get(name, "")
        if not value:
            reason = f"it is not set here; --secret {name}=VALUE uploads it"
        elif is_hub_token(name, value, token):
            reason = (
                f"it is a Hugging Face token, which goes only when --secret {name} names it "
                "(the Space's code could then act as you)"
            )
        elif ask is not None and ask(_question(name, repo_id)):
            choice.values[name] = value
            continue
        else:
            reason = (
                f"push uploads a secret only when you name it; --secret {name} uploads it "
                "(at a terminal, push asks)"
            )
        choice.missing.append(MissingSecret(name, reason))
    return choice


def is_hub_token(name: str, value: str, token: str | None) -> bool:
    """Whether the variable ``name`` holding ``value`` is a Hugging Face token."""
    return (
        name.upper() in HUB_TOKEN_VARIABLES
        or (token is not None and value == token)
        or bool(_HUB_TOKEN_SHAPE.match(value))
    )


def _question(name: str, repo_id: str) -> str:
    return (
        f"openenv.yaml says {repo_id} needs the secret {name}. Upload the value of ${name} "
        f"from your environment as a secret of {repo_id} (its code will read it)?"
    )
