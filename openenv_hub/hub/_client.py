"""Where the Hub is and who we are: endpoint, token, repo ids, and the ``HfApi`` to use.

``huggingface_hub`` is imported here, lazily, and nowhere at module level: ``import openenv_hub``
must not load it. Every call builds ``HfApi(endpoint=...)`` with the endpoint read *now* (from
the argument or ``HF_ENDPOINT``), because huggingface_hub itself freezes ``HF_ENDPOINT`` when it
is first imported.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

from openenv_hub.errors import (
    HubAuthenticationError,
    InvalidRepoIdError,
)
from openenv_hub.support.settings import hub_endpoint

if TYPE_CHECKING:
    from huggingface_hub import HfApi

__all__ = [
    "DEFAULT_ENDPOINT",
    "LOGIN_HINT",
    "HubContext",
    "RepoId",
    "hf",
    "parse_repo_id",
    "resolve_endpoint",
    "resolve_token",
]

DEFAULT_ENDPOINT = "https://huggingface.co"
LOGIN_HINT = (
    "Log in with 'hf auth login', or set HF_TOKEN to a token from "
    "https://huggingface.co/settings/tokens (or pass --token)."
)
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,95}$")


def hf() -> Any:
    """The ``huggingface_hub`` module, imported on first use (it is slow to import)."""
    import huggingface_hub

    return huggingface_hub


def resolve_endpoint(endpoint: str | None = None) -> str:
    """``endpoint``, else ``HF_ENDPOINT`` (read now), else https://huggingface.co."""
    value = endpoint or hub_endpoint() or DEFAULT_ENDPOINT
    return value.rstrip("/")


def resolve_token(
    token: str | None = None, *, required: bool = False, action: str = ""
) -> str | None:
    """``token``, else ``HF_TOKEN``, else the saved login (``huggingface_hub.get_token()``)."""
    found = token or hf().get_token()
    if required and not found:
        doing = f" to {action}" if action else ""
        raise HubAuthenticationError(f"No Hugging Face token found{doing}.", hint=LOGIN_HINT)
    return found or None


@dataclass(frozen=True)
class RepoId:
    """A Space id, ``namespace/name``."""

    namespace: str
    name: str

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name}"


def parse_repo_id(value: str) -> RepoId:
    """Check that ``value`` is ``namespace/name`` with names the Hub accepts."""
    text = value.strip()
    for prefix in ("spaces/",):
        text = text.removeprefix(prefix)
    parts = text.split("/")
    if len(parts) != 2 or not all(_NAME.match(part) for part in parts) or _doubled(parts):
        raise InvalidRepoIdError(
            f"{value!r} is not a valid Space id.",
            repo_id=value,
            hint="Use 'namespace/name' (your user or org name, a slash, then letters, digits, "
            "'-', '_' or '.'), e.g. 'alice/echo_env'.",
        )
    return RepoId(parts[0], parts[1])


def _doubled(parts: list[str]) -> bool:
    return any("--" in part or ".." in part or part.endswith((".", "-")) for part in parts)


@dataclass(frozen=True)
class HubContext:
    """The endpoint and token one operation uses, and the ``HfApi`` built from them."""

    endpoint: str
    token: str | None

    @classmethod
    def create(
        cls,
        *,
        endpoint: str | None = None,
        token: str | None = None,
        required: bool = False,
        action: str = "",
    ) -> HubContext:
        return cls(
            resolve_endpoint(endpoint), resolve_token(token, required=required, action=action)
        )

    @cached_property
    def api(self) -> HfApi:
        api: HfApi = hf().HfApi(endpoint=self.endpoint, token=self.token or False)
        return api

    @property
    def is_default_endpoint(self) -> bool:
        return self.endpoint == DEFAULT_ENDPOINT
