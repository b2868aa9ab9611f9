"""``openenv record``: N episodes to JSON Lines or Parquet, pushed to a LocalHub dataset repo,
read back equal with ``datasets.load_dataset``."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from openenv_hub.trajectories import COLUMNS, read_records

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

ECHO_POLICY = '''
def say(observation):
    """Ask the echo environment to repeat a message that grows by one letter a step."""
    say.calls = getattr(say, "calls", 0) + 1
    return {"type": "call_tool", "tool_name": "echo_message", "arguments": {"message": "ab" * say.calls}}
'''

GUESS_POLICY = """
WORDS = iter(["xx", "slate", "crane"] * 10)

def guess(observation):
    return {"word": next(WORDS)}
"""


@pytest.fixture
def policies(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "echo_policy.py").write_text(ECHO_POLICY)
    (tmp_path / "guess_policy.py").write_text(GUESS_POLICY)
    monkeypatch.chdir(tmp_path)
    yield tmp_path
    for name in ("echo_policy", "guess_policy"):
        sys.modules.pop(name, None)


def test_record_echo_episodes_and_push_them(
    cli: Any, echo_server: Any, policies: Path, local_hub: Any
) -> None:
    import datasets

    result = cli(
        "record", echo_server.url, "--episodes", 3, "--policy", "echo_policy:say",
        "--max-steps", 4, "--output", "echo.jsonl", "--push-to-hub", "alice/echo-episodes",
    )  # fmt: skip
    assert result.code == 0, result.text
    assert "Recorded 3 episodes (12 steps) of echo_env 0.1.0 to echo.jsonl" in result.out
    assert f"Pushed to {local_hub.url('alice/echo-episodes', 'dataset')}" in result.out

    records = read_records(policies / "echo.jsonl")
    assert len(records) == 3 * (1 + 4) and list(records[0]) == COLUMNS
    assert [r["step"] for r in records[:5]] == [0, 1, 2, 3, 4]
    assert {r["env_name"] for r in records} == {"echo_env"}
    assert {r["env_version"] for r in records} == {"0.1.0"}
    assert len({r["episode_id"] for r in records}) == 3
    first_step = records[1]
    assert json.loads(first_step["action"])["arguments"] == {"message": "ab"}
    assert first_step["reward"] == first_step["attributed_reward"] == 0.5 + 0.5 * 2 / 32
    assert json.loads(first_step["reward_breakdown"]) == {
        "tool_succeeded": 1.0,
        "message_length": 2 / 32,
    }
    assert json.loads(first_step["observation"])["result"]["data"] == "ab"
    assert [r["truncated"] for r in records[:5]] == [False, False, False, False, True]
    assert all(r["duration_ms"] >= 0 and r["policy"] == "echo_policy:say" for r in records)

    pushed = datasets.load_dataset("alice/echo-episodes", split="train")
    assert pushed.to_list() == records


def test_record_a_game_to_parquet_with_attributed_rewards(
    cli: Any, serve: Any, policies: Path, local_hub: Any
) -> None:
    import datasets

    sys.path.insert(0, str(EXAMPLES))
    from word_game import app

    server = serve(app)
    result = cli(
        "record", server.url, "-n", 2, "--policy", "guess_policy:guess", "--seed", 2,
        "-o", "games.parquet", "--push-to-hub", "alice/word-games", "--private",
    )  # fmt: skip
    assert result.code == 0, result.text
    # Seed 2 is "crane", found on guess 3 (return 1.2); seed 3 is "mango", never found in six
    # guesses (4 well-formed: 0.4).
    assert "Recorded 2 episodes (9 steps) of word_game 1.0.0" in result.out
    assert "mean return 0.8." in result.out

    records = read_records(policies / "games.parquet")
    first = [r for r in records if r["episode"] == 0]
    assert [r["reward"] for r in first] == pytest.approx([None, 0.0, 0.1, 1.1])
    # the win, credited back by the game's Discounted(0.5) attribution
    assert [r["attributed_reward"] for r in first] == pytest.approx([None, 0.25, 0.6, 1.1])
    assert [r["done"] for r in first] == [False, False, False, True]
    assert json.loads(first[0]["action"]) == {"seed": 2}

    pushed = datasets.load_dataset("alice/word-games", split="train")
    assert pushed.to_list() == records
    from huggingface_hub import HfApi

    assert HfApi().repo_info("alice/word-games", repo_type="dataset").private


@pytest.mark.parametrize(
    ("args", "message", "hint"),
    [
        (["--policy", "nocolon"], "is not 'module:function'", "e.g. --policy my_policies"),
        (["--policy", "missing_mod:f"], "Could not import the policy module", "Run the command"),
        (["--policy", "echo_policy:nope"], "has no function 'nope'", "def nope(observation"),
        (["--output", "x.csv"], "name the file *.jsonl or *.parquet", ""),
    ],
)
def test_mistakes_are_explained(
    cli: Any, echo_server: Any, policies: Path, args: list[str], message: str, hint: str
) -> None:
    base = ["record", echo_server.url, "--episodes", 1, "--policy", "echo_policy:say"]
    result = cli(*base, *args)
    assert result.code == 1
    assert message in result.err and hint in result.err
    assert "Traceback" not in result.err


def test_an_existing_file_or_a_wrong_env_is_refused(
    cli: Any, echo_server: Any, policies: Path
) -> None:
    (policies / "old.jsonl").write_text("keep me\n")
    result = cli(
        "record", echo_server.url, "-n", 1, "--policy", "echo_policy:say", "-o", "old.jsonl"
    )
    assert result.code == 1 and "old.jsonl already exists" in result.err
    assert (policies / "old.jsonl").read_text() == "keep me\n"
    result = cli("record", "no_such_folder", "-n", 1, "--policy", "echo_policy:say")
    assert result.code == 1 and "neither a server URL nor an environment folder" in result.err


def test_record_an_environment_folder(cli: Any, policies: Path) -> None:
    folder = Path(__file__).resolve().parents[2] / "envs" / "echo_env"
    result = cli("record", folder, "-n", 1, "--policy", "echo_policy:say", "--max-steps", 2)
    assert result.code == 0, result.text
    assert "Recorded 1 episode (2 steps) of echo_env 0.1.0 to trajectories.jsonl" in result.out
    assert len(read_records(policies / "trajectories.jsonl")) == 3


def test_push_to_hub_takes_a_token_as_the_hub_commands_do(
    cli: Any, echo_server: Any, policies: Path, local_hub: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("HF_TOKEN")
    token = local_hub.token_for("bob")
    result = cli(
        "record", echo_server.url, "-n", 1, "--policy", "echo_policy:say", "--max-steps", 1,
        "--push-to-hub", "bob/echo-token", "--token", token,
    )  # fmt: skip
    assert result.code == 0, result.text
    assert f"Pushed to {local_hub.url('bob/echo-token', 'dataset')}" in result.out
    assert token not in result.text


WRONG_ARGUMENTS = """
def wrong(observation):
    return {"type": "call_tool", "tool_name": "echo_message", "arguments": {"msg": "hi"}}
"""
FAILING = """
def failing(observation):
    return {"message": observation["no_such_key"]}
"""


def test_the_summary_is_a_table_of_episodes_and_a_plot_beside_the_records(
    cli: Any, echo_server: Any, policies: Path
) -> None:
    result = cli(
        "record", echo_server.url, "-n", 3, "--policy", "echo_policy:say", "--max-steps", 2,
        "-o", "echo.jsonl",
    )  # fmt: skip
    assert result.code == 0, result.text
    rows = [line.split() for line in result.out.splitlines()]
    assert rows[0] == ["episode", "steps", "return", "ended"]
    assert [row[:2] for row in rows[1:4]] == [["0", "2"], ["1", "2"], ["2", "2"]]
    assert all(" ".join(row[3:]) == "truncated (after 2 steps)" for row in rows[1:4])
    returns = [float(row[2]) for row in rows[1:4]]
    assert returns[0] == pytest.approx(0.5 + 0.5 * 2 / 32 + 0.5 + 0.5 * 4 / 32, abs=1e-3)
    plot = policies / "echo.png"
    assert "Plot of the returns: echo.png" in result.out
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    again = cli("record", echo_server.url, "-n", 1, "--policy", "echo_policy:say",
                "-o", "quiet.jsonl", "--no-plot")  # fmt: skip
    assert again.code == 0 and not (policies / "quiet.png").exists()


def test_a_policy_the_environment_refuses_is_warned_about(
    cli: Any, echo_server: Any, policies: Path
) -> None:
    (policies / "wrong_policy.py").write_text(WRONG_ARGUMENTS)
    result = cli("record", echo_server.url, "-n", 2, "--policy", "wrong_policy:wrong",
                 "--max-steps", 2, "--no-plot")  # fmt: skip
    sys.modules.pop("wrong_policy", None)
    assert result.code == 0, result.text
    assert "the environment answered 4 of 4 steps with an error" in result.err
    assert "the policy wrong_policy:wrong may send wrong actions" in result.err
    assert "episode 0 step 1: invalid_args:" in result.err


def test_a_failing_policy_is_named_with_what_it_was_given(
    cli: Any, echo_server: Any, policies: Path
) -> None:
    (policies / "failing_policy.py").write_text(FAILING)
    result = cli("record", echo_server.url, "-n", 1, "--policy", "failing_policy:failing")
    sys.modules.pop("failing_policy", None)
    assert result.code == 1
    assert "Error: The policy failing_policy:failing failed on its call 1: KeyError:" in result.err
    assert "It was given an observation with the keys: metadata" in result.err
    assert "Unexpected error" not in result.err


def test_plot_without_matplotlib_names_the_extra(
    cli: Any, echo_server: Any, policies: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # as if it were not installed
    asked = cli("record", echo_server.url, "-n", 1, "--policy", "echo_policy:say", "--plot")
    assert asked.code == 1 and 'pip install "openenv-hub[plots]"' in asked.err
    assert not (policies / "trajectories.jsonl").exists()  # refused before recording
    default = cli("record", echo_server.url, "-n", 1, "--policy", "echo_policy:say")
    assert default.code == 0 and 'No plot: pip install "openenv-hub[plots]"' in default.out
