"""Capture sessions: one per rollout, keyed by a secret the harness uses as its API key.

The trainer's side (an environment, a rollout worker) opens a :class:`CaptureSession` with
:meth:`CaptureProxy.open_session`, gives :attr:`CaptureSession.key` to one harness as its API
key, and reads the session's calls, sequences and grades from the object it holds. Nothing
over HTTP lists sessions or reads records: the proxy's routes only take model calls, and a
key grants exactly one thing, recording calls into its own session.

A key is a capability: 32 random bytes, kept only as its SHA-256 digest by the registry
(looked up by digest, so no comparison leaks it through timing), never logged, never shown
by ``repr``. :attr:`CaptureSession.display_id` names a session where one must be named (logs,
record files) and grants nothing.

Layer: services.
"""

from __future__ import annotations

import hashlib
import secrets
import threading
from dataclasses import dataclass
from typing import Any

from openenv_hub.capture.chat_form import message_digests, next_digest
from openenv_hub.capture.grades import CaptureReport, grade_capture
from openenv_hub.capture.records import CallRecord, TrainingSequence
from openenv_hub.capture.sequences import assemble_sequences
from openenv_hub.errors import ConfigurationError

__all__ = ["KEPT_PROMPT_TEXTS", "CaptureSession", "Continuation", "SessionRegistry"]

#: How many built prompts' texts a session keeps for the calls that continue them.
KEPT_PROMPT_TEXTS = 4


def _digest(key: str) -> bytes:
    return hashlib.sha256(key.encode()).digest()


@dataclass(frozen=True)
class Continuation:
    """What a request continues: the call, and where its answer is in the request's
    messages (``None`` call: it continues nothing, for the reason in ``note``)."""

    call: int | None
    answer_at: int = -1
    note: str | None = None


class CaptureSession:
    """The calls of one rollout.

    Args:
        key: The session's secret (the harness's API key).
        display_id: A name that grants nothing.
        max_calls: The most calls it records; later calls are refused (429).
    """

    def __init__(self, key: str, display_id: str, *, max_calls: int) -> None:
        self._key = key
        self.display_id = display_id
        self.max_calls = max_calls
        self.closed = False
        self._lock = threading.Lock()
        self._calls: list[CallRecord] = []
        self._next_index = 0
        self._by_history: dict[bytes, int] = {}  # digest of messages + answer -> call index
        self._offers: dict[int, bytes] = {}  # call index -> digest of its tools and tool_choice
        self._latest: tuple[int, list[bytes]] | None = None  # the last call's prefix digests
        self._prompt_texts: dict[int, str] = {}  # the last few built prompts, as template text

    @property
    def key(self) -> str:
        """The secret to give the harness as its API key (``Authorization: Bearer KEY`` or
        ``x-api-key: KEY``)."""
        return self._key

    def __repr__(self) -> str:
        return f"CaptureSession({self.display_id}, {len(self._calls)} calls)"

    # -- what the trainer reads ---------------------------------------------------------

    @property
    def calls(self) -> list[CallRecord]:
        """The calls recorded so far, in the order they arrived."""
        with self._lock:
            return sorted(self._calls, key=lambda c: c.index)

    def sequences(self) -> list[TrainingSequence]:
        """The training sequences of the calls so far (see :func:`assemble_sequences`)."""
        return assemble_sequences(self.calls)

    def report(self) -> CaptureReport:
        """The grades of the capture so far (see :func:`grade_capture`)."""
        return grade_capture(self.calls)

    def conversation(self, index: int) -> list[dict[str, Any]]:
        """The whole request of call ``index`` (its record keeps only the new messages)."""
        calls = {c.index: c for c in self.calls}
        parts: list[list[dict[str, Any]]] = []
        call = calls[index]
        while True:
            parts.append(call.messages)
            if call.continues is None or call.continues not in calls:
                break
            call = calls[call.continues]
            parts.append([call.reply])
        return [message for part in reversed(parts) for message in part]

    def as_dict(self) -> dict[str, Any]:
        """The session's calls, sequences and grades as plain data (no key)."""
        return {
            "rollout": self.display_id,
            "calls": [c.as_dict() for c in self.calls],
            "sequences": [s.as_dict() for s in self.sequences()],
            "report": self.report().as_dict(),
        }

    # -- what the proxy does -------------------------------------------------------------

    def next_index(self) -> int | None:
        """A number for a new call, or None when the session has all it may record."""
        with self._lock:
            if self._next_index >= self.max_calls:
                return None
            self._next_index += 1
            return self._next_index - 1

    def continuation(
        self, messages: list[dict[str, Any]], offer: bytes = b""
    ) -> tuple[Continuation, list[bytes]]:
        """Which earlier call ``messages`` continue (its messages, its answer, then at least
        one new message), the latest of the longest match; and the digests of ``messages``.
        ``offer`` is the call's :func:`~openenv_hub.capture.chat_form.offer_digest`: a call
        whose tools or tool choice differ from the matched call's continues nothing (its
        prompt names other tools), and starts a new sequence."""
        digests = message_digests(messages)
        with self._lock:
            for length in range(len(messages) - 1, 0, -1):
                call = self._by_history.get(digests[length])
                if call is not None and self._offers.get(call, b"") != offer:
                    note = (
                        f"its tools or tool_choice differ from those of call {call}, whose "
                        "conversation it continues (that call's prompt names other tools)"
                    )
                    return Continuation(None, note=note), digests
                if call is not None:
                    return Continuation(call, answer_at=length - 1), digests
            return Continuation(None, note=self._why_new(digests)), digests

    def _why_new(self, digests: list[bytes]) -> str:
        if self._latest is None:
            return "it is the rollout's first call"
        latest, earlier = self._latest
        same = 0
        while same + 1 < min(len(earlier), len(digests)) and earlier[same + 1] == digests[same + 1]:
            same += 1
        if same == 0:
            return f"its first message differs from call {latest}'s (another conversation)"
        return (
            f"the harness's messages differ from call {latest}'s conversation at message "
            f"{same} (a rewritten history)"
        )

    def keep_prompt_text(self, index: int, text: str) -> None:
        """Keep the chat template's text of call ``index``'s prompt, for the call that
        continues it (the last :data:`KEPT_PROMPT_TEXTS` only)."""
        with self._lock:
            self._prompt_texts[index] = text
            while len(self._prompt_texts) > KEPT_PROMPT_TEXTS:
                del self._prompt_texts[min(self._prompt_texts)]

    def prompt_text(self, index: int) -> str | None:
        with self._lock:
            return self._prompt_texts.get(index)

    def add(self, record: CallRecord, digests: list[bytes], offer: bytes = b"") -> None:
        """Keep ``record``; ``digests`` (and ``offer``) are its request's, to recognise its
        continuations."""
        with self._lock:
            self._calls.append(record)
            if record.error is None:
                self._offers[record.index] = offer
                whole = [*digests, next_digest(digests[-1], record.reply)]
                if self._latest is None or record.index > self._latest[0]:
                    self._latest = (record.index, whole)
                self._by_history[whole[-1]] = record.index


class SessionRegistry:
    """The open sessions of one proxy, found by key digest.

    Args:
        max_sessions: The most sessions open at once.
        max_calls: The most calls one session records.
    """

    def __init__(self, *, max_sessions: int, max_calls: int) -> None:
        self.max_sessions = max_sessions
        self.max_calls = max_calls
        self._lock = threading.Lock()
        self._sessions: dict[bytes, CaptureSession] = {}
        self._opened = 0

    def open(self) -> CaptureSession:
        with self._lock:
            if len(self._sessions) >= self.max_sessions:
                raise ConfigurationError(
                    f"The capture proxy has {self.max_sessions} sessions open, its limit: close "
                    "finished rollouts' sessions (proxy.close_session(session)) or raise "
                    "max_sessions"
                )
            self._opened += 1
            key = f"cap-{secrets.token_urlsafe(32)}"
            session = CaptureSession(key, f"rollout-{self._opened}", max_calls=self.max_calls)
            self._sessions[_digest(key)] = session
            return session

    def find(self, key: str | None) -> CaptureSession | None:
        if not key:
            return None
        with self._lock:
            return self._sessions.get(_digest(key))

    def close(self, session: CaptureSession) -> None:
        with self._lock:
            self._sessions.pop(_digest(session.key), None)
            session.closed = True

    def __len__(self) -> int:
        return len(self._sessions)
