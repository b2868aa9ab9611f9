"""Environments from other formats: Harbor task sets and verifiers environments become OpenEnv
environments, and an environment's tasks become Harbor task folders (see docs/importing.md).

- :mod:`~openenv_hub.importers.harbor_tasks`: Harbor task folders, read;
- :mod:`~openenv_hub.importers.harbor_env`: a task set served as an environment, each task in a
  container of its own, graded after the episode by its hidden test;
- :mod:`~openenv_hub.importers.harbor_oracle`: the policy that plays each task's
  ``solution/solve.sh``;
- :mod:`~openenv_hub.importers.harbor_export`: an environment's tasks written as Harbor task
  folders, played in them by :mod:`~openenv_hub.importers.harbor_episode`;
- :mod:`~openenv_hub.importers.verifiers_detect`, :mod:`~openenv_hub.importers.verifiers_env`:
  a verifiers environment found by reading its source, and served by running verifiers' own
  rollout loop with the agent's turns.

Layer: client.
"""

from openenv_hub.importers.folders import IMPORT_TAGS, FolderPlan, write_folder
from openenv_hub.importers.harbor_env import HarborEnvironment, HarborObservation, task_image
from openenv_hub.importers.harbor_export import HarborExport, export_harbor
from openenv_hub.importers.harbor_import import HarborImport, harbor_plan, import_harbor
from openenv_hub.importers.harbor_oracle import harbor_oracle, oracle_commands
from openenv_hub.importers.harbor_tasks import HarborTask, read_task, read_task_set
from openenv_hub.importers.verifiers_detect import (
    DetectedEnvironment,
    detect_verifiers,
    locate_source,
)
from openenv_hub.importers.verifiers_env import (
    VerifiersEnvironment,
    VerifiersObservation,
    load_verifiers_environment,
)
from openenv_hub.importers.verifiers_import import (
    VERIFIERS_REQUIREMENT,
    VerifiersImport,
    import_verifiers,
)

__all__ = [
    "IMPORT_TAGS",
    "VERIFIERS_REQUIREMENT",
    "DetectedEnvironment",
    "FolderPlan",
    "HarborEnvironment",
    "HarborExport",
    "HarborImport",
    "HarborObservation",
    "HarborTask",
    "VerifiersEnvironment",
    "VerifiersImport",
    "VerifiersObservation",
    "detect_verifiers",
    "export_harbor",
    "harbor_oracle",
    "harbor_plan",
    "import_harbor",
    "import_verifiers",
    "load_verifiers_environment",
    "locate_source",
    "oracle_commands",
    "read_task",
    "read_task_set",
    "task_image",
    "write_folder",
]
