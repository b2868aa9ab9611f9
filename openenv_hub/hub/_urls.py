"""The addresses of a Space: its page, its git repo, its running app, and the pip line.

Example:
    >>> urls = SpaceUrls("https://huggingface.co", "alice/echo_env")
    >>> urls.web
    'https://huggingface.co/spaces/alice/echo_env'
    >>> urls.pip_line("0.1.0")
    'pip install git+https://huggingface.co/spaces/alice/echo_env@0.1.0'
    >>> urls.default_app_url()
    'https://alice-echo-env.hf.space'
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlsplit, urlunsplit

from openenv_hub.hub._client import DEFAULT_ENDPOINT

__all__ = ["SpaceUrls", "redact", "strip_credentials"]


@dataclass(frozen=True)
class SpaceUrls:
    """URLs of the Space ``repo_id`` on the Hub at ``endpoint``."""

    endpoint: str
    repo_id: str

    @property
    def web(self) -> str:
        return f"{self.endpoint}/spaces/{self.repo_id}"

    @property
    def git(self) -> str:
        """What ``git clone`` and ``pip install git+...`` take."""
        return self.web

    def pip_requirement(self, revision: str | None = None) -> str:
        """``git+URL[@revision]``; a private Space's token travels apart from it."""
        suffix = f"@{revision}" if revision else ""
        return f"git+{self.git}{suffix}"

    def file_url(self, revision: str, path: str) -> str:
        """Where the Hub serves ``path`` of the Space at ``revision`` (``/resolve/``)."""
        return f"{self.web}/resolve/{revision}/{path}"

    def pip_line(self, revision: str | None = None) -> str:
        """The exact command that installs the environment's client (no credentials in it)."""
        return f"pip install {self.pip_requirement(revision)}"

    def default_app_url(self) -> str:
        """``https://NS-NAME.hf.space``: where the Hub serves a Space's app."""
        subdomain = re.sub(r"[^a-z0-9-]", "-", self.repo_id.lower().replace("/", "-"))
        return f"https://{subdomain}.hf.space"

    def app_url(self, info: Any | None = None) -> str:
        """The running app's URL: ``space_info().host`` when the Hub reports one."""
        host = getattr(info, "host", None)
        if isinstance(host, str) and host:
            return host.rstrip("/")
        subdomain = getattr(info, "subdomain", None)
        if isinstance(subdomain, str) and subdomain and self.endpoint == DEFAULT_ENDPOINT:
            return f"https://{subdomain}.hf.space"
        return self.default_app_url()


def strip_credentials(url: str) -> str:
    """``url`` without ``user:password@``, a trailing ``.git`` or ``/``; for comparisons."""
    parts = urlsplit(url)
    netloc = parts.netloc.rsplit("@", 1)[-1]
    path = parts.path.rstrip("/").removesuffix(".git")
    return urlunsplit((parts.scheme, netloc, path, "", ""))


def redact(text: str, *secrets: str | None) -> str:
    """``text`` with each secret (and its URL-quoted form) replaced by ``***``."""
    for secret in secrets:
        if secret:
            text = text.replace(secret, "***").replace(quote(secret, safe=""), "***")
    return text
