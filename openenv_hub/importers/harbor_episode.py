"""One episode of an OpenEnv environment played from a shell, as a Harbor task that ``openenv
export harbor`` wrote plays it: inside the task's container, where the environment's folder is
the image's working directory.

The task (its ``reset`` arguments and prompt) comes from ``$OPENENV_TASK`` (JSON), which the
task's ``task.toml`` sets for the agent and the test. The episode is the list of actions taken so
far, kept in ``$OPENENV_EPISODE`` (default ``/tmp/openenv-episode.json``); each command starts
the environment's server, resets it with the task's arguments and replays those actions, so an
environment whose episodes are reproducible from their reset arguments plays the same every
time, and the test grades by replaying them on a fresh server, not by reading a reward the
agent could have written::

    python -m openenv_hub.importers.harbor_episode show             # the first observation, the tools
    python -m openenv_hub.importers.harbor_episode act TOOL '{"word": "crane"}'
    python -m openenv_hub.importers.harbor_episode grade            # the return, for reward.txt
    python -m openenv_hub.importers.harbor_episode oracle           # plays the manifest's oracle

Layer: client.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from openenv_hub.client import GenericEnvClient, SyncEnvClient
from openenv_hub.errors import ConfigurationError, OpenEnvError
from openenv_hub.eval import (
    EvalPlan,
    ResultsFolder,
    Task,
    Toolset,
    load_function_policy,
    render_observation,
    run_eval,
)
from openenv_hub.model.manifest import load_manifest
from openenv_hub.support.settings import named_variable

__all__ = ["Episode", "main"]

DEFAULT_EPISODE = "/tmp/openenv-episode.json"


class Episode:
    """The episode of the task ``$OPENENV_TASK`` of the environment folder ``app_dir``."""

    def __init__(self, app_dir: Path, task: Task, log: Path) -> None:
        self.app_dir, self.task, self.log = app_dir, task, log

    @classmethod
    def from_environment(cls) -> Episode:
        raw = named_variable("OPENENV_TASK")
        if not raw:
            raise ConfigurationError("OPENENV_TASK is not set: this runs inside an exported task.")
        row = json.loads(raw)
        task = Task(row["key"], row.get("split", "test"), row.get("prompt", ""), row["reset"])
        app_dir = Path(named_variable("OPENENV_APP_DIR") or Path.cwd())
        return cls(app_dir, task, Path(named_variable("OPENENV_EPISODE") or DEFAULT_EPISODE))

    def actions(self) -> list[dict[str, Any]]:
        if not self.log.is_file():
            return []
        taken: list[dict[str, Any]] = json.loads(self.log.read_text(encoding="utf-8"))["actions"]
        return taken

    def show(self) -> str:
        """The task's prompt, its first observation, and the tools that act."""
        with self._served() as client:
            first = client.reset(**self.task.reset).observation
            tools = asyncio.run(Toolset.of(str(client.base_url))).tools
        shown = render_observation(dict(first))
        names = json.dumps(tools, indent=1)
        return f"{self.task.prompt}\n\n{shown}\n\nTools (act with one of them):\n{names}".lstrip()

    def act(self, tool: str, arguments: dict[str, Any]) -> str:
        """Take one more action: the tool ``tool`` called with ``arguments``."""
        taken = self.actions()
        with self._served() as client:
            toolset = asyncio.run(Toolset.of(str(client.base_url)))
            action = toolset.action(tool, arguments)
            _, done = _replay(client, self.task, taken)
            if done:
                return "The episode has ended: no more actions are taken."
            result = client.step(action)
        self._save([*taken, action])
        shown = render_observation(dict(result.observation))
        return f"{shown}\n[reward {result.reward or 0.0:g}, done {bool(result.done)}]"

    def grade(self) -> float:
        """The episode's return: its actions replayed on a fresh server, rewards summed."""
        with self._served() as client:
            total, _ = _replay(client, self.task, self.actions())
        return total

    def play_oracle(self) -> float:
        """Play the manifest's ``oracle`` policy for the task, keep its actions; its return."""
        oracle = load_manifest(self.app_dir).oracle_policy
        if oracle is None:
            raise ConfigurationError(
                f"{self.app_dir}/openenv.yaml names no oracle (quality: oracle: policy:)."
            )
        os.chdir(self.app_dir)
        policy = load_function_policy(oracle)
        with self._served() as client, tempfile.TemporaryDirectory() as tmp:
            results = ResultsFolder(Path(tmp) / "oracle")
            results.start({"oracle": oracle}, resume=False, tasks=[self.task])
            try:
                plan = EvalPlan([self.task], 1, 1, 64, 1.0, 0)
                asyncio.run(run_eval(str(client.base_url), plan, policy, results))
                (row,) = results.rows()
            finally:
                results.unlock()
        steps = json.loads(row["steps"])
        self._save([step["action"] for step in steps])
        return float(row["return"])

    def _served(self) -> SyncEnvClient[Any, Any, Any]:
        return GenericEnvClient.from_folder(self.app_dir).sync()

    def _save(self, actions: list[dict[str, Any]]) -> None:
        self.log.parent.mkdir(parents=True, exist_ok=True)
        self.log.write_text(json.dumps({"actions": actions}), encoding="utf-8")


def _replay(
    client: SyncEnvClient[Any, Any, Any], task: Task, actions: list[dict[str, Any]]
) -> tuple[float, bool]:
    """Reset with the task's arguments and take ``actions``: the rewards' sum, and whether the
    episode ended (actions after its end are not taken)."""
    client.reset(**task.reset)
    total, done = 0.0, False
    for action in actions:
        if done:
            break
        result = client.step(action)
        total += float(result.reward or 0.0)
        done = bool(result.done)
    return total, done


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    usage = "usage: harbor_episode show | act TOOL [ARGUMENTS_JSON] | grade | oracle"
    try:
        episode = Episode.from_environment()
        if args[:1] == ["show"]:
            print(episode.show())
        elif args[:1] == ["act"] and len(args) in (2, 3):
            arguments = json.loads(args[2]) if len(args) == 3 else {}
            print(episode.act(args[1], arguments if isinstance(arguments, dict) else {}))
        elif args == ["grade"]:
            print(f"{episode.grade():g}")
        elif args == ["oracle"]:
            print(f"oracle return {episode.play_oracle():g}")
        else:
            print(usage, file=sys.stderr)
            return 2
    except (OpenEnvError, ValueError) as exc:
        print(f"Error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
