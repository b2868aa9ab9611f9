"""Fixtures of these tests; they live in hub_support.py, which the test modules import from."""

from hub_support import *  # noqa: F403 - re-exported so that pytest registers the fixtures
from hub_support import _only_local_requests  # noqa: F401 - autouse guard
