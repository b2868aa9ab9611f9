"""The catalog Space's tests import its package from spaces/catalog, as the Space's app does, and
drive it with the web UI tests' chromium (tests/ui/conftest.py)."""

from __future__ import annotations

import sys
from pathlib import Path

CATALOG_DIR = Path(__file__).resolve().parents[2] / "spaces" / "catalog"
if str(CATALOG_DIR) not in sys.path:
    sys.path.insert(0, str(CATALOG_DIR))

from catalog_deployment import deployment  # noqa: E402, F401 - a fixture, registered here
from ui.conftest import browser, new_page  # noqa: E402, F401 - fixtures, registered here
