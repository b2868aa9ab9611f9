"""What most operations on a Space start with: finding it, with the Hub's errors translated."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from openenv_hub.hub._client import HubContext
from openenv_hub.hub._errors import hub_call

if TYPE_CHECKING:
    from huggingface_hub import SpaceInfo

__all__ = ["find_space"]


def find_space(
    ctx: HubContext, repo_id: str, revision: str | None = None, **options: Any
) -> SpaceInfo:
    """``space_info`` of the Space ``repo_id`` (at ``revision``), ``options`` passed on.

    Raises:
        SpaceNotFoundError: No such Space, or a private one the token cannot see.
        RevisionNotFoundError: The Space has no such version, branch or commit.
        HubError: Another failure of the Hub.
    """
    with hub_call(ctx, "find the Space", repo_id=repo_id, revision=revision):
        return ctx.api.space_info(repo_id, revision=revision, **options)
