"""A model server that fails on a schedule (tests/fault_model.py: 500s, 429 bursts with
Retry-After, a stall, ``choices: []``, a body that is not JSON, a kill and restart) and a word
game server killed and restarted mid-run: each run ends with the pass@k of a clean run with the
same seeds, or exits non-zero naming the errors, and never reports pass@k computed over them."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from eval_support import read_rows
from restartable import child_server, fault_command, game_command

__all__ = ["child_server"]  # fixtures

#: Six turns at most: the scripted model guesses a word a turn, as the guesser policy does.
RUN = ("--model", "scripted", "--tasks", "tasks", "-k", 2, "-c", 2, "--max-turns", 6)


def evaluate(cli: Any, env_url: str, model_url: str, output: str, *more: object) -> Any:
    return cli(
        "eval", env_url, *RUN, "--base-url", f"{model_url}/v1", "--request-timeout", 3,
        "-o", output, *more,
    )  # fmt: skip


def outcome(folder: Path) -> tuple[dict[str, float], list[tuple[str, int, bool, float]]]:
    """pass@k of the summary, and each rollout's (task, sample, passed, return), of the last
    row of each (a rollout played again on a resume is appended)."""
    from openenv_hub.eval import ResultsFolder

    summary = json.loads((folder / "summary.json").read_text())
    latest = ResultsFolder(folder).rows()
    rows = sorted((r["task_key"], r["sample"], r["passed"], r["return"]) for r in latest)
    return summary["pass_at_k"], rows


@pytest.fixture
def clean(cli: Any, workdir: Path, child_server: Any) -> tuple[Any, Any]:
    """The word game in a process of its own, and the outcome of a run with no fault."""
    game = child_server(game_command, "/health")
    model = child_server(fault_command(), "/requests")
    result = evaluate(cli, game.url, model.url, "clean")
    assert result.code == 0, result.text
    passes, rows = outcome(workdir / "clean")
    assert 0 < passes["1"] < 1 and len(rows) == 6  # a run where passes and failures both count
    return game, (passes, rows)


FAULTS = {
    "500 burst": '{"3": "500", "4": "500", "5": "500"}',
    "429 burst": '{"3": "429", "4": "429", "5": "429", "6": "429"}',
    "stall": '{"4": "stall"}',
    "no choices": '{"3": "empty", "6": "empty"}',
    "not JSON": '{"3": "not_json", "5": "not_json"}',
}


@pytest.mark.parametrize("faults", list(FAULTS.values()), ids=list(FAULTS))
def test_model_faults_are_retried_to_the_clean_result(
    cli: Any, workdir: Path, child_server: Any, clean: Any, faults: str
) -> None:
    game, expected = clean
    model = child_server(fault_command(faults), "/requests")
    result = evaluate(cli, game.url, model.url, "faulty")
    assert result.code == 0, result.text
    assert outcome(workdir / "faulty") == expected
    rows = read_rows(workdir / "faulty")
    assert sum(r["retries"] for r in rows) >= 1  # each fault cost a retry, recorded
    assert {r["finish"] for r in rows} <= {"done", "max_turns"}


def test_a_rate_limit_waits_what_retry_after_asks(
    cli: Any, workdir: Path, child_server: Any
) -> None:
    from openenv_hub.eval import Backoff, ChatPolicy

    model = child_server(fault_command('{"1": "429", "2": "429"}'), "/requests")
    policy = ChatPolicy(f"{model.url}/v1", "scripted", backoff=Backoff(base_s=0.01))
    import asyncio

    async def ask() -> Any:
        try:
            return await policy([{"role": "user", "content": "hi"}], [], 1)
        finally:
            await policy.aclose()

    started = time.monotonic()
    completion = asyncio.run(ask())
    assert time.monotonic() - started >= 2.0  # Retry-After: 1, twice (not the 0.01 s back-off)
    assert completion.retries == 2 and completion.message["content"] == "OK"


def test_a_killed_model_server_restarted_gives_the_clean_result(
    cli: Any, workdir: Path, child_server: Any, clean: Any
) -> None:
    game, expected = clean
    model = child_server(fault_command('{"6": "exit"}'), "/requests")
    watcher = model.restart_when_dead(fault_command(), after_s=1.0)
    result = evaluate(cli, game.url, model.url, "killed")
    watcher.join(timeout=5)
    assert model.starts == 2, "the server was not killed and restarted"
    assert result.code == 0, result.text
    assert outcome(workdir / "killed") == expected


def test_an_environment_killed_and_restarted_gives_the_clean_result(
    cli: Any, workdir: Path, child_server: Any, clean: Any
) -> None:
    game, expected = clean
    model = child_server(fault_command('{"4": "hold"}'), "/requests")

    def kill_then_restart() -> (
        None
    ):  # while the 4th model request is held: a rollout is mid-episode
        deadline = time.monotonic() + 60
        while httpx.get(f"{model.url}/requests", timeout=10).json()["chat"] < 4:
            if time.monotonic() > deadline:
                return
            time.sleep(0.02)
        game.kill()
        time.sleep(3)
        game.start()

    chaos = threading.Thread(target=kill_then_restart, daemon=True)
    chaos.start()
    result = evaluate(cli, game.url, model.url, "env-killed", "--max-retries", 5)
    chaos.join(timeout=30)
    assert game.starts == 2, "the environment was not killed and restarted"
    assert result.code == 0, result.text
    assert outcome(workdir / "env-killed") == expected
    rows = read_rows(workdir / "env-killed")
    assert sum(r["retries"] for r in rows) >= 1  # rollouts replayed on a fresh session


def test_a_model_that_keeps_failing_exits_non_zero_naming_the_errors(
    cli: Any, workdir: Path, child_server: Any
) -> None:
    game = child_server(game_command, "/health")
    model = child_server(fault_command("{}", "--from", "16", "500"), "/requests")
    result = evaluate(cli, game.url, model.url, "broken", "--max-retries", 1)
    assert result.code == 1, result.text
    assert "rollouts ended in an error, not a result (server_error" in result.err
    assert "--resume" in result.err
    rows = read_rows(workdir / "broken")
    failed = [r for r in rows if r["finish"] == "error"]
    assert failed and len(rows) == 6
    for row in failed:
        assert row["error_kind"] == "server_error" and row["passed"] is None
        assert f"{model.url}/v1/chat/completions answered 500" in row["error"]
        assert "internal failure" in row["error"]  # the first bytes of the body
        assert f"task test/{row['task_key']}, sample {row['sample']}, turn " in row["error"]
        assert "(after 1 retries)" in row["error"]
    summary = json.loads((workdir / "broken" / "summary.json").read_text())
    scored = [r for r in rows if r["finish"] != "error"]
    assert summary["errors"] == len(failed) and summary["rollouts"] == len(scored)
    assert summary["errors_by_kind"] == {"server_error": len(failed)}
    assert not summary["complete"] and summary["incomplete_tasks"]
    mean = sum(r["return"] for r in scored) / len(scored)
    assert summary["return"]["mean"] == pytest.approx(mean)  # the errors count nowhere
    assert "rollouts that ended in an error are not counted" in result.out


def test_a_wrong_base_url_stops_before_the_first_rollout(
    cli: Any, workdir: Path, child_server: Any
) -> None:
    game = child_server(game_command, "/health")
    model = child_server(fault_command(), "/requests")
    result = cli(
        "eval", game.url, *RUN, "--base-url", model.url, "-o", "no-v1",
    )  # fmt: skip
    assert result.code == 1
    assert f"{model.url}/chat/completions answered 404" in result.err
    assert "ending in /v1" in result.err and "Traceback" not in result.err
    assert not (workdir / "no-v1" / "rollouts.jsonl").exists()

    refused = cli("eval", game.url, *RUN, "--base-url", "http://127.0.0.1:9/v1", "-o", "none")
    assert refused.code == 1
    assert "http://127.0.0.1:9/v1/chat/completions could not be reached" in refused.err

    game.kill()
    gone = cli("eval", game.url, *RUN, "--base-url", f"{model.url}/v1", "-o", "gone")
    assert gone.code == 1
    assert game.url in gone.err and "Traceback" not in gone.err


def test_resume_after_errors_plays_exactly_the_errored_and_missing_pairs(
    cli: Any, workdir: Path, child_server: Any, clean: Any
) -> None:
    game, expected = clean
    broken = child_server(fault_command("{}", "--from", "16", "500"), "/requests")
    first = evaluate(cli, game.url, broken.url, "run", "--max-retries", 0)
    assert first.code == 1
    rows = read_rows(workdir / "run")
    errored = {(r["task_key"], r["sample"]) for r in rows if r["finish"] == "error"}
    good = [r for r in rows if r["finish"] != "error"]
    assert errored and good
    lines = (workdir / "run" / "rollouts.jsonl").read_text().splitlines()
    dropped = (good[-1]["task_key"], good[-1]["sample"])  # a missing pair too
    kept = [line for line in lines if _pair(json.loads(line)) != dropped]
    (workdir / "run" / "rollouts.jsonl").write_text("\n".join(kept) + "\n")

    broken.kill()  # the model server, mended, on the same URL
    broken.command = fault_command()
    healed = broken.start()
    kept_errors = evaluate(cli, game.url, healed.url, "run", "--resume", "--keep-errors")
    assert kept_errors.code == 1  # the errors kept still fail the run
    assert "Played 1 rollouts" in kept_errors.out
    assert "eval: 6 of 6 rollouts" in kept_errors.out  # the whole run's count, not 1 of 1
    resumed = evaluate(cli, game.url, healed.url, "run", "--resume")
    assert resumed.code == 0, resumed.text
    assert f"Played {len(errored)} rollouts; 6 of 6" in resumed.out
    lines = (workdir / "run" / "rollouts.jsonl").read_text().splitlines()
    played = [json.loads(line) for line in lines]
    assert (played[len(kept)]["task_key"], played[len(kept)]["sample"]) == dropped
    replayed = played[len(kept) + 1 :]
    assert sorted((r["task_key"], r["sample"]) for r in replayed) == sorted(errored)
    assert outcome(workdir / "run") == expected


def _pair(row: dict[str, Any]) -> tuple[str, int]:
    return (row["task_key"], row["sample"])


WORDED = {
    "500": ("server_error", 'answered 500: \'{"error":{"message":"internal failure"}}\''),
    "429": ("rate_limit", 'answered 429: \'{"error":{"message":"rate limited"}}\''),
    "stall": ("timeout", "did not answer within 1 s"),
    "trickle": ("timeout", "did not answer within 1 s"),  # --request-timeout bounds it whole
    "empty": ("bad_reply", "answered 200 with a reply that is not a completion (no choices"),
    "not_json": ("bad_reply", "answered 200 with a body that is not JSON: '<html><body>502"),
    "exit": ("connection", "could not be reached: "),
}


@pytest.mark.parametrize("fault", list(WORDED))
def test_each_error_says_the_endpoint_the_status_and_the_body(
    child_server: Any, fault: str
) -> None:
    import asyncio

    from openenv_hub.eval import Backoff, ChatPolicy, InfrastructureError

    model = child_server(fault_command(json.dumps({"1": fault})), "/requests")
    policy = ChatPolicy(f"{model.url}/v1", "scripted", timeout_s=1, backoff=Backoff(0))

    async def ask() -> None:
        try:
            await policy([{"role": "user", "content": "hi"}], [], 1)
        finally:
            await policy.aclose()

    with pytest.raises(InfrastructureError) as raised:
        asyncio.run(ask())
    kind, said = WORDED[fault]
    assert raised.value.kind == kind
    assert str(raised.value).startswith(f"{kind}: {model.url}/v1/chat/completions {said}")
    assert not str(raised.value).rstrip().endswith(":")  # never an empty reason


SLOW_FIRST = """
import time

import guesser


def guess(messages, tools, seed):
    if len(messages) == 1 and seed % 2 == 0:
        time.sleep(2)  # the first turn of some rollouts stalls
    return guesser.guess(messages, tools, seed)
"""


def test_a_rollout_past_its_timeout_is_played_again_then_written_as_an_error(
    cli: Any, word_game: Any, workdir: Path
) -> None:
    (workdir / "slow_first.py").write_text(SLOW_FIRST)
    try:
        result = cli(
            "eval", word_game.url, "--policy", "slow_first:guess", "--tasks", "tasks", "-k", 2,
            "--rollout-timeout", 1, "--max-retries", 1, "-o", "out",
        )  # fmt: skip
    finally:
        import sys

        sys.modules.pop("slow_first", None)
    assert result.code == 1
    rows = read_rows(workdir / "out")
    slow = [r for r in rows if r["seed"] % 2 == 0]
    assert slow and all(r["error_kind"] == "rollout_timeout" for r in slow)
    assert all(r["retries"] == 1 and r["duration_s"] >= 2 for r in slow)  # played twice
    assert all("longer than --rollout-timeout 1 s" in r["error"] for r in slow)
    assert all(r["finish"] != "error" for r in rows if r["seed"] % 2)


def test_credentials_in_a_model_url_reach_neither_results_nor_output(
    cli: Any, workdir: Path, child_server: Any
) -> None:
    """``--base-url http://user:KEY@host/v1``: the key is sent, never written or printed."""
    game = child_server(game_command, "/health")
    model = child_server(fault_command('{"3": "500"}'), "/requests")
    secret = "sk-NEVER-SHOWN-4242"
    with_key = model.url.replace("http://", f"http://user:{secret}@")
    played = evaluate(cli, game.url, with_key, "keyed", "--max-retries", 0)
    assert played.code == 1 and "server_error" in played.text  # the 500 is an error row
    assert secret not in played.text
    for path in (workdir / "keyed").rglob("*"):
        if path.is_file():
            assert secret.encode() not in path.read_bytes(), path
    assert "http://***@127.0.0.1" in (workdir / "keyed" / "run.json").read_text()

    refused = with_key.rsplit(":", 1)[0] + ":9"  # nothing listens on port 9
    failed = evaluate(cli, game.url, refused, "refused")
    assert failed.code != 0 and "could not be reached" in failed.text
    assert secret not in failed.text


def test_the_turns_of_an_attempt_played_again_are_counted(
    cli: Any, workdir: Path, child_server: Any
) -> None:
    """A rollout timed out after its first turn and played again: the first attempt's turn was
    billed, so it is counted (``discarded_*``), though it is in no result."""
    game = child_server(game_command, "/health")
    model = child_server(fault_command('{"3": "hold"}'), "/requests")  # 1: the preflight
    result = cli(
        "eval", game.url, "--model", "scripted", "--base-url", f"{model.url}/v1",
        "--tasks", "tasks", "--limit", 1, "-k", 1, "--max-turns", 6,
        "--rollout-timeout", 1.2, "--max-retries", 1, "-o", "out",
    )  # fmt: skip
    assert result.code == 0, result.text
    (row,) = read_rows(workdir / "out")
    assert row["retries"] == 1 and row["finish"] != "error"
    assert row["discarded_turns"] == 1 and row["discarded_completion_tokens"] == 7
    summary = json.loads((workdir / "out" / "summary.json").read_text())
    assert summary["usage"]["discarded"]["turns"] == 1
    assert summary["usage"]["completion_tokens"] == 7 * row["turns"]  # the result's own turns
    served = httpx.get(f"{model.url}/requests").json()["chat"]
    assert served == 1 + 1 + 1 + row["turns"]  # preflight, the counted turn, the held one, replay
