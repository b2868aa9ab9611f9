"""Support for tests that build and run real Docker containers (see engine.py)."""
