"""A server under validation, reached with bounds that are totals, never per read.

:class:`RemoteTarget` answers each request whole, within the time left to the check that asked
(``timeout_s`` for all of a check's requests) and to the whole validation (``total_timeout_s``),
and reads no more than ``max_reply_bytes`` of an answer; past either it raises
:class:`LimitExceeded`. So a server that trickles a byte at a time, or answers without end,
cannot hold a validation.

Layer: client.
"""

from __future__ import annotations

import json
import time
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any

import anyio
import httpx
from anyio.from_thread import BlockingPortal, start_blocking_portal

from openenv_hub.protocol.urls import is_loopback
from openenv_hub.validation.sample import sample_from_schema

__all__ = ["DEFAULT_MAX_REPLY_BYTES", "LimitExceeded", "RemoteTarget", "Reply"]

DEFAULT_MAX_REPLY_BYTES = 8 * 1024 * 1024
TOTAL_TIMEOUT_FACTOR = 6  # the whole validation, in units of timeout_s


class LimitExceeded(Exception):
    """A request outlasted its time or sent more than the size limit."""


@dataclass(frozen=True)
class Reply:
    """A server's answer, read whole within the limits."""

    status_code: int
    content: bytes

    @property
    def text(self) -> str:
        return self.content.decode("utf-8", errors="replace")

    def json(self) -> Any:
        return json.loads(self.content)


@dataclass
class RemoteTarget:
    """A server under test, and what earlier checks learned about it. Close it when done
    (``with RemoteTarget(url) as target``).

    Args:
        base_url: The server's URL (``http://`` is assumed without a scheme).
        timeout_s: Time for each check, all its requests together.
        total_timeout_s: Time for every check together (default ``6 * timeout_s``).
        max_reply_bytes: Largest answer (HTTP body or WebSocket message) read.
    """

    base_url: str
    timeout_s: float = 10.0
    total_timeout_s: float | None = None
    max_reply_bytes: int = DEFAULT_MAX_REPLY_BYTES
    openapi: dict[str, Any] = field(default_factory=dict)
    schemas: dict[str, Any] = field(default_factory=dict)
    deadline: float = field(init=False)
    check_deadline: float = field(init=False)
    _portal: BlockingPortal = field(init=False, repr=False)
    _running: AbstractContextManager[BlockingPortal] = field(init=False, repr=False)
    _client: httpx.AsyncClient = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.base_url = self.base_url.rstrip("/")
        if "://" not in self.base_url:
            self.base_url = "http://" + self.base_url
        total = self.total_timeout_s or TOTAL_TIMEOUT_FACTOR * self.timeout_s
        self.total_timeout_s = total
        self.deadline = time.monotonic() + total
        self.check_deadline = self.deadline
        self._client = httpx.AsyncClient(
            base_url=self.base_url, timeout=self.timeout_s, trust_env=not is_loopback(self.base_url)
        )
        self._running = start_blocking_portal()
        self._portal = self._running.__enter__()

    def close(self) -> None:
        try:
            self._portal.call(self._client.aclose)
        finally:
            self._running.__exit__(None, None, None)

    def __enter__(self) -> RemoteTarget:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def start_check(self) -> None:
        """The next requests belong to a new check: its ``timeout_s`` starts now."""
        self.check_deadline = min(time.monotonic() + self.timeout_s, self.deadline)

    def remaining_s(self, what: str) -> float:
        """Time left for ``what`` in this check; raises :class:`LimitExceeded` if none."""
        left = self.check_deadline - time.monotonic()
        if left > 0:
            return left
        if self.check_deadline >= self.deadline:
            raise LimitExceeded(
                f"the validation's time limit of {self.total_timeout_s:g} s passed before {what}"
            )
        raise LimitExceeded(f"{what} did not finish within {self.timeout_s:g} s")

    def get(self, path: str) -> Reply:
        return self.request("GET", path)

    def post(self, path: str, body: Any) -> Reply:
        return self.request("POST", path, body)

    def request(self, method: str, path: str, body: Any = None) -> Reply:
        """``method path`` answered whole within the check's time and the size limit.

        Raises:
            LimitExceeded: It took too long or answered too much.
            httpx.HTTPError: It failed (refused, reset, not HTTP).
        """
        what = f"{method} {path}"
        budget = self.remaining_s(what)
        try:
            reply: Reply = self._portal.call(self._fetch, method, path, body, budget)
        except TimeoutError:
            raise LimitExceeded(
                f"{what} did not finish within {min(budget, self.timeout_s):.3g} s (its whole "
                "answer, not each part)"
            ) from None
        return reply

    async def _fetch(self, method: str, path: str, body: Any, budget: float) -> Reply:
        with anyio.fail_after(budget):
            options: dict[str, Any] = {} if body is None else {"json": body}
            # httpx's own limits apply to each read: set past the total, which ends it first
            limits = httpx.Timeout(budget + 1.0)
            async with self._client.stream(method, path, timeout=limits, **options) as response:
                content = bytearray()
                async for chunk in response.aiter_bytes():
                    content += chunk
                    if len(content) > self.max_reply_bytes:
                        raise LimitExceeded(
                            f"{method} {path} answered more than "
                            f"{self.max_reply_bytes / (1024 * 1024):g} MB"
                        )
        return Reply(response.status_code, bytes(content))

    @property
    def simulation(self) -> bool:
        return "/reset" in self.openapi.get("paths", {})

    def sample_action(self) -> Any:
        return sample_from_schema(self.schemas.get("action", {}))
