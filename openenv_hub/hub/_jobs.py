"""Hugging Face Jobs, through ``huggingface_hub``: run one, read its stage and log, cancel it,
list those with given labels, and the hourly price of a flavor.

Job labels take letters, digits, ``-`` and ``_`` only (at most 100 of them): :func:`job_label`
makes any text one. Hub errors become :class:`~openenv_hub.errors.HubError` with a hint.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from openenv_hub.hub._client import HubContext
from openenv_hub.hub._errors import hub_call
from openenv_hub.hub._reads import find_space

__all__ = ["TERMINAL_STAGES", "JobState", "JobsClient", "job_label"]

TERMINAL_STAGES = frozenset({"COMPLETED", "CANCELED", "ERROR", "DELETED"})


def job_label(text: str) -> str:
    """``text`` as a Job label value (letters, digits, ``-``, ``_``; at most 100)."""
    return re.sub(r"[^A-Za-z0-9_-]", "-", text)[:100]


@dataclass(frozen=True)
class JobState:
    """What the Hub says of one Job now."""

    id: str
    stage: str
    message: str | None
    urls: tuple[str, ...]
    flavor: str
    labels: Mapping[str, str]
    created_at: datetime | None
    running_s: float | None = None

    @property
    def finished(self) -> bool:
        return self.stage in TERMINAL_STAGES

    @property
    def age_s(self) -> float:
        """Seconds since the Job was created (0 when the Hub did not say)."""
        if self.created_at is None:
            return 0.0
        return (datetime.now(timezone.utc) - self.created_at).total_seconds()

    @classmethod
    def of(cls, info: Any) -> JobState:
        """From ``huggingface_hub``'s ``JobInfo``."""
        status = info.status
        return cls(
            id=info.id,
            stage=str(getattr(status.stage, "value", status.stage)),
            message=status.message,
            urls=tuple(status.expose_urls or ()),
            flavor=str(getattr(info.flavor, "value", info.flavor) or ""),
            labels=dict(info.labels or {}),
            created_at=info.created_at,
            running_s=getattr(info.durations, "running_secs", None),
        )


class JobsClient:
    """The Jobs of one namespace on one Hub.

    Args:
        endpoint: The Hub (default ``HF_ENDPOINT``, else huggingface.co).
        token: The token (default ``HF_TOKEN`` or the saved login); Jobs need one.
        namespace: Whose Jobs (default: the token's user).
    """

    def __init__(
        self,
        *,
        endpoint: str | None = None,
        token: str | None = None,
        namespace: str | None = None,
    ) -> None:
        self._ctx = HubContext.create(
            endpoint=endpoint, token=token, required=True, action="run Jobs"
        )
        self._namespace = namespace

    @property
    def endpoint(self) -> str:
        return self._ctx.endpoint

    @property
    def token(self) -> str:
        return self._ctx.token or ""

    @property
    def namespace(self) -> str:
        if self._namespace is None:
            with self._errors("find who the token belongs to"):
                self._namespace = str(self._ctx.api.whoami()["name"])
        return self._namespace

    def _errors(self, action: str) -> Any:
        return hub_call(self._ctx, action)

    def space_image(self, repo_id: str, revision: str | None = None) -> str:
        """The image of the Space (``hf.co/spaces/NS/NAME``; at a commit when ``revision``
        names one, as ``hf.co/spaces/NS/NAME@COMMIT``)."""
        if revision is None:
            find_space(self._ctx, repo_id)
            return f"hf.co/spaces/{repo_id}"
        commit = find_space(self._ctx, repo_id, revision).sha
        return f"hf.co/spaces/{repo_id}@{commit}"

    def run(
        self,
        image: str,
        *,
        command: list[str] | None = None,
        env: Mapping[str, str] | None = None,
        secrets: Mapping[str, str] | None = None,
        flavor: str = "cpu-basic",
        timeout_s: int | None = None,
        labels: Mapping[str, str] | None = None,
        expose: list[int] | None = None,
        expose_public: list[int] | None = None,
    ) -> JobState:
        """Run a Job of ``image`` (its own command unless ``command``); secrets go as the Job's
        secrets, never in its command."""
        with self._errors(f"run a Job of {image}"):
            info = self._ctx.api.run_job(
                image=image, command=list(command or []), env=dict(env or {}),
                secrets=dict(secrets or {}) or None, flavor=flavor, timeout=timeout_s,
                labels=dict(labels or {}) or None, expose=expose, expose_public=expose_public,
                namespace=self.namespace,
            )  # fmt: skip
        return JobState.of(info)

    def inspect(self, job_id: str) -> JobState:
        with self._errors(f"read Job {job_id}"):
            return JobState.of(self._ctx.api.inspect_job(job_id=job_id, namespace=self.namespace))

    def cancel(self, job_id: str) -> None:
        with self._errors(f"cancel Job {job_id}"):
            self._ctx.api.cancel_job(job_id=job_id, namespace=self.namespace)

    def labelled(self, labels: Mapping[str, str] | None = None) -> list[JobState]:
        """The namespace's Jobs that carry all ``labels``."""
        with self._errors("list Jobs"):
            found = self._ctx.api.list_jobs(labels=dict(labels or {}), namespace=self.namespace)
            return [JobState.of(info) for info in found]

    def logs(self, job_id: str, tail: int = 40) -> list[str]:
        """The last ``tail`` lines the Job printed so far."""
        with self._errors(f"read the log of Job {job_id}"):
            found = self._ctx.api.fetch_job_logs(job_id=job_id, namespace=self.namespace, tail=tail)
            return [line.rstrip("\n") for line in found]

    def hourly_cost_usd(self, flavor: str) -> float | None:
        """What an hour of ``flavor`` costs, from the Hub's list (None if it lists no such
        flavor)."""
        with self._errors("list the Jobs' hardware"):
            hardware = self._ctx.api.list_jobs_hardware()
        units = {"second": 3600, "minute": 60, "hour": 1}
        for item in hardware:
            if item.name == flavor:
                return float(item.unit_cost_usd) * units.get(str(item.unit_label), 1)
        return None
