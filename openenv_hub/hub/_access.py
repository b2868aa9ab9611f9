"""Who the token belongs to, and whether it may write to a namespace, asked before any write.

A push or fork that would be refused half-way (after the Space was created, or after its files
were uploaded) is refused here instead, from ``whoami``'s answer: a read-only token, a
namespace that is neither the user's nor one of their organisations, a read-only membership,
or a fine-grained token without ``repo.write`` there. An answer this module does not
understand is left for the Hub to judge.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from openenv_hub.errors import HubPermissionError
from openenv_hub.hub._client import HubContext
from openenv_hub.hub._errors import hub_call
from openenv_hub.support.settings import hub_token_in_environment

__all__ = ["Account", "account", "check_write_access", "read_only_token", "whoami"]

_READ_ONLY_ORG_ROLES = {"read"}


def whoami(ctx: HubContext) -> dict[str, Any]:
    """The account of the token (``HfApi.whoami()``)."""
    with hub_call(ctx, "read your account"):
        user: dict[str, Any] = ctx.api.whoami()
    return user


@dataclass(frozen=True)
class Account:
    """Who a token belongs to on a Hub, and where the token came from (never the token).

    Attributes:
        name: The user name (the default namespace of a push).
        endpoint: The Hub asked.
        token_source: ``--token``, ``$HF_TOKEN`` or ``saved login``.
        role: The token's role (``read``, ``write``, ``fineGrained``), if the Hub says.
        organisations: ``{name: role in it}``.
    """

    name: str
    endpoint: str
    token_source: str
    role: str | None
    organisations: dict[str, str | None]


def account(*, token: str | None = None, endpoint: str | None = None) -> Account:
    """The account of ``token`` (default ``HF_TOKEN``, then the saved login).

    Raises:
        HubAuthenticationError: No token, or the Hub does not know it.
    """
    ctx = HubContext.create(endpoint=endpoint, token=token, required=True, action="ask who you are")
    user = whoami(ctx)
    source = "--token" if token else "$HF_TOKEN" if hub_token_in_environment() else "saved login"
    orgs = {
        str(org.get("name")): org.get("roleInOrg")
        for org in user.get("orgs") or []
        if isinstance(org, dict)
    }
    role = ((user.get("auth") or {}).get("accessToken") or {}).get("role")
    return Account(str(user.get("name")), ctx.endpoint, source, role, orgs)


def check_write_access(user: dict[str, Any], repo_id: str, *, endpoint: str) -> None:
    """Raise :class:`HubPermissionError` if ``user``'s token surely cannot write ``repo_id``."""
    namespace = repo_id.split("/")[0]
    problem = _write_problem(user, namespace)
    if problem is None:
        return
    if read_only_token(user):
        hint = (
            f"Use a write token (one with write access to '{namespace}'): a read-only token "
            "can write to no repo, under any name. Create one with the 'write' role "
            "(https://huggingface.co/settings/tokens), then log in with it (hf auth login) or "
            "set HF_TOKEN."
        )
    else:
        hint = (
            f"Use a token with write access to '{namespace}' "
            "(https://huggingface.co/settings/tokens), or publish under your own namespace with "
            f"--repo-id {user.get('name') or 'YOUR_NAME'}/{repo_id.split('/')[-1]}."
        )
    raise HubPermissionError(
        f"The token cannot write to '{namespace}' on {endpoint}: {problem}. Nothing was sent.",
        repo_id=repo_id,
        hint=hint,
    )


def read_only_token(user: dict[str, Any]) -> bool:
    """Whether ``user`` (``whoami``'s answer) holds a read-only token: one that may write
    nowhere, so no other repo name would help."""
    token = (user.get("auth") or {}).get("accessToken") or {}
    return token.get("role") == "read"


def _write_problem(user: dict[str, Any], namespace: str) -> str | None:
    name = user.get("name")
    token = (user.get("auth") or {}).get("accessToken") or {}
    role = token.get("role")
    if role == "read":
        return f"it is a read-only token of {name}"
    orgs = {org.get("name"): org for org in user.get("orgs") or [] if isinstance(org, dict)}
    if namespace != name:
        if namespace not in orgs:
            return f"it belongs to {name}, who is not a member of the organisation '{namespace}'"
        if orgs[namespace].get("roleInOrg") in _READ_ONLY_ORG_ROLES:
            return f"{name} has a read-only role in '{namespace}'"
    if role == "fineGrained":
        return _fine_grained_problem(token.get("fineGrained"), namespace)
    return None


def _fine_grained_problem(scopes: Any, namespace: str) -> str | None:
    if not isinstance(scopes, dict) or not isinstance(scopes.get("scoped"), list):
        return None
    for scope in scopes["scoped"]:
        entity = scope.get("entity") or {}
        if entity.get("name") == namespace and "repo.write" in (scope.get("permissions") or []):
            return None
    if "repo.write" in (scopes.get("global") or []):
        return None
    return f"the fine-grained token has no 'repo.write' permission on '{namespace}'"
