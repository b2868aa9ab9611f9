"""The wire formats a harness may speak to the capture proxy, each translated to and from chat
completions: :class:`ChatCompletions` (``/v1/chat/completions``), :class:`OpenAIResponses`
(``/v1/responses``) and :class:`AnthropicMessages` (``/v1/messages``); :data:`TRANSLATORS`
holds one of each by its wire name.

Layer: services.
"""

from openenv_hub.capture.formats.anthropic import AnthropicMessages
from openenv_hub.capture.formats.base import WireTranslator
from openenv_hub.capture.formats.chat import ChatCompletions
from openenv_hub.capture.formats.registry import TRANSLATORS
from openenv_hub.capture.formats.responses import OpenAIResponses

__all__ = [
    "TRANSLATORS",
    "AnthropicMessages",
    "ChatCompletions",
    "OpenAIResponses",
    "WireTranslator",
]
