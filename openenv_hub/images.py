"""Deprecated: import :mod:`openenv_hub.frames` instead (same objects).

The module holds numpy frames sent as PNG data, not Docker images; its new name says so.

Layer: model.
"""

import openenv_hub.frames as _moved_to
from openenv_hub.deprecation import warn_moved
from openenv_hub.frames import *  # noqa: F403 - the deprecated name of that module
from openenv_hub.frames import decode_png, encode_png

__all__ = [*_moved_to.__all__, "decode_png", "encode_png"]
warn_moved(__name__, _moved_to.__name__, removed_in="0.2")
