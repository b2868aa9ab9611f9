"""``openenv import harbor``: a Harbor task set (a folder, or ``hf://datasets/NS/NAME``) as an
environment folder that serves it.

The folder is the shape ``openenv init`` makes, with the task folders copied to ``tasks/``, a
server module that serves them (:class:`~openenv_hub.importers.HarborEnvironment`), and the
oracle (``NAME/oracle.py``, named by the manifest's ``quality.oracle.policy``). Nothing of the tasks runs
while importing; building their images (``build=True``) runs their Dockerfiles, so it asks
for consent first, as installing code from the Hub does.

Layer: client.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from openenv_hub.errors import ConfigurationError
from openenv_hub.importers.folders import FolderPlan, write_folder
from openenv_hub.importers.harbor_env import task_image
from openenv_hub.importers.harbor_tasks import HarborTask, read_task_set
from openenv_hub.model.manifest import suggest_name

__all__ = ["HarborImport", "harbor_plan", "import_harbor"]


@dataclass(frozen=True)
class HarborImport:
    """What ``openenv import harbor`` made: the folder, its tasks, and the images it built."""

    path: Path
    tasks: list[HarborTask]
    images: list[str]


def import_harbor(
    source: str | Path,
    destination: Path,
    *,
    name: str | None = None,
    build: bool = False,
    trust_remote_code: bool = False,
) -> HarborImport:
    """Write the environment folder of the Harbor tasks at ``source`` to ``destination``.

    Args:
        source: A task folder, a folder of them, or ``hf://datasets/NS/NAME[@REVISION]``.
        destination: The new environment folder.
        name: Its package name (default: from ``destination``'s name).
        build: Build each task's image now (its Dockerfile runs: consent is asked).
        trust_remote_code: The consent, given beforehand.

    Raises:
        ConfigurationError: No task at ``source``, a task cannot be read, or ``destination``
            is not empty.
        RemoteCodeNotTrustedError: ``build`` without consent.
    """
    folder = _local(source)
    tasks = read_task_set(folder)
    package = name or suggest_name(Path(destination).name)
    made = write_folder(harbor_plan(tasks, package, str(source)), Path(destination))
    images: list[str] = []
    if build:
        from openenv_hub.hub import ensure_trusted

        ensure_trusted(
            str(source),
            f"Build the images of {len(tasks)} Harbor tasks",
            yes=trust_remote_code,
            kind="task set",
        )
        images = [task_image(task) for task in read_task_set(made / "tasks")]
    return HarborImport(made, tasks, images)


def harbor_plan(tasks: list[HarborTask], name: str, source: str) -> FolderPlan:
    """The folder of ``tasks`` as an environment named ``name``."""
    names = sorted({task.name for task in tasks})
    if len(names) != len(tasks):
        raise ConfigurationError(f"Two Harbor tasks of {source} have the same folder name.")
    listed = "\n".join(f"- `{task.name}`" for task in tasks[:50])
    more = f"\n- ... and {len(tasks) - 50} more" if len(tasks) > 50 else ""
    return FolderPlan(
        name=name,
        description=f"{len(tasks)} Harbor tasks from {source}, each in a container of its own.",
        library="harbor",
        server_module=_SERVER.format(name=name),
        readme_body=_README.format(name=name, listed=listed + more),
        copies={f"tasks/{task.name}": task.path for task in tasks},
        extra_files={f"{name}/oracle.py": _ORACLE},
        manifest_fields={"quality": {"oracle": {"policy": f"{name}.oracle:solve"}}},
        dependencies=[],
    )


def _local(source: str | Path) -> Path:
    """The folder of ``source``: as given, or the dataset's files downloaded (no code runs)."""
    text = str(source)
    if text.startswith("hf://datasets/"):
        from openenv_hub.hub import download_dataset, parse_dataset_ref

        return download_dataset(parse_dataset_ref(text)).path
    if "://" in text:
        raise ConfigurationError(
            f"{text!r} is neither a folder nor a dataset.",
            hint="Pass a folder of Harbor tasks, or hf://datasets/NS/NAME.",
        )
    return Path(source)


_SERVER = '''"""The server: the Harbor tasks in tasks/, each episode one task in a container of its own.

Serve it with ``openenv serve`` (it needs a Docker engine: DOCKER_HOST, or the default socket).
"""

from __future__ import annotations

from pathlib import Path

from openenv_hub import CallToolAction, CallToolObservation, create_app
from openenv_hub.importers import HarborEnvironment, HarborObservation
from openenv_hub.server import serve_main

TASKS = Path(__file__).resolve().parents[2] / "tasks"
environment = HarborEnvironment.configured(TASKS)

app = create_app(
    environment,
    CallToolAction,
    CallToolObservation,
    reset_observation_cls=HarborObservation,
    env_name="{name}",
    step_hard_timeout_s=environment.longest_step_s(),
)


def main(argv: list[str] | None = None) -> None:
    serve_main("{name}.server.app:app", argv)


if __name__ == "__main__":
    main()
'''

_ORACLE = '''"""The oracle: each task's solution/solve.sh, played through the environment's tools."""

from pathlib import Path

from openenv_hub.importers import harbor_oracle

solve = harbor_oracle(Path(__file__).resolve().parents[1] / "tasks")
'''

_README = """Imported from Harbor's task format with `openenv import harbor`. Each episode is one task:
`reset(task_id=NAME)` starts the task's container (built from its `environment/Dockerfile`, with
no network unless its `task.toml` allows it), the agent runs commands with the `bash` tool and
ends with `submit`, and the task's hidden test grades the result (reward 0 to 1).

Serving it needs a Docker engine (`DOCKER_HOST`, or the default socket), so it runs on a machine
of your own rather than in a Space: `openenv serve`, then `openenv eval http://127.0.0.1:8000
--policy ...`. The oracle (each task's `solution/solve.sh`) is `{name}.oracle:solve`.

Tasks:

{listed}
"""
