"""The coding environment's server: ``uvicorn coding_env.server.app:app`` or ``coding-env-server``.

Settings come from ``CODING_ENV_*`` variables (see ``coding_env.server.settings``); the task
set from ``CODING_ENV_TASKS``. Importing this module checks, once, that a sandbox can be made
here, and raises :class:`~coding_env.server.mechanism.SandboxUnavailableError` if not.
"""

from __future__ import annotations

import os
from pathlib import Path

from fastapi import FastAPI

from coding_env.models import CodeAction, CodeObservation, CodingState
from coding_env.server.environment import CodingEnvironment
from coding_env.server.rewards import RewardFn, all_passed
from coding_env.server.settings import SandboxSettings
from coding_env.server.tasks import TaskSet, load_tasks
from openenv_hub import create_app
from openenv_hub.server import serve_main

_README = Path(__file__).resolve().parents[2] / "README.md"


def build_app(
    settings: SandboxSettings | None = None,
    *,
    tasks: TaskSet | None = None,
    reward_fn: RewardFn = all_passed,
    web: bool | None = None,
    max_concurrent_envs: int | None = None,
) -> FastAPI:
    """The app, with its settings, tasks and reward function (defaults from the environment)."""
    environment = CodingEnvironment.configured(
        settings,
        tasks=tasks or load_tasks(os.environ.get("CODING_ENV_TASKS", "humaneval")),
        reward_fn=reward_fn,
    )
    return create_app(
        environment,
        CodeAction,
        CodeObservation,
        state_cls=CodingState,
        env_name="coding_env",
        web=web,
        max_concurrent_envs=max_concurrent_envs,
        readme=_README.read_text(encoding="utf-8") if _README.is_file() else None,
    )


app = build_app()


def main(argv: list[str] | None = None) -> None:
    """``coding-env-server``: serve this app (``--help`` for the options of :func:`serve_main`)."""
    serve_main("coding_env.server.app:app", argv)


if __name__ == "__main__":
    main()
