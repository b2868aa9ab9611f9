"""Which Daytona, and the labels of this toolkit's sandboxes on it: shared by the ``daytona``
runtime, its reaper and ``openenv ps/stop --daytona``.

Where Daytona is comes from ``api_key``, ``api_url`` and ``target`` when given, else from
``DAYTONA_API_KEY``, ``DAYTONA_API_URL`` (Daytona's cloud when unset) and ``DAYTONA_TARGET``,
the variables the SDK reads. The key is never shown (not in a repr, not in a message).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from openenv_hub.errors import ConfigurationError, DependencyNotInstalledError
from openenv_hub.support.settings import named_variable

__all__ = [
    "DEFAULT_API_URL",
    "MANAGED_LABEL",
    "OWNER_LABEL",
    "DaytonaSettings",
    "daytona_client",
    "label_value",
]

#: Where the SDK finds Daytona's cloud when ``DAYTONA_API_URL`` is not set.
DEFAULT_API_URL = "https://app.daytona.io/api"
#: The label of every sandbox this toolkit creates (``openenv-hub=true``).
MANAGED_LABEL = "openenv-hub"
#: The label naming the process that created a sandbox (its pid, then a random part).
OWNER_LABEL = "openenv-hub-owner"


def label_value(text: str) -> str:
    """``text`` as a label value (letters, digits, ``-``, ``_``, ``.``; at most 63)."""
    return re.sub(r"[^A-Za-z0-9_.-]", "-", text)[:63]


def daytona_client(api_url: str | None, api_key: str | None, target: str | None) -> Any:
    """A ``daytona.Daytona`` client (what is not given comes from ``DAYTONA_*`` variables).

    Raises:
        DependencyNotInstalledError: The ``daytona`` package is not installed.
    """
    try:
        from daytona import Daytona, DaytonaConfig
    except ImportError:
        raise DependencyNotInstalledError(
            "daytona", "daytona", feature="The daytona runtime"
        ) from None
    return Daytona(DaytonaConfig(api_key=api_key, api_url=api_url, target=target))


@dataclass(frozen=True)
class DaytonaSettings:
    """Which Daytona: its API URL, the API key and the target (region)."""

    api_url: str
    api_key: str
    target: str | None = None

    @classmethod
    def resolve(
        cls, api_key: str | None = None, api_url: str | None = None, target: str | None = None
    ) -> DaytonaSettings:
        """From the arguments, else ``DAYTONA_API_KEY``, ``DAYTONA_API_URL``, ``DAYTONA_TARGET``.

        Raises:
            ConfigurationError: No API key.
        """
        key = api_key or named_variable("DAYTONA_API_KEY")
        if not key:
            raise ConfigurationError(
                "The daytona runtime needs a Daytona API key: set DAYTONA_API_KEY (and "
                "DAYTONA_API_URL for a Daytona other than the cloud), or pass api_key=."
            )
        url = api_url or named_variable("DAYTONA_API_URL") or DEFAULT_API_URL
        return cls(url, key, target or named_variable("DAYTONA_TARGET"))

    def client(self) -> Any:
        """A ``daytona.Daytona`` client of this Daytona."""
        return daytona_client(self.api_url, self.api_key, self.target)

    def __repr__(self) -> str:
        return f"DaytonaSettings({self.api_url!r}, target={self.target!r})"  # never the key
