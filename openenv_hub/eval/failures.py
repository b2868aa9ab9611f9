"""What the infrastructure did, told apart from what the model did, and how it is retried.

A wrong answer, a malformed tool call or a turn without a tool call are *results*: they are
scored. A refused connection, a timeout, a 429 or 5xx, a reply that is not a completion, or an
environment session lost are *infrastructure errors*: :class:`InfrastructureError`, with a
:attr:`~InfrastructureError.kind`, a message naming the endpoint, the status and the first bytes
of the body, and where it happened (task, sample, turn). They are retried with exponential
back-off and jitter (:class:`Backoff`, honouring ``Retry-After``); a rollout that still fails
is written with ``finish: "error"`` and is not counted in pass@k or the mean.

Layer: client.
"""

from __future__ import annotations

import email.utils
import random
import time
from dataclasses import dataclass

from openenv_hub.errors import ActionValidationError, OpenEnvError, ToolCallError

__all__ = [
    "ERROR_KINDS",
    "Backoff",
    "InfrastructureError",
    "body_excerpt",
    "environment_failure",
    "retry_after_s",
]

#: Every kind of infrastructure error, and what it means.
ERROR_KINDS = {
    "connection": "the endpoint could not be reached",
    "timeout": "no answer within --request-timeout",
    "rate_limit": "the endpoint answered 429",
    "server_error": "the endpoint answered 5xx",
    "http_error": "the endpoint answered another 4xx (a wrong URL or model name, a bad key)",
    "bad_reply": "a reply that is not a completion (not JSON, or no choices)",
    "environment": "the environment's session was lost, or its server failed",
    "bad_reward": "the environment gave a reward that is not a number in its declared range",
    "rollout_timeout": "the rollout took longer than --rollout-timeout",
    "policy": "the Python policy raised",
}

#: Statuses worth asking again: the server may answer otherwise later.
RETRIED_STATUSES = frozenset({408, 409, 425, 429, 500, 502, 503, 504})
#: The longest ``Retry-After`` obeyed; a longer one is waited for this long.
MAX_RETRY_AFTER_S = 120.0
BODY_BYTES = 200


class InfrastructureError(OpenEnvError):
    """The infrastructure failed, not the model.

    Attributes:
        kind: One of :data:`ERROR_KINDS`.
        retryable: Whether asking again may succeed.
        retry_after_s: The wait the server asked for (``Retry-After``), if any.
        where: Which request: ``"task test/brick, sample 2, turn 3"`` ("" until known).
    """

    def __init__(
        self,
        kind: str,
        message: str,
        *,
        retryable: bool = True,
        retry_after_s: float | None = None,
    ) -> None:
        assert kind in ERROR_KINDS, kind
        super().__init__(message or ERROR_KINDS[kind])
        self.kind, self.retryable, self.retry_after_s = kind, retryable, retry_after_s
        self.where = ""

    def at(self, where: str) -> InfrastructureError:
        """This error, saying which request failed (the first place given is kept)."""
        self.where = self.where or where
        return self

    def __str__(self) -> str:
        text = f"{self.kind}: {self.message}"
        return f"{text} ({self.where})" if self.where else text


def environment_failure(exc: OpenEnvError | OSError, url: str) -> InfrastructureError | None:
    """The infrastructure error an environment call raised, or None when it is the model's doing
    (an action the environment refused, a tool that failed): the model is told, and plays on."""
    if isinstance(exc, (ActionValidationError, ToolCallError)):
        return None
    return InfrastructureError("environment", f"{url}: {_described(exc)}")


def _described(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else f"{type(exc).__name__} (no message)"


def body_excerpt(text: str) -> str:
    """The first bytes of a body, quoted, for an error message."""
    if not text:
        return "an empty body"
    cut = text[:BODY_BYTES]
    return repr(cut) + (" ..." if len(text) > BODY_BYTES else "")


def retry_after_s(value: str | None, *, now: float | None = None) -> float | None:
    """Seconds a ``Retry-After`` header asks for (a number, or an HTTP date), or None."""
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        parsed = email.utils.parsedate_to_datetime(value) if "," in value else None
        if parsed is None:
            return None
        seconds = parsed.timestamp() - (time.time() if now is None else now)
    return max(0.0, min(seconds, MAX_RETRY_AFTER_S))


@dataclass(frozen=True)
class Backoff:
    """Exponential back-off with jitter: retry ``n`` (from 0) waits a random time between half
    and all of ``min(cap_s, base_s * 2**n)``, or what ``Retry-After`` asked for.

    Attributes:
        max_retries: Retries after the first try (0: none).
        base_s: The first wait's bound.
        cap_s: The longest wait.
    """

    max_retries: int = 4
    base_s: float = 1.0
    cap_s: float = 30.0

    def delay_s(self, retry: int, asked_s: float | None = None) -> float:
        if asked_s is not None:
            return asked_s
        bound = min(self.cap_s, self.base_s * 2.0**retry)
        return float(bound * (0.5 + random.random() / 2))
