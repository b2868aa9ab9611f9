"""What the catalog reads from its environment (the Space's variables and secrets).

| variable | default | meaning |
|---|---|---|
| ``HF_ENDPOINT`` | https://huggingface.co | the Hub to list (LocalHub's URL to try it locally) |
| ``HF_TOKEN`` | none | a read token, to see private Spaces (a Space secret) |
| ``CATALOG_TAGS`` | ``openenv,rl-environment`` | a listed Space carries one of these tags |
| ``CATALOG_PAGE_SIZE`` | 20 | rows per page |
| ``CATALOG_REFRESH_S`` | 900 | age after which a validation is run again, in the background |
| ``CATALOG_CHECK_TIMEOUT_S`` | 10 | bound of each check of a validation (six times it: of all) |
| ``CATALOG_RECHECK_S`` | 60 | least time between two re-checks of one Space that users ask for |
| ``CATALOG_POLL_S`` | 5 | how often an open page shows new validations |
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

from openenv_hub.errors import ConfigurationError

__all__ = ["CatalogSettings"]


@dataclass(frozen=True)
class CatalogSettings:
    """The catalog's settings; :meth:`from_environment` reads them from variables.

    Attributes:
        endpoint: The Hub, or None for ``HF_ENDPOINT`` read when the Hub is first used.
        token: A Hub token, or None for ``HF_TOKEN`` or the saved login.
        tags: Listed Spaces carry one of these tags (OpenEnv's, and the Hub's filter of RL
            environments, by default).
        page_size: Rows per page.
        refresh_s: A validation older than this is run again in the background.
        check_timeout_s: Bound of each check of a validation (all its requests, however slowly
            the app answers); six times it bounds the whole validation.
        recheck_s: Least time between two re-checks of one Space that users ask for.
        poll_s: How often an open page shows the validations that finished.
        workers: Validations running at once.
    """

    endpoint: str | None = None
    token: str | None = None
    tags: tuple[str, ...] = ("openenv", "rl-environment")
    page_size: int = 20
    refresh_s: float = 900.0
    check_timeout_s: float = 10.0
    recheck_s: float = 60.0
    poll_s: float = 5.0
    workers: int = 2

    def __post_init__(self) -> None:
        if not self.tags or not all(tag.strip() for tag in self.tags):
            raise ConfigurationError(
                f"The catalog lists Spaces by tag, and {self.tags!r} names none.",
                hint="Give one tag or more, e.g. CATALOG_TAGS=openenv,rl-environment.",
            )

    @property
    def tags_text(self) -> str:
        """The tags, for a sentence: ``openenv or rl-environment``."""
        return " or ".join(self.tags)

    @classmethod
    def from_environment(cls, environ: Mapping[str, str] | None = None) -> CatalogSettings:
        """Settings from ``CATALOG_*`` (and ``HF_ENDPOINT``, ``HF_TOKEN``) variables.

        Raises:
            ConfigurationError: A variable is not a positive number.
        """
        env = os.environ if environ is None else environ
        return cls(
            endpoint=env.get("HF_ENDPOINT") or None,
            token=env.get("HF_TOKEN") or None,
            tags=_tags(env.get("CATALOG_TAGS") or "openenv,rl-environment"),
            page_size=int(_positive(env, "CATALOG_PAGE_SIZE", 20)),
            refresh_s=_positive(env, "CATALOG_REFRESH_S", 900.0),
            check_timeout_s=_positive(env, "CATALOG_CHECK_TIMEOUT_S", 10.0),
            recheck_s=_positive(env, "CATALOG_RECHECK_S", 60.0),
            poll_s=_positive(env, "CATALOG_POLL_S", 5.0),
        )


def _tags(raw: str) -> tuple[str, ...]:
    return tuple(dict.fromkeys(tag.strip() for tag in raw.split(",") if tag.strip()))


def _positive(env: Mapping[str, str], name: str, default: float) -> float:
    raw = env.get(name)
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        value = 0.0
    if value <= 0:
        raise ConfigurationError(
            f"{name}={raw!r} is not a positive number.",
            hint=f"Set {name} to a number above 0 (the default is {default:g}), or unset it.",
        )
    return value
