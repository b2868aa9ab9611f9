"""``python -m openenv_hub.testing.localhub``: the old name of ``python -m openenv_hub.localhub``."""

from __future__ import annotations

import sys

from openenv_hub.localhub.__main__ import main

if __name__ == "__main__":
    print(
        "python -m openenv_hub.testing.localhub is deprecated: use python -m openenv_hub.localhub",
        file=sys.stderr,
        flush=True,
    )
    main()
