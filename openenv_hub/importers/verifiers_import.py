"""``openenv import verifiers MODULE_OR_PATH``: a verifiers environment as an environment folder.

The environment is found by reading its source (:mod:`~openenv_hub.importers.verifiers_detect`:
nothing of it runs), its source tree (or its one file, for a module of one file) is copied to
``vendor/`` (without credentials, caches or version control), and a server module serves ``load_environment(**arguments)`` with
:class:`~openenv_hub.importers.VerifiersEnvironment`. The code runs only when the folder is
served, which its user starts.

Layer: client.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from openenv_hub.importers.folders import FolderPlan, write_folder
from openenv_hub.importers.verifiers_detect import (
    DetectedEnvironment,
    detect_verifiers,
    locate_source,
)
from openenv_hub.model.manifest import suggest_name

__all__ = ["VERIFIERS_REQUIREMENT", "VerifiersImport", "import_verifiers"]

#: The verifiers releases whose classic API (SingleTurnEnv, MultiTurnEnv, ToolEnv) is served.
VERIFIERS_REQUIREMENT = "verifiers>=0.1.14,<0.4"


@dataclass(frozen=True)
class VerifiersImport:
    """What ``openenv import verifiers`` made: the folder and what was found."""

    path: Path
    detected: DetectedEnvironment


def import_verifiers(
    source: str | Path,
    destination: Path,
    *,
    name: str | None = None,
    module: str | None = None,
    arguments: dict[str, Any] | None = None,
) -> VerifiersImport:
    """Write the environment folder of the verifiers environment at ``source``.

    Raises:
        ConfigurationError: No environment (or several) at ``source``, or ``destination``
            is not empty.
    """
    detected = detect_verifiers(locate_source(str(source)), module=module)
    package = name or suggest_name(Path(destination).name)
    if detected.file.parent == detected.root and "." not in detected.module:
        # a module of one file: that file alone, not every file beside it
        vendored = f"vendor/{detected.module}"
        copies = {f"{vendored}/{detected.file.name}": detected.file}
    else:
        vendored = f"vendor/{detected.root.name}"
        copies = {vendored: detected.root}
    plan = FolderPlan(
        name=package,
        description=f"The verifiers environment {detected.module}, run by verifiers.",
        library="verifiers",
        server_module=_SERVER.format(
            name=package,
            vendored=vendored,
            module=detected.module,
            arguments=json.dumps(arguments or {}, sort_keys=True),
        ),
        readme_body=_README.format(module=detected.module, vendored=vendored),
        copies=copies,
        dependencies=[VERIFIERS_REQUIREMENT],
    )
    return VerifiersImport(write_folder(plan, Path(destination)), detected)


_SERVER = '''"""The server: {module}.load_environment() from {vendored}/, run by verifiers.

Serving it imports that module (its code runs): read it first.
"""

from __future__ import annotations

import json
from pathlib import Path

from openenv_hub import CallToolAction, CallToolObservation, create_app
from openenv_hub.importers import VerifiersEnvironment, VerifiersObservation
from openenv_hub.server import serve_main

SOURCE = Path(__file__).resolve().parents[2] / "{vendored}"
ARGUMENTS = json.loads({arguments!r})
environment = VerifiersEnvironment.configured(SOURCE, module="{module}", arguments=ARGUMENTS)

app = create_app(
    environment,
    CallToolAction,
    CallToolObservation,
    reset_observation_cls=VerifiersObservation,
    env_name="{name}",
)


def main(argv: list[str] | None = None) -> None:
    serve_main("{name}.server.app:app", argv)


if __name__ == "__main__":
    main()
'''

_README = """Imported with `openenv import verifiers`: `{module}.load_environment()` (copied in
`{vendored}/`), run by the `verifiers` package. Each episode is one rollout of a dataset row:
`reset(task_id=EXAMPLE_ID, split="eval")` shows its prompt; the agent calls the environment's
tools and answers with `submit(completion)`; verifiers' rubric scores the rollout, with each
reward function's score in the last observation's `metadata["reward_breakdown"]`.
"""
