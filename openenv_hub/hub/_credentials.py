"""How a private Space's token reaches git and pip without ever being on a command line.

``ps`` shows every process's arguments to every user, so a token never goes into a URL or an
argument. Instead, for the duration of one command:

- git gets an ``Authorization`` header for the Hub's URL only, through git's environment-borne
  configuration (``GIT_CONFIG_COUNT`` / ``GIT_CONFIG_KEY_n`` / ``GIT_CONFIG_VALUE_n``);
- pip's own downloads (a bundled wheel named by URL) get a ``netrc`` file readable by the user
  alone, named by ``NETRC``, removed when the command ends.

Example:
    >>> with credentials_env("http://127.0.0.1:9000", "hf_x") as env:  # doctest: +SKIP
    ...     subprocess.run(["git", "clone", "http://127.0.0.1:9000/spaces/a/b"], env=env)
"""

from __future__ import annotations

import base64
import os
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit

from openenv_hub.support.settings import environment

__all__ = ["credentials_env"]


@contextmanager
def credentials_env(
    endpoint: str, token: str | None, base: Mapping[str, str] | None = None
) -> Iterator[dict[str, str]]:
    """``base`` (default this process's environment) plus what hands ``token`` to git and pip for
    ``endpoint``; the plain copy when ``token`` is ``None``."""
    env = dict(environment() if base is None else base)
    if not token:
        yield env
        return
    env.update(_git_header(env, endpoint, token))
    with tempfile.TemporaryDirectory(prefix="openenv-auth-") as tmp:
        netrc = Path(tmp) / "netrc"
        fd = os.open(netrc, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            host = urlsplit(endpoint).hostname or ""
            out.write(f"machine {host}\nlogin user\npassword {token}\n")
        env["NETRC"] = str(netrc)
        yield env


def _git_header(env: Mapping[str, str], endpoint: str, token: str) -> dict[str, str]:
    """One more ``http.<endpoint>/.extraHeader`` entry after any the caller already set."""
    try:
        index = int(env.get("GIT_CONFIG_COUNT", "0"))
    except ValueError:
        index = 0
    basic = base64.b64encode(f"user:{token}".encode()).decode()
    return {
        "GIT_CONFIG_COUNT": str(index + 1),
        f"GIT_CONFIG_KEY_{index}": f"http.{endpoint.rstrip('/')}/.extraHeader",
        f"GIT_CONFIG_VALUE_{index}": f"Authorization: Basic {basic}",
    }
