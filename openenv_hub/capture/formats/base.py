"""What a wire format does for the proxy, and the checks its translations share.

Layer: services.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Protocol

from openenv_hub.capture.chat_form import ChatCall, EngineReply, TranslationError
from openenv_hub.capture.records import WireFormat

__all__ = ["WireTranslator", "field_of", "list_of", "openai_error", "sampling_from"]


class WireTranslator(Protocol):
    """One wire format: from a harness's request to a :class:`ChatCall`, and from the
    engine's :class:`EngineReply` back to the harness, as one body or as a stream."""

    name: WireFormat

    def parse(self, body: dict[str, Any]) -> ChatCall:
        """The request in chat completions terms (:class:`TranslationError` if it is not
        one this format allows)."""
        ...

    def answer(self, call: ChatCall, reply: EngineReply) -> dict[str, Any]:
        """The reply as this format's response body."""
        ...

    def stream(self, call: ChatCall, reply: EngineReply) -> Iterator[bytes]:
        """The reply as this format's server-sent events."""
        ...

    def error(self, status: int, message: str) -> dict[str, Any]:
        """An error body in this format's shape."""
        ...


def field_of(body: dict[str, Any], name: str, kinds: type | tuple[type, ...]) -> Any:
    """``body[name]`` when present and of one of ``kinds``, else None when absent; a
    :class:`TranslationError` naming the field when it has another type."""
    value = body.get(name)
    if value is None:
        return None
    if isinstance(value, bool) and bool not in (kinds if isinstance(kinds, tuple) else (kinds,)):
        raise TranslationError(f"'{name}' must be {_kind_names(kinds)}, not a boolean")
    if not isinstance(value, kinds):
        raise TranslationError(f"'{name}' must be {_kind_names(kinds)}")
    return value


def list_of(body: dict[str, Any], name: str) -> list[Any]:
    """``body[name]`` as a list ([] when absent)."""
    value = field_of(body, name, list)
    return list(value or [])


def _kind_names(kinds: type | tuple[type, ...]) -> str:
    names = {
        str: "a string",
        int: "an integer",
        float: "a number",
        list: "a list",
        dict: "an object",
        bool: "true or false",
    }
    kinds = kinds if isinstance(kinds, tuple) else (kinds,)
    return " or ".join(dict.fromkeys(names.get(kind, kind.__name__) for kind in kinds))


#: Sampling parameters the engine takes, and their JSON types.
SAMPLING_FIELDS: dict[str, type | tuple[type, ...]] = {
    "temperature": (int, float),
    "top_p": (int, float),
    "top_k": int,
    "min_p": (int, float),
    "seed": int,
    "presence_penalty": (int, float),
    "frequency_penalty": (int, float),
    "repetition_penalty": (int, float),
    "logit_bias": dict,
    "min_tokens": int,
}


def sampling_from(body: dict[str, Any], renamed: dict[str, str]) -> dict[str, Any]:
    """The sampling parameters of ``body``: those the engine takes under their own name, and
    those of ``renamed`` (the format's name -> the engine's: ``max_output_tokens`` ->
    ``max_tokens``, ``stop_sequences`` -> ``stop``)."""
    sampling: dict[str, Any] = {}
    for name, kinds in SAMPLING_FIELDS.items():
        value = field_of(body, name, kinds)
        if value is not None:
            sampling[name] = value
    for theirs, ours in renamed.items():
        wanted: type | tuple[type, ...] = (str, list) if ours == "stop" else int
        value = field_of(body, theirs, wanted)
        if value is not None:
            sampling[ours] = [value] if isinstance(value, str) else value
    max_tokens = sampling.get("max_tokens")
    if max_tokens is not None and max_tokens < 1:
        raise TranslationError("the largest number of tokens to sample must be at least 1")
    return sampling


def openai_error(status: int, message: str) -> dict[str, Any]:
    """An error body as OpenAI's APIs shape it (chat completions and Responses)."""
    kind = "invalid_request_error" if status < 500 else "server_error"
    if status == 401:
        kind = "authentication_error"
    return {"error": {"message": message, "type": kind, "code": status}}
