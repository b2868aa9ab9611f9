"""Environments from other formats: Harbor task sets and verifiers environments become OpenEnv
environments, and an environment's tasks become Harbor task folders (see docs/importing.md).

- :mod:`~openenv_hub.importers.harbor_tasks`: Harbor task folders, read;
- :mod:`~openenv_hub.importers.harbor_env`: a task set served as an environment, each task in a
  container of its own, graded after the episode by its hidden test;
- :mod:`~openenv_hub.importers.harbor_oracle`: the policy that plays each task's
  ``solution/solve.sh``.

Layer: client.
"""

from openenv_hub.importers.folders import IMPORT_TAGS, FolderPlan, write_folder
from openenv_hub.importers.harbor_env import HarborEnvironment, HarborObservation, task_image
from openenv_hub.importers.harbor_import import HarborImport, harbor_plan, import_harbor
from openenv_hub.importers.harbor_oracle import harbor_oracle, oracle_commands
from openenv_hub.importers.harbor_tasks import HarborTask, read_task, read_task_set

__all__ = [
    "IMPORT_TAGS",
    "FolderPlan",
    "HarborEnvironment",
    "HarborImport",
    "HarborObservation",
    "HarborTask",
    "harbor_oracle",
    "harbor_plan",
    "import_harbor",
    "oracle_commands",
    "read_task",
    "read_task_set",
    "task_image",
    "write_folder",
]
