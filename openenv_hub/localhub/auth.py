"""Tokens, users and the access rules LocalHub enforces.

The rules follow the Hub: anyone may read a public repo; a private repo is
visible only to its owner or members of the owning org; writing needs a token
with the ``write`` role and ownership of (or membership in) the namespace.

Every LocalHub has three users: alice (member of org ``org``), bob, and alice again through a
read-only token. Their tokens are new random ones for each server (:func:`generated_tokens`),
unless it is given the well-known :data:`DEMO_TOKENS`, which anything on the machine can guess;
the pytest plugin asks for those. The control routes (``/_localhub/...``) need the admin token,
which is not a user token (:func:`is_admin`).

Layer: runtimes.
"""

from __future__ import annotations

import base64
import binascii
import hmac
import secrets
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from .errors import HubError

Role = Literal["read", "write"]


@dataclass(frozen=True)
class User:
    """A Hub account, as seen through one access token.

    Attributes:
        name: User name, also the user's own namespace.
        orgs: Organisations the user belongs to (namespaces they may use).
        role: ``"write"`` tokens may create and change repos; ``"read"`` may not.
    """

    name: str
    orgs: tuple[str, ...] = ()
    role: Role = "write"

    def can_see(self, namespace: str) -> bool:
        """Whether private repos under ``namespace`` are visible to this user."""
        return namespace == self.name or namespace in self.orgs

    def can_write(self, namespace: str) -> bool:
        """Whether this token may create or change repos under ``namespace``."""
        return self.role == "write" and self.can_see(namespace)


DEMO_TOKENS: Mapping[str, User] = {
    "hf_alice_write": User("alice", orgs=("org",), role="write"),
    "hf_bob_write": User("bob", role="write"),
    "hf_alice_read": User("alice", orgs=("org",), role="read"),
}
"""Well-known tokens, for tests and demos only (anything on the machine can use them)."""


def generated_tokens() -> dict[str, User]:
    """The users of :data:`DEMO_TOKENS`, each with a new random token."""
    return {f"hf_{secrets.token_urlsafe(24)}": user for user in DEMO_TOKENS.values()}


def generated_admin_token() -> str:
    """A new random admin token."""
    return f"localhub_admin_{secrets.token_urlsafe(24)}"


def is_admin(authorization: str | None, admin_token: str) -> bool:
    """Whether an ``Authorization`` header carries ``admin_token`` (Bearer, or Basic password)."""
    token = token_from_header(authorization)
    return token is not None and hmac.compare_digest(token.encode(), admin_token.encode())


def _as_user(value: User | Mapping[str, Any]) -> User:
    if isinstance(value, User):
        return value
    role = value.get("role", "write")
    if role not in ("read", "write"):
        raise ValueError(f"role must be 'read' or 'write', got {role!r}")
    return User(name=str(value["name"]), orgs=tuple(value.get("orgs", ())), role=role)


@dataclass
class TokenRegistry:
    """Maps access tokens to users.

    Args:
        tokens: ``token -> User`` or ``token -> {"name", "orgs", "role"}`` (default:
            :func:`generated_tokens`).
    """

    tokens: Mapping[str, User | Mapping[str, Any]] = field(default_factory=generated_tokens)

    def __post_init__(self) -> None:
        self._users = {token: _as_user(user) for token, user in self.tokens.items()}

    def __iter__(self) -> Iterator[tuple[str, User]]:
        return iter(self._users.items())

    def user_for(self, token: str) -> User | None:
        """Return the user owning ``token``, or None if it is unknown."""
        return self._users.get(token)

    def token_for(self, name: str, role: Role = "write") -> str:
        """Return a token of user ``name``, preferring one with ``role``.

        Raises:
            KeyError: If no token belongs to ``name``.
        """
        owned = [(token, user) for token, user in self._users.items() if user.name == name]
        if not owned:
            known = sorted({user.name for user in self._users.values()})
            raise KeyError(f"No token for user {name!r}; known users: {', '.join(known)}")
        preferred = [token for token, user in owned if user.role == role]
        return (preferred or [owned[0][0]])[0]

    def authenticate(self, authorization: str | None) -> User | None:
        """Resolve an ``Authorization`` header to a user.

        Accepts ``Bearer <token>`` (the Hub API) and ``Basic user:token`` (git).

        Returns:
            The user, or None when the request carries no credentials.

        Raises:
            HubError: 401 if credentials are present but unknown.
        """
        if not authorization or not authorization.strip():
            return None
        token = token_from_header(authorization)
        user = self.user_for(token) if token else None
        if user is None:
            raise HubError.unauthorized()
        return user


def token_registry(
    tokens: Mapping[str, User | Mapping[str, Any]] | TokenRegistry | None,
) -> TokenRegistry:
    """``tokens`` as a registry; None gives new random tokens of the demo users."""
    if isinstance(tokens, TokenRegistry):
        return tokens
    return TokenRegistry() if tokens is None else TokenRegistry(tokens)


def token_from_header(authorization: str | None) -> str | None:
    """Extract the token from a Bearer or Basic ``Authorization`` header value."""
    if not authorization:
        return None
    scheme, _, value = authorization.strip().partition(" ")
    value = value.strip()
    if scheme.lower() == "bearer":
        return value or None
    if scheme.lower() == "basic":
        try:
            decoded = base64.b64decode(value, validate=True).decode()
        except (binascii.Error, UnicodeDecodeError):
            return None
        username, _, password = decoded.partition(":")
        return password or username or None
    return None
