"""One model call through the proxy, recorded: find what it continues, build its prompt from
ids when it continues an earlier call, run it on the engine, keep a :class:`CallRecord`.

Layer: services.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

from openenv_hub.capture.chat_form import ChatCall, EngineReply, offer_digest
from openenv_hub.capture.engine import EngineClient, EngineError
from openenv_hub.capture.records import CallRecord, WireFormat
from openenv_hub.capture.sequences import find_parent
from openenv_hub.capture.sessions import CaptureSession, Continuation
from openenv_hub.capture.stitching import ChatTokenizer, stitch

__all__ = ["NO_TOKENIZER", "Recorder"]

logger = logging.getLogger("openenv_hub.capture")

NO_TOKENIZER = (
    "the proxy has no tokenizer (CaptureProxy(tokenizer=...)), so the engine rendered the "
    "history from its text"
)


class Recorder:
    """Runs and records calls.

    Args:
        engine: The engine's client (set before the first call when None here).
        tokenizer: The model's tokenizer and chat template, to build continuing prompts from
            ids; None lets the engine render every prompt from text (breaks are then graded).
        sampling: Sampling parameters set on every call, whatever the harness asked.
        max_tokens_cap: The most tokens one call may sample, whatever the harness asked.
    """

    def __init__(
        self,
        engine: EngineClient | None,
        tokenizer: ChatTokenizer | None,
        *,
        sampling: dict[str, Any] | None = None,
        max_tokens_cap: int | None = None,
    ) -> None:
        self.engine = engine
        self.tokenizer = tokenizer
        self.sampling = dict(sampling or {})
        self.max_tokens_cap = max_tokens_cap

    def _sampling(self, call: ChatCall) -> dict[str, Any]:
        sampling = {**call.sampling, **self.sampling}
        if self.max_tokens_cap is not None:
            sampling["max_tokens"] = min(
                sampling.get("max_tokens", self.max_tokens_cap), self.max_tokens_cap
            )
        return sampling

    def _prompt(
        self, session: CaptureSession, index: int, call: ChatCall, link: Continuation
    ) -> tuple[list[int] | None, str | None]:
        if link.call is None:
            return None, None
        if self.tokenizer is None:
            return None, NO_TOKENIZER
        parent = next(c for c in session.calls if c.index == link.call)
        if not parent.prompt_ids or not parent.sampled_ids:
            return None, f"call {parent.index} has no ids to continue from"
        try:
            stitched = stitch(
                prompt_ids=parent.prompt_ids,
                sampled_ids=parent.sampled_ids,
                messages=call.messages,
                answer_at=link.answer_at,
                tools=call.tools,
                tokenizer=self.tokenizer,
                earlier_text=session.prompt_text(parent.index),
            )
        except Exception as error:  # the model's own template code, run on a harness's messages
            return None, f"the chat template failed on this conversation ({error})"
        if stitched.text is not None:
            session.keep_prompt_text(index, stitched.text)
        return stitched.ids, stitched.note

    def _prepare(
        self, session: CaptureSession, index: int, call: ChatCall, wire: WireFormat
    ) -> tuple[CallRecord, list[bytes], bytes, bytes]:
        """Call ``index``'s record (its link to the call it continues, its prompt built from
        ids), its digests, and the body to send the engine."""
        if self.engine is None:
            raise RuntimeError("the recorder has no engine client yet")
        offer = offer_digest(call.tools, call.tool_choice)
        link, digests = session.continuation(call.messages, offer)
        prompt_ids, note = self._prompt(session, index, call, link)
        history = link.answer_at + 1 if link.call is not None else 0
        record = CallRecord(
            index=index,
            wire=wire,
            streamed=call.stream,
            model=call.model,
            sampling=self._sampling(call),
            prompt_ids=[],
            sampled_ids=[],
            logprobs=[],
            finish_reason=None,
            continues=link.call,
            stitched=prompt_ids is not None,
            link_note=note or link.note,
            messages=call.messages[history:],
            history_length=history,
            tools=call.tool_names,
            dropped=list(call.dropped),
            started_at=time.time(),
        )
        payload = self.engine.encode(call, record.sampling, prompt_ids)
        return record, digests, offer, payload

    async def run(
        self,
        session: CaptureSession,
        index: int,
        call: ChatCall,
        wire: WireFormat,
        *,
        off_loop: bool = False,
    ) -> EngineReply:
        """Run ``call`` as call ``index`` of ``session`` and record it; :class:`EngineError`
        (recorded as a failed call) when the engine gives no answer. ``off_loop``: build the
        prompt and the engine's body in a worker thread (a large call), so the event loop
        serves the other sessions meanwhile."""
        started = time.perf_counter()
        if off_loop:
            prepared = await asyncio.to_thread(self._prepare, session, index, call, wire)
        else:
            prepared = self._prepare(session, index, call, wire)
        record, digests, offer, payload = prepared
        engine_started = time.perf_counter()
        assert self.engine is not None  # checked by _prepare
        try:
            reply = await self.engine.send(payload, off_loop=off_loop)
        except EngineError as error:
            record.error, record.error_status = str(error), error.status
            record.total_ms = record.engine_ms = _ms_since(engine_started)
            session.add(record, digests, offer)
            logger.warning("%s call %d failed: %s", session.display_id, index, error)
            raise
        record.engine_ms = _ms_since(engine_started)
        if off_loop:
            await asyncio.to_thread(_keep, session, record, reply, (digests, offer), started)
        else:
            _keep(session, record, reply, (digests, offer), started)
        return reply


def _keep(
    session: CaptureSession,
    record: CallRecord,
    reply: EngineReply,
    request: tuple[list[bytes], bytes],
    started: float,
) -> None:
    """Fill ``record`` with the engine's answer, link it to the call its prompt continues,
    and keep it in ``session`` with its request's digests and offer."""
    record.prompt_ids, record.sampled_ids = reply.prompt_ids, reply.sampled_ids
    record.logprobs, record.finish_reason = reply.logprobs, reply.finish_reason
    record.reply = reply.as_message()
    record.parent = find_parent(reply.prompt_ids, session.calls) if reply.prompt_ids else None
    record.total_ms = _ms_since(started)
    session.add(record, *request)


def _ms_since(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 3)
