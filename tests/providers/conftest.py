"""Fixtures of the provider tests: helpers live in provider_support.py, imported from there."""

from provider_support import *  # noqa: F403 - re-exported so that pytest registers the fixtures
