"""The proxies a server trusts to say who the client is and which host it asked for.

A proxy in front of a server (nginx, a load balancer, Hugging Face's) connects to it itself, so
the server sees the proxy's address; the proxy names the client in ``X-Forwarded-For`` and the
host in ``X-Forwarded-Host`` or ``Forwarded``. Anyone can send those headers, so they are read
only on connections from the proxies the operator names (``trusted_proxies`` in
``create_app``, ``$OPENENV_TRUSTED_PROXIES``): none by default. Otherwise the client is the
address that connected (``max_sessions_per_client`` counts it), and the host is the ``Host``
header (:mod:`openenv_hub.server.browsers` checks it).

uvicorn trusts ``X-Forwarded-For`` from 127.0.0.1 unless told otherwise, so that any process of
the machine could pass for a client of its choosing: the servers' uvicorn settings
(:func:`openenv_hub.transport.uvicorn_serving.http_options`) turn that off, and the app reads the headers here.

Layer: server.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from starlette.types import Scope

import openenv_hub.server.settings as settings

__all__ = ["TrustedProxies", "add_trusted_proxies"]

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


@dataclass(frozen=True)
class TrustedProxies:
    """The addresses of trusted proxies.

    Attributes:
        networks: Their networks (an address is a network of one).
        anyone: Every peer is trusted (``"*"``): only for a server no one reaches but through
            its proxies.
    """

    networks: tuple[Network, ...] = ()
    anyone: bool = False

    @classmethod
    def from_settings(cls, requested: Sequence[str] | None = None) -> TrustedProxies:
        """``requested``, else ``$OPENENV_TRUSTED_PROXIES``; none when neither names one."""
        entries = settings.trusted_proxies(requested)
        networks = tuple(ipaddress.ip_network(entry) for entry in entries if entry != "*")
        return cls(networks, "*" in entries)

    def __bool__(self) -> bool:
        return self.anyone or bool(self.networks)

    def trust(self, scope: Scope) -> bool:
        """Whether the connection of ``scope`` comes from a trusted proxy."""
        if self.anyone:
            return True
        peer = scope.get("client")
        return peer is not None and self.trusts_address(str(peer[0]))

    def trusts_address(self, text: str) -> bool:
        """Whether the address ``text`` is a trusted proxy's."""
        try:
            address = ipaddress.ip_address(text.strip("[]").split("%", 1)[0])
        except ValueError:
            return self.anyone
        mapped = getattr(address, "ipv4_mapped", None)
        address = mapped if mapped is not None else address
        return self.anyone or any(address in network for network in self.networks)

    def entries(self) -> list[str]:
        """As uvicorn's ``forwarded_allow_ips`` takes them."""
        return ["*"] if self.anyone else [str(network) for network in self.networks]


def add_trusted_proxies(app: Any, proxies: TrustedProxies) -> None:
    """Let ``app`` take the client's address and scheme from ``X-Forwarded-For`` and
    ``X-Forwarded-Proto`` on connections from ``proxies`` (nothing when there are none)."""
    if not proxies:
        return
    from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware

    app.add_middleware(ProxyHeadersMiddleware, trusted_hosts=proxies.entries())
