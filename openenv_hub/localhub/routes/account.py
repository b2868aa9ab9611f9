"""Account-level endpoints: whoami, README metadata validation, client bootstrap.

Layer: runtimes.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from pydantic import BaseModel

from ..errors import HubError
from ..payloads import SPACE_SDKS, FrontMatterError, parse_front_matter
from .deps import CurrentUser

router = APIRouter()


@router.get("/api/whoami-v2")
def whoami(user: CurrentUser) -> dict[str, Any]:
    """Describe the token's user, its orgs and the token's role."""
    return {
        "type": "user",
        "id": f"user-{user.name}",
        "name": user.name,
        "fullname": user.name.title(),
        "email": f"{user.name}@users.noreply.localhub",
        "emailVerified": True,
        "isPro": False,
        # members may write to their organisations' repos (with a write token), as "write"
        # members may on the Hub
        "orgs": [
            {"type": "org", "name": org, "fullname": org, "roleInOrg": "write"} for org in user.orgs
        ],
        "auth": {
            "type": "access_token",
            "accessToken": {"displayName": f"localhub-{user.role}", "role": user.role},
        },
    }


class ValidateYamlBody(BaseModel):
    """Body of ``POST /api/validate-yaml``."""

    content: str = ""
    repoType: str = "model"


@router.post("/api/validate-yaml")
def validate_yaml(body: ValidateYamlBody) -> dict[str, list[Any]]:
    """Check README front matter; Spaces must name a known ``sdk``.

    The client parses this body before the status, so errors are JSON too.
    Warnings are never sent: the client turns them into Python warnings.
    """
    try:
        metadata = parse_front_matter(body.content) or {}
    except FrontMatterError as exc:
        raise _invalid(str(exc)) from None
    sdk = metadata.get("sdk")
    if body.repoType == "space" and sdk is not None and sdk not in SPACE_SDKS:
        raise _invalid(f"sdk must be one of {sorted(SPACE_SDKS)}, got {sdk!r}")
    return {"errors": [], "warnings": []}


def _invalid(message: str) -> HubError:
    return HubError(400, message, extra={"errors": [{"message": message}], "warnings": []})


@router.get("/api/agent-harnesses")
def agent_harnesses() -> dict[str, Any]:
    """Empty registry that huggingface_hub 2.x fetches when telemetry is on."""
    return {"standardEnvVars": [], "harnesses": {}}
