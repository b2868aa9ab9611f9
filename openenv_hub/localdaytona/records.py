"""A sandbox of the local Daytona: what was asked for (:class:`SandboxSpec`, read from the
``CreateSandbox`` body the SDK posts), what it is now (:class:`SandboxRecord`), and the JSON the
API answers about it (the fields of the SDK's ``Sandbox`` and ``SandboxListItem`` models, by
their wire names).

Layer: runtimes.
"""

from __future__ import annotations

import datetime as dt
import re
import secrets
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .errors import ApiError

__all__ = [
    "DEFAULT_AUTO_STOP_MINUTES",
    "ORGANIZATION_ID",
    "SandboxRecord",
    "SandboxSpec",
    "image_of",
    "iso_time",
]

#: What Daytona uses when ``autoStopInterval`` is not given: 15 minutes of no activity.
DEFAULT_AUTO_STOP_MINUTES = 15
#: The one organization of the local service.
ORGANIZATION_ID = "local-organization"
TARGET = "local"
DAEMON_VERSION = "local"
_FROM_LINE = re.compile(r"^\s*FROM\s+(?P<image>\S+)\s*$", re.IGNORECASE)
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$")
_DEFAULTS = {"cpu": 1, "memory": 1, "disk": 3}  # cores, GiB, GiB: Daytona's default size


def iso_time(moment: float | None = None) -> str:
    """``moment`` (POSIX seconds; default now) as ``2024-01-31T12:00:00.000Z``."""
    when = dt.datetime.fromtimestamp(time.time() if moment is None else moment, dt.timezone.utc)
    return when.strftime("%Y-%m-%dT%H:%M:%S.") + f"{when.microsecond // 1000:03d}Z"


def image_of(build_info: Any) -> str:
    """The image a ``buildInfo`` names: its Dockerfile must be ``FROM IMAGE`` alone (what the
    SDK sends for ``CreateSandboxFromImageParams(image="NAME")``).

    Raises:
        ApiError: 400, for anything else (a snapshot, a declarative image, a build context).
    """
    content = build_info.get("dockerfileContent") if isinstance(build_info, Mapping) else None
    lines = [line for line in str(content or "").splitlines() if line.strip()]
    found = _FROM_LINE.match(lines[0]) if len(lines) == 1 else None
    if found is None or (isinstance(build_info, Mapping) and build_info.get("contextHashes")):
        raise ApiError(
            400,
            "The local Daytona runs images as they are: create the sandbox from an image name "
            "(CreateSandboxFromImageParams(image='NAME')), not a snapshot or a declarative image.",
        )
    return found["image"]


def _strings(body: Mapping[str, Any], key: str) -> dict[str, str]:
    value = body.get(key) or {}
    if not isinstance(value, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        raise ApiError(400, f"{key} must be an object of strings")
    return dict(value)


def _whole(body: Mapping[str, Any], key: str, default: int, *, low: int = 0) -> int:
    value = body.get(key)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise ApiError(400, f"{key} must be a whole number of at least {low}, not {value!r}")
    return value


@dataclass(frozen=True)
class SandboxSpec:
    """What a ``POST /sandbox`` asked for."""

    image: str
    name: str | None
    env: dict[str, str]
    labels: dict[str, str]
    public: bool
    network_block_all: bool
    cpu: int
    memory: int
    disk: int
    auto_stop_interval: int
    auto_archive_interval: int
    auto_delete_interval: int
    user: str | None
    dockerfile: str

    @classmethod
    def parse(cls, body: Any) -> SandboxSpec:
        """Read the SDK's ``CreateSandbox`` body.

        Raises:
            ApiError: 400 naming the field that is wrong.
        """
        if not isinstance(body, Mapping):
            raise ApiError(400, "The body must be a JSON object (CreateSandbox).")
        if body.get("snapshot"):
            raise ApiError(400, "The local Daytona has no snapshots: create from an image.")
        image = image_of(body.get("buildInfo"))
        name = body.get("name")
        if name is not None and not (isinstance(name, str) and _NAME.match(name)):
            raise ApiError(400, f"name {name!r} must be letters, digits, '-', '_' or '.'")
        if body.get("gpu"):
            raise ApiError(400, "The local Daytona has no GPUs.")
        block = body.get("networkBlockAll")
        return cls(
            image=image,
            name=name,
            env=_strings(body, "env"),
            labels=_strings(body, "labels"),
            public=bool(body.get("public")),
            network_block_all=True if block is None else bool(block),  # no network unless asked
            cpu=_whole(body, "cpu", _DEFAULTS["cpu"], low=1),
            memory=_whole(body, "memory", _DEFAULTS["memory"], low=1),
            disk=_whole(body, "disk", _DEFAULTS["disk"], low=1),
            auto_stop_interval=_whole(body, "autoStopInterval", DEFAULT_AUTO_STOP_MINUTES),
            auto_archive_interval=_whole(body, "autoArchiveInterval", 0),
            auto_delete_interval=_whole(body, "autoDeleteInterval", -1, low=-1),
            user=body.get("user") if isinstance(body.get("user"), str) else None,
            dockerfile=str((body.get("buildInfo") or {}).get("dockerfileContent") or ""),
        )


@dataclass
class SandboxRecord:
    """A sandbox: its spec, its state, its container, and the token of its preview URLs."""

    spec: SandboxSpec
    id: str = field(default_factory=lambda: str(uuid.uuid4()))
    state: str = "creating"
    error_reason: str | None = None
    container_id: str | None = None
    user: str = "root"
    preview_token: str = field(default_factory=lambda: secrets.token_urlsafe(24), repr=False)
    created_at: float = field(default_factory=time.time)
    updated_at: float = field(default_factory=time.time)
    last_activity_at: float = field(default_factory=time.time)
    labels: dict[str, str] = field(default_factory=dict)
    public: bool = False
    auto_stop_interval: int = DEFAULT_AUTO_STOP_MINUTES

    def __post_init__(self) -> None:
        self.labels = dict(self.spec.labels)
        self.public = self.spec.public
        self.auto_stop_interval = self.spec.auto_stop_interval

    @property
    def name(self) -> str:
        return self.spec.name or self.id

    def moved_to(self, state: str, error_reason: str | None = None) -> None:
        self.state, self.error_reason = state, error_reason
        self.updated_at = time.time()

    def touch(self) -> None:
        """Something used the sandbox now (its auto-stop counts from here)."""
        self.last_activity_at = time.time()

    def _common(self, toolbox_url: str) -> dict[str, Any]:
        spec = self.spec
        desired = {"stopped": "stopped", "destroyed": "destroyed"}.get(self.state, "started")
        return {
            "id": self.id, "organizationId": ORGANIZATION_ID, "name": self.name,
            "user": self.user, "labels": dict(self.labels), "public": self.public,
            "networkBlockAll": spec.network_block_all, "target": TARGET, "cpu": spec.cpu,
            "gpu": 0, "memory": spec.memory, "disk": spec.disk, "state": self.state,
            "desiredState": desired, "errorReason": self.error_reason,
            "autoStopInterval": self.auto_stop_interval,
            "autoArchiveInterval": spec.auto_archive_interval,
            "autoDeleteInterval": spec.auto_delete_interval,
            "createdAt": iso_time(self.created_at), "updatedAt": iso_time(self.updated_at),
            "lastActivityAt": iso_time(self.last_activity_at),
            "daemonVersion": DAEMON_VERSION, "toolboxProxyUrl": toolbox_url,
        }  # fmt: skip

    def to_dto(self, toolbox_url: str) -> dict[str, Any]:
        """The ``Sandbox`` the API answers for this sandbox."""
        return {
            **self._common(toolbox_url),
            "env": dict(self.spec.env),
            "kvm": False,
            "buildInfo": {
                "dockerfileContent": self.spec.dockerfile,
                "createdAt": iso_time(self.created_at),
                "updatedAt": iso_time(self.created_at),
                "snapshotRef": self.spec.image,
            },
        }

    def to_list_item(self, toolbox_url: str) -> dict[str, Any]:
        """The ``SandboxListItem`` a listing answers for this sandbox."""
        return {**self._common(toolbox_url), "sandboxClass": "container"}
