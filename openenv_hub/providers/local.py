"""Deprecated: import :mod:`openenv_hub.runtimes.local` instead (same objects).

Layer: runtimes.
"""

from openenv_hub.providers._moved import moved
from openenv_hub.runtimes import local as _moved_to
from openenv_hub.runtimes.local import *  # noqa: F403 - the deprecated name of that module

__all__ = list(_moved_to.__all__)
moved(__name__)
