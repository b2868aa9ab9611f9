"""One translator per wire format, by the name :attr:`CallRecord.wire` gives it.

Layer: services.
"""

from __future__ import annotations

from openenv_hub.capture.formats.anthropic import AnthropicMessages
from openenv_hub.capture.formats.base import WireTranslator
from openenv_hub.capture.formats.chat import ChatCompletions
from openenv_hub.capture.formats.responses import OpenAIResponses

__all__ = ["TRANSLATORS"]

TRANSLATORS: dict[str, WireTranslator] = {
    "chat": ChatCompletions(),
    "responses": OpenAIResponses(),
    "messages": AnthropicMessages(),
}
