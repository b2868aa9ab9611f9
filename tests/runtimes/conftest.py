"""Fixtures of the provider tests: helpers live in runtime_support.py, imported from there."""

from runtime_support import *  # noqa: F403 - re-exported so that pytest registers the fixtures
