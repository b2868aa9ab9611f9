"""The Atari environment over /ws through its typed client: seeds, whole episodes, settings."""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
import uvicorn
from atari_env import AtariAction, AtariEnv
from atari_env.server.app import app
from atari_env.server.environment import AtariEnvironment

from openenv_hub.errors import ActionValidationError, EnvironmentExecutionError


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    """The app served by a real uvicorn on a free port, in a thread."""
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        assert time.monotonic() < deadline, "the server did not start"
        time.sleep(0.02)
    port = server.servers[0].sockets[0].getsockname()[1]
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(10)


def trajectory(base_url: str, seed: int, steps: int) -> list[tuple[str, float, int]]:
    """Frames (hashed), rewards and lives of ``steps`` random steps after ``reset(seed)``."""
    rng = np.random.default_rng(seed)
    out = []
    with AtariEnv(base_url=base_url).sync() as env:
        first = env.reset(seed=seed, game="breakout", repeat_action_probability=0.25)
        count = len(first.observation.action_meanings)
        for _ in range(steps):
            result = env.step(AtariAction(action=int(rng.integers(count))))
            digest = hashlib.sha256(result.observation.frame.tobytes()).hexdigest()[:16]
            out.append((digest, result.reward, result.observation.lives))
    return out


def test_the_same_seed_replays_the_same_trajectory(base_url: str) -> None:
    first = trajectory(base_url, seed=5, steps=60)
    assert trajectory(base_url, seed=5, steps=60) == first
    assert trajectory(base_url, seed=6, steps=60) != first
    assert len({digest for digest, _, _ in first}) > 10  # the screen moves


def test_an_episode_of_random_actions_plays_to_the_end(base_url: str) -> None:
    rng = np.random.default_rng(0)
    with AtariEnv(base_url=base_url).sync() as env:
        result = env.reset(seed=0, game="breakout")
        assert result.observation.action_meanings == ["NOOP", "FIRE", "RIGHT", "LEFT"]
        assert result.observation.frame.shape == (210, 160, 3) and result.observation.lives == 5
        rewards, steps = 0.0, 0
        while not result.done:
            result = env.step(AtariAction(action=int(rng.integers(4))))
            rewards += result.reward or 0.0
            steps += 1
            assert steps < 5000, "a random Breakout game should end well before this"
        state = env.state()
    assert result.observation.terminated and not result.observation.truncated
    assert result.observation.lives == 0 and state.game_over
    assert state.episode_return == rewards and state.step_count == steps
    assert result.observation.episode_frame_number >= steps  # frameskip 4, fewer at the end


def test_settings_are_chosen_at_reset(base_url: str) -> None:
    with AtariEnv(base_url=base_url).sync() as env:
        gray = env.reset(game="pong", obs_type="grayscale", full_action_space=True)
        assert gray.observation.frame.shape == (210, 160)
        assert len(gray.observation.action_meanings) == 18
        assert env.step(AtariAction(action=17)).observation.frame.ndim == 2
        ram = env.reset(obs_type="ram", full_action_space=False, frameskip=2)
        assert ram.observation.frame is None and len(ram.observation.ram) == 128
        assert env.state().game == "pong" and env.state().frameskip == 2  # kept from before
        short = env.reset(game="breakout", obs_type="rgb", max_episode_frames=12, frameskip=4)
        assert short.observation.lives == 5
        results = [env.step(AtariAction(action=0)) for _ in range(3)]
        assert [r.done for r in results] == [False, False, True]
        assert results[-1].observation.truncated and not results[-1].observation.terminated


def test_mistakes_are_explained(base_url: str) -> None:
    with AtariEnv(base_url=base_url).sync() as env:
        with pytest.raises(EnvironmentExecutionError, match="did you mean breakout"):
            env.reset(game="breakot")
        env.reset(game="breakout")
        with pytest.raises(ActionValidationError, match="0 NOOP, 1 FIRE, 2 RIGHT, 3 LEFT"):
            env.step(AtariAction(action=7))
        with pytest.raises(EnvironmentExecutionError, match="no mode 3"):
            env.reset(mode=3)


def test_stepped_in_process_like_over_the_wire() -> None:
    env = AtariEnvironment(game="breakout")
    first = env.reset(seed=2)
    again = AtariEnvironment().reset(seed=2)
    assert np.array_equal(first.frame, again.frame)
    assert env.step(AtariAction(action=1)).frame.dtype == np.uint8


def test_the_readme_example_runs(base_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    readme = (Path(__file__).parents[1] / "README.md").read_text(encoding="utf-8")
    code = readme.split("```python\n", 1)[1].split("```", 1)[0]
    exec(compile(code.replace("http://127.0.0.1:8000", base_url), "README.md", "exec"), {})
    printed = capsys.readouterr().out.splitlines()
    assert printed[0] == "['NOOP', 'FIRE', 'RIGHT', 'LEFT']"
    assert printed[1].startswith("(210, 160, 3) ")
