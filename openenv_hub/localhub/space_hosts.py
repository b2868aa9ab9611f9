"""Each Space's app has an origin of its own on LocalHub, as on the Hub.

The Hub serves a Space's app at ``https://NS-NAME.hf.space``: a site of its own, so that a page
of one Space is, to the browser, another site than a page of another Space or of the Hub. On
LocalHub a Space's app is at ``http://NS--NAME.localhost:PORT`` (``PORT`` LocalHub's):
browsers resolve every name under ``localhost`` to the machine itself, so no DNS setting is
needed, and ``--``, which no repository name holds, keeps ``alice/my-env`` apart from
``alice-my/env``. Names are lowercase there, as browsers write them; a Space whose name has
capitals is found all the same.

Clients that are not browsers keep the Space's path on LocalHub, ``/_localhub/apps/NS/NAME``
(what ``space_info().host`` gives), since few of them resolve ``*.localhost`` names; a browser
sent there is redirected to the Space's own origin (:mod:`openenv_hub.localhub.proxy`).

Layer: runtimes.
"""

from __future__ import annotations

from .storage import RepoKey, RepoStore

__all__ = ["SPACE_HOST_SUFFIX", "host_port", "space_for_host", "space_host", "space_origin"]

SPACE_HOST_SUFFIX = ".localhost"
_SEPARATOR = "--"


def space_host(key: RepoKey) -> str:
    """The host name of a Space's app, ``ns--name.localhost`` (lowercase)."""
    return f"{key.namespace}{_SEPARATOR}{key.name}{SPACE_HOST_SUFFIX}".lower()


def space_origin(key: RepoKey, port: int | None) -> str:
    """The origin of a Space's app, ``http://ns--name.localhost:PORT``."""
    return f"http://{space_host(key)}" + (f":{port}" if port else "")


def space_for_host(host_header: str, store: RepoStore) -> RepoKey | None:
    """The Space whose app a ``Host`` header names (``ns--name.localhost[:port]``), or None for
    a host that names no Space (LocalHub's own). A Space that does not exist is named all the
    same (its app then answers what a missing Space answers)."""
    name = _host_name(host_header)
    if not name.endswith(SPACE_HOST_SUFFIX):
        return None
    namespace, separator, repo = name.removesuffix(SPACE_HOST_SUFFIX).partition(_SEPARATOR)
    if not separator or not namespace or not repo:
        return None
    typed = RepoKey("space", namespace, repo)
    if store.exists(typed):
        return typed
    found = [key for key in store.keys("space") if space_host(key) == name]
    return found[0] if len(found) == 1 else typed


def host_port(host_header: str) -> int | None:
    """The port of a ``Host`` header, if it names one."""
    _, colon, port = host_header.strip().rpartition(":")
    return int(port) if colon and port.isdigit() and "]" not in port else None


def _host_name(host_header: str) -> str:
    name = host_header.strip().lower()
    if name.startswith("["):
        return name  # an IPv6 address: no Space's
    return name.rsplit(":", 1)[0].rstrip(".")
