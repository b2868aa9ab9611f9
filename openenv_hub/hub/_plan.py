"""The whole plan of a push (:class:`PushPlan`): what a dry run reports and a real push carries
out. The Space as it is and the difference of files are in :mod:`openenv_hub.hub._diff`."""

from __future__ import annotations

from dataclasses import dataclass, field

from openenv_hub.hub._diff import FileChanges
from openenv_hub.hub._ignore import LargeFile, Skipped
from openenv_hub.hub._secrets import MissingSecret
from openenv_hub.hub._wheel_pin import WheelPin

__all__ = ["PushPlan"]


@dataclass
class PushPlan:
    """What a push does (or, with ``dry_run``, would do). Secret values are never kept here:
    ``secrets`` names what is uploaded, ``missing_secrets`` what the manifest says the Space
    needs and it will lack, ``hub_token_secrets`` the uploaded names that hold the Hub token
    the push uses."""

    repo_id: str
    create: bool
    private: bool
    files: FileChanges
    card_changes: list[str] = field(default_factory=list)
    scorecard: str = ""
    wheels: list[str] = field(default_factory=list)
    pin: WheelPin | None = None
    ignored: list[str] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    large: list[LargeFile] = field(default_factory=list)
    variables: dict[str, str] = field(default_factory=dict)
    secrets: list[str] = field(default_factory=list)
    missing_secrets: list[MissingSecret] = field(default_factory=list)
    hub_token_secrets: list[str] = field(default_factory=list)
    hardware: str | None = None
    version: str | None = None
    move_tag: bool = False
