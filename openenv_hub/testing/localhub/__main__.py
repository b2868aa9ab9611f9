"""``python -m openenv_hub.testing.localhub``: the old name of ``python -m openenv_hub.localhub``."""

from __future__ import annotations

import sys

from openenv_hub.localhub.__main__ import main
from openenv_hub.support.deprecation import deprecation_message

if __name__ == "__main__":
    message = deprecation_message(
        "python -m openenv_hub.testing.localhub",
        "use python -m openenv_hub.localhub",
        removed_in="0.2",
    )
    print(message, file=sys.stderr, flush=True)
    main()
