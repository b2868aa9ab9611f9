"""Deprecated: import :mod:`openenv_hub.gym_spaces` instead (same objects).

The module is about Gymnasium spaces, not Hugging Face Spaces; its new name says so.

Layer: model.
"""

import openenv_hub.gym_spaces as _moved_to
from openenv_hub.deprecation import warn_moved
from openenv_hub.gym_spaces import *  # noqa: F403 - the deprecated name of that module

__all__ = list(_moved_to.__all__)
warn_moved(__name__, _moved_to.__name__, removed_in="0.2")
