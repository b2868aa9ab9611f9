"""The training examples, run as examples/README.md prints them: a real GRPOTrainer takes two
optimisation steps on CPU with a tiny local model, against environments served on 127.0.0.1,
and the rewards the environments computed are the ones in the trainer's logged metrics."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from doc_blocks import REPO, doc_block

from openenv_hub import create_app
from openenv_hub.trajectories import read_records

pytestmark = pytest.mark.slow

README = "examples/README.md"
GENERATIONS = 4  # the scripts' default --num-generations, also their batch size


def echo_app(trajectories: Path) -> Any:
    from echo_env.server.environment import EchoEnvironment

    from openenv_hub import CallToolAction, CallToolObservation

    return create_app(
        EchoEnvironment,
        CallToolAction,
        CallToolObservation,
        env_name="echo_env",
        trajectories=trajectories,
    )


def word_game_app(trajectories: Path) -> Any:
    sys.path.insert(0, str(REPO / "examples"))
    from word_game import Feedback, GameState, Guess, WordGame

    return create_app(
        WordGame, Guess, Feedback, state_cls=GameState, env_name="word_game",
        trajectories=trajectories,
    )  # fmt: skip


CASES = {
    # example: (README's serve block, the module it starts, our app of it, README's train
    # block, the reward column TRL logs)
    "echo": (
        "grpo-echo-serve", "echo_env.server.app", echo_app,
        "grpo-echo-train", "rewards/EchoEnv/mean",
    ),
    "word game": (
        "grpo-word-game-serve", "examples/word_game.py", word_game_app,
        "grpo-word-game-train", "rewards/WordGame/mean",
    ),
}  # fmt: skip


@pytest.mark.parametrize("example", CASES)
def test_example_trains_on_the_environments_rewards(
    example: str, serve: Any, tmp_path: Path
) -> None:
    serve_block, module, make_app, train_block, column = CASES[example]
    served_command = doc_block(README, serve_block).lines[0]
    assert module in served_command and "--port" in served_command
    recorded = tmp_path / "served.jsonl"
    server = serve(make_app(recorded))

    command = doc_block(README, train_block).lines[0]
    port = served_command.split("--port ")[1].split()[0]
    command = command.replace(f"127.0.0.1:{port}", f"127.0.0.1:{server.port}")
    args = shlex.split(command)
    assert args[0] == "python" and args[-2] == "--output-dir"
    args[0], args[-1] = sys.executable, str(tmp_path / args[-1])
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}  # no model or dataset is ever fetched
    done = subprocess.run(args, cwd=REPO, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-4000:]

    history = json.loads((tmp_path / args[-1] / "log_history.json").read_text())
    steps = [entry for entry in history if column in entry]
    assert [entry["step"] for entry in steps] == [1, 2]  # two optimisation steps
    assert any(entry["tools/call_frequency"] > 0 for entry in steps)
    assert "training on the CPU" in done.stdout
    table = done.stdout.split("Rewards logged by step", 1)[1].splitlines()
    header = table[1].split()
    assert header[0] == "step" and column in header
    logged = {int(row.split()[0]): row.split()[header.index(column)] for row in table[2:4]}
    assert logged == {entry["step"]: f"{entry[column]:.4g}" for entry in steps}
    plot = tmp_path / args[-1] / "rewards.png"
    assert f"Plot of the rewards: {plot}" in done.stdout
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    server.stop()

    # What the server recorded is what the trainer logged: each logged mean is over one
    # step's GENERATIONS episodes, and episodes without a tool call earned nothing.
    records = read_records(recorded)
    episode_returns = sum(r["reward"] or 0.0 for r in records if r["step"] > 0)
    logged = sum(entry[column] * GENERATIONS for entry in steps)
    assert logged == pytest.approx(episode_returns, rel=1e-4)
    assert episode_returns > 0
    scored = [json.loads(r["reward_breakdown"]) for r in records if r["step"] > 0]
    assert any(breakdown for breakdown in scored)


@pytest.mark.filterwarnings("ignore:`gradient_checkpointing` is deprecated:FutureWarning")
def test_training_options_fit_a_machine_without_a_gpu(tmp_path: Path) -> None:
    """The options a script picks here (no CUDA) start a trainer; TRL's defaults did not."""
    import torch
    from trl import GRPOConfig

    sys.path.insert(0, str(REPO / "examples"))
    from training_log import GPU_HINT, device_options

    assert not torch.cuda.is_available()  # this test is about a machine without one
    options, where = device_options()
    assert (options, where) == ({"use_cpu": True, "bf16": False}, GPU_HINT)
    config = GRPOConfig(output_dir=str(tmp_path), report_to="none", **options)
    assert str(config.device) == "cpu"
    with pytest.raises(ValueError, match="doesn't support bf16/gpu"):
        GRPOConfig(output_dir=str(tmp_path), report_to="none", use_cpu=False)


def test_without_tiny_a_model_from_a_folder_trains_on_the_cpu(serve: Any, tmp_path: Path) -> None:
    """What examples/README.md says for a real run: drop --tiny (here a saved tiny model stands
    in for a download), and the script trains on what the machine has."""
    sys.path.insert(0, str(REPO / "examples"))
    from grpo_echo import tiny_model

    from openenv_hub.trl import environment_factory, tool_schemas

    server = serve(echo_app(tmp_path / "served.jsonl"))
    model, tokenizer = tiny_model(tool_schemas(environment_factory(server.url)))
    model.save_pretrained(tmp_path / "model")
    tokenizer.save_pretrained(tmp_path / "model")
    args = [
        sys.executable, "examples/grpo_echo.py", "--env-url", server.url,
        "--model", str(tmp_path / "model"), "--max-steps", "1", "--output-dir", str(tmp_path / "out"),
    ]  # fmt: skip
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    done = subprocess.run(args, cwd=REPO, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-4000:]
    assert "no CUDA GPU found, training on the CPU" in done.stdout
    assert (tmp_path / "out" / "log_history.json").is_file()
