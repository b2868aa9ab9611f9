"""Deprecated: import :mod:`openenv_hub.runtimes.local` instead (same objects).

Layer: runtimes.
"""

from openenv_hub.runtimes import local as _moved_to
from openenv_hub.runtimes.local import *  # noqa: F403 - the deprecated name of that module
from openenv_hub.support.deprecation import warn_moved

__all__ = list(_moved_to.__all__)
warn_moved(__name__, _moved_to.__name__, removed_in="0.2")
