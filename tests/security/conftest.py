"""The security tests push, install and browse through the Hub tests' fixtures (LocalHub,
environments to publish, the 127.0.0.1-only guard), imported from tests/hub/hub_support.py."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "hub"))

from hub_support import *  # noqa: F403 - re-exported so that pytest registers the fixtures
from hub_support import _only_local_requests  # noqa: F401 - autouse guard
