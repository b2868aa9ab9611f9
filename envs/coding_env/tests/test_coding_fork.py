"""Forking a recorded coding episode: the environment keeps no snapshots (an interpreter's
process cannot be copied), so ``fork`` replays the recorded cells in a fresh sandbox, checking
every observation but the step's duration, and the session's names are those of the recording
at that step."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from coding_env import CodeAction, CodingEnv
from coding_env.models import CodeObservation, CodingState
from coding_env.server.environment import CodingEnvironment
from coding_env.server.settings import SandboxSettings
from coding_support import LIMITS, serve

from openenv_hub import create_app
from openenv_hub.trajectories import read_records

CELLS = ["x = 20", "x += 1\nx", "print(x * 2)"]


def recorded_without_duration(record: dict[str, Any]) -> dict[str, Any]:
    observation = json.loads(record["observation"])
    observation.pop("duration_s")
    return observation | {"reward": record["reward"], "done": record["done"]}


def test_a_coding_episode_forks_by_replay_and_plays_on_as_recorded(tmp_path: Path) -> None:
    environment = CodingEnvironment.configured(SandboxSettings(**LIMITS))  # type: ignore[arg-type]
    path = tmp_path / "cells.jsonl"
    recording = create_app(
        environment, CodeAction, CodeObservation, state_cls=CodingState, trajectories=path
    )
    with serve(recording) as base_url, CodingEnv(base_url=base_url).sync() as env:
        env.reset()
        for cell in CELLS:
            env.step(CodeAction(code=cell))
    episode = read_records(path)
    assert [r["snapshot"] for r in episode] == [None] * 4  # nothing to restore: it replays
    assert len({r["state_digest"] for r in episode}) == 4  # each cell changes the state
    assert json.loads(episode[3]["observation"])["stdout"] == "42\n"
    fresh = create_app(environment, CodeAction, CodeObservation, state_cls=CodingState)
    with (
        serve(fresh) as base_url,
        CodingEnv(base_url=base_url, message_timeout_s=120).sync() as env,
    ):
        forked = env.fork(episode, 2)
        assert forked.observation.result == "21"
        assert (forked.method, forked.digests_checked) == ("replay", 3)  # cells run as recorded
        dumped = forked.observation.model_dump(mode="json", exclude={"duration_s"})
        assert dumped == recorded_without_duration(episode[2])
        result = env.step(CodeAction(code=json.loads(episode[3]["action"])["code"]))
        dumped = result.observation.model_dump(mode="json", exclude={"duration_s"})
        assert dumped == recorded_without_duration(episode[3])
