"""Fixtures of these tests; they live in peer_support.py, which the test modules import from."""

from peer_support import *  # noqa: F403 - re-exported so that pytest registers the fixtures
