"""The rule of who may watch, list and fork other clients' sessions (see
:mod:`openenv_hub.server.watch`): on only where the server is local to one user, bound to a
loopback address and not on a Hugging Face Space, unless the operator chooses.

Layer: server.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from dataclasses import dataclass

from openenv_hub.support.settings import environment

__all__ = [
    "BIND_HOST_SETTING",
    "LEGACY_WATCH_SETTING",
    "WATCH_SETTING",
    "WatchRule",
    "is_loopback_host",
    "watch_rule",
    "watching_allowed",
    "watching_refused_message",
]

WATCH_SETTING = "OPENENV_WATCH"
#: The setting's earlier name, still read when ``OPENENV_WATCH`` is not set.
LEGACY_WATCH_SETTING = "OPENENV_WATCH_SESSIONS"
#: The address the server is bound to, as ``serve_app`` (and ``openenv serve``) set it.
BIND_HOST_SETTING = "OPENENV_BIND_HOST"

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


@dataclass(frozen=True)
class WatchRule:
    """Whether others' sessions may be watched, listed and forked here, and why.

    Attributes:
        allowed: Watching is on.
        reason: Why, in words a log line or a refusal can show.
        shared: On while the server is not local to one user (the operator turned it on for a
            server others reach): the startup banner says so.
    """

    allowed: bool
    reason: str
    shared: bool = False


def is_loopback_host(host: str | None) -> bool:
    """Whether ``host`` (an address a server binds to) is a loopback address or name."""
    if not host:
        return False
    name = host.strip().strip("[]").lower()
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def _chosen(env: Mapping[str, str]) -> bool | None:
    for name in (WATCH_SETTING, LEGACY_WATCH_SETTING):
        chosen = env.get(name, "").strip().lower()
        if chosen in _TRUE:
            return True
        if chosen in _FALSE:
            return False
    return None


def watch_rule(
    explicit: bool | None = None,
    bind_host: str | None = None,
    environ: Mapping[str, str] | None = None,
) -> WatchRule:
    """The rule of the module's docstring: ``explicit`` (``create_app(watch=...)``), else
    ``$OPENENV_WATCH``, else on only for a server bound to a loopback address (``bind_host``,
    else ``$OPENENV_BIND_HOST``) that is not on a Space."""
    env = environment() if environ is None else environ
    host = bind_host or env.get(BIND_HOST_SETTING) or None
    local = is_loopback_host(host) and not env.get("SPACE_ID")
    chosen = explicit if explicit is not None else _chosen(env)
    if chosen is not None:
        source = "watch=" + str(chosen) if explicit is not None else f"{WATCH_SETTING}"
        return WatchRule(chosen, f"turned {'on' if chosen else 'off'} by {source}",
                         shared=chosen and not local)  # fmt: skip
    if env.get("SPACE_ID"):
        return WatchRule(False, "the server runs on a Space, where sessions are other people's")
    if host is None:
        return WatchRule(False, "the address the server is bound to is unknown (it was not "
                         "started by openenv serve or serve_app)")  # fmt: skip
    if not local:
        return WatchRule(False, f"the server is bound to {host}, which others can reach")
    return WatchRule(True, f"the server is bound to {host}, a loopback address")


def watching_allowed(environ: Mapping[str, str] | None = None) -> bool:
    """Whether :func:`watch_rule` allows watching, from the environment alone."""
    return watch_rule(environ=environ).allowed


def watching_refused_message(rule: WatchRule | None = None) -> str:
    """What a viewer is told where watching is off, and how to turn it on."""
    why = f" ({rule.reason})" if rule is not None and not rule.allowed else ""
    return (
        f"Watching sessions is off on this server{why}. Its owner can turn it on by setting "
        f"{WATCH_SETTING}=1 (on a Space: a variable in the Space's settings) and restarting it, "
        "or with create_app(watch=True)."
    )
