"""The capture proxy: every model call a harness makes, recorded token for token for training.

A harness (mini-swe-agent, Claude Code, Codex CLI, ...) is pointed at the proxy as if it were
its model provider; the proxy forwards each call to the model engine the trainer controls and
records what the engine ran: the prompt's token ids, the sampled token ids, the logprob of
each sampled token, the sampling parameters and the call it continues. No text is
re-tokenised to make training data.

The public surface, for an environment or a rollout worker:

- :class:`CaptureProxy` (``engine_url``, ``model``, ``tokenizer``, ``sampling``, bounds):
  ``start()``/``stop()`` or ``with``; ``base_url`` (OpenAI clients) and ``url`` (Anthropic
  clients), on 127.0.0.1 only; ``open_session()`` and ``close_session(session)``.
- :class:`CaptureSession`, one per rollout: ``key`` (the harness's API key: a capability,
  never logged or shown), ``display_id`` (names it, grants nothing), ``calls``
  (:class:`CallRecord` list), ``sequences()`` (:class:`TrainingSequence` list: ``input_ids``,
  ``loss_mask`` over sampled tokens only, ``logprobs``), ``report()`` (:class:`CaptureReport`),
  ``conversation(index)`` (a call's whole request), ``as_dict()``.
- Plain-data functions over records from anywhere (a file, a dataset):
  :func:`assemble_sequences`, :func:`find_parent`, :func:`grade_capture`,
  :func:`write_capture` / :func:`read_capture` (JSON Lines, a ``rollout`` column; push the file
  with :func:`openenv_hub.trajectories.push_trajectories`).
- :class:`ChatTokenizer` and :func:`stitch`, the prompt building from ids (see
  :mod:`openenv_hub.capture.stitching` for why the proxy needs the model's tokenizer).

What the harness sees: ``POST /v1/chat/completions``, ``/v1/responses`` and ``/v1/messages``,
streaming (the engine's whole answer replayed as server-sent events of the harness's format)
or not, tool calls translated both ways (:mod:`openenv_hub.capture.formats`); ``GET
/v1/models``; 401 for a key that is not an open session's. It never sees the engine's URL,
its credentials, or any other session.

Layer: services.
"""

from openenv_hub.capture.app import ProxyLimits, create_proxy_app, session_key
from openenv_hub.capture.chat_form import (
    ChatCall,
    EngineReply,
    ToolCall,
    TranslationError,
    message_digests,
)
from openenv_hub.capture.engine import EngineClient, EngineError
from openenv_hub.capture.grades import CaptureReport, Finding, Grade, grade_capture
from openenv_hub.capture.proxy import HOST, CaptureProxy
from openenv_hub.capture.recorder import Recorder
from openenv_hub.capture.records import (
    WIRE_FORMATS,
    CallRecord,
    TrainingSequence,
    WireFormat,
    read_capture,
    write_capture,
)
from openenv_hub.capture.sequences import assemble_sequences, find_parent
from openenv_hub.capture.sessions import CaptureSession, SessionRegistry
from openenv_hub.capture.stitching import ChatTokenizer, Stitched, stitch

__all__ = [
    "HOST",
    "WIRE_FORMATS",
    "CallRecord",
    "CaptureProxy",
    "CaptureReport",
    "CaptureSession",
    "ChatCall",
    "ChatTokenizer",
    "EngineClient",
    "EngineError",
    "EngineReply",
    "Finding",
    "Grade",
    "ProxyLimits",
    "Recorder",
    "SessionRegistry",
    "Stitched",
    "ToolCall",
    "TrainingSequence",
    "TranslationError",
    "WireFormat",
    "assemble_sequences",
    "create_proxy_app",
    "find_parent",
    "grade_capture",
    "message_digests",
    "read_capture",
    "session_key",
    "stitch",
    "write_capture",
]
