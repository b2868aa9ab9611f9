"""Results pushed to LocalHub load back equal with ``datasets``; ``openenv rescore`` reproduces
the recorded rewards and reports the difference once the environment's rubric changes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from eval_support import read_rows

ARGS = ("--policy", "guesser:guess", "--tasks", "tasks", "-k", 4, "-c", 4, "-o", "results")


def test_pushed_results_load_back_equal(
    cli: Any, word_game: Any, workdir: Path, hub_env: Any
) -> None:
    import datasets

    repo = hub_env.repo_id("word-eval")
    result = cli("eval", word_game.url, *ARGS, "--push-to-hub", repo)
    assert result.code == 0, result.text
    assert f"Pushed to {hub_env.endpoint}/datasets/{repo}" in result.out

    pushed = datasets.load_dataset(repo, split="test")
    assert pushed.to_list() == read_rows(workdir / "results")
    card = hub_env.api().hf_hub_download(repo, "README.md", repo_type="dataset")
    text = Path(card).read_text()
    assert "word_game" in text and "pass@4" in text and "4 rollouts per task" in text


def test_results_pushed_with_their_space_are_tagged_with_it(
    cli: Any, word_game: Any, workdir: Path, hub_env: Any
) -> None:
    repo = hub_env.repo_id("word-eval")
    result = cli("eval", word_game.url, *ARGS, "--space", "alice/word-game", "--push-to-hub", repo)
    assert result.code == 0, result.text
    info = hub_env.api().dataset_info(repo)
    assert "openenv-env:alice/word-game" in info.tags and "evaluation" in info.tags
    summary = json.loads((workdir / "results" / "summary.json").read_text())
    figures = info.card_data.get("openenv_eval")
    assert figures["environment"] == "alice/word-game"
    assert figures["model"] == "guesser:guess" and figures["rollouts"] == 12
    assert figures["mean_return"] == summary["return"]["mean"]
    assert figures["pass_at_1"] == summary["pass_at_k"]["1"]
    settings = json.loads((workdir / "results" / "run.json").read_text())
    assert settings["environment"]["space"] == "alice/word-game"

    refused = cli("eval", word_game.url, *ARGS, "--space", "word game", "-o", "other")
    assert refused.code != 0 and "is not a Space id" in refused.text


def test_an_incomplete_run_is_pushed_only_with_partial(
    cli: Any, word_game: Any, workdir: Path, hub_env: Any
) -> None:
    assert cli("eval", word_game.url, *ARGS).code == 0
    lines = (workdir / "results" / "rollouts.jsonl").read_text().splitlines()
    (workdir / "results" / "rollouts.jsonl").write_text("\n".join(lines[:5]) + "\n")
    repo = hub_env.repo_id("word-eval")

    completed = cli("eval", word_game.url, *ARGS, "--resume", "--push-to-hub", repo)
    assert completed.code == 0, completed.text  # the resume completes the run, then pushes it
    assert len(read_rows(workdir / "results")) == 12

    from openenv_hub.errors import ConfigurationError
    from openenv_hub.eval import ResultsFolder, push_results

    (workdir / "results" / "rollouts.jsonl").write_text("\n".join(lines[:5]) + "\n")
    with pytest.raises(ConfigurationError, match="holds 5 of 12 rollouts"):
        push_results(ResultsFolder(workdir / "results"), repo)
    push_results(ResultsFolder(workdir / "results"), repo, partial=True)


def test_rescore_reproduces_rewards_then_recomputes_passes_after_a_rubric_change(
    cli: Any, word_game: Any, serve: Any, workdir: Path
) -> None:
    assert cli("eval", word_game.url, *ARGS).code == 0
    same = cli("rescore", "results")
    assert same.code == 0, same.text
    assert "Rescored 12 rollouts" in same.out and "12 unchanged, 0 changed" in same.out

    from word_game import Feedback, GameState, Guess, WordGame, solved, well_formed

    from openenv_hub import create_app
    from openenv_hub.eval import summarize
    from openenv_hub.rubrics import WeightedSum

    class GenerousGame(WordGame):
        rubric = WeightedSum([well_formed, solved], weights=[0.2, 1.0])

    generous = serve(create_app(GenerousGame, Guess, Feedback, state_cls=GameState))
    changed = cli("rescore", "results", "--env", generous.url)
    assert changed.code == 0, changed.text
    assert "0 unchanged, 12 changed" in changed.out
    rows = read_rows(workdir / "results")
    report = json.loads((workdir / "results" / "rescore.json").read_text())
    again = []
    for row, rescored in zip(rows, report, strict=True):
        guesses = len(json.loads(row["steps"]))
        total = sum(rescored["rescored"])
        assert total == pytest.approx(row["return"] + 0.1 * guesses)
        assert rescored["passed"] == (total >= 1.0) and rescored["was_passed"] == row["passed"]
        again.append({**row, "return": total, "passed": total >= 1.0})
    assert any(r["passed"] and not r["was_passed"] for r in report)  # 6 guesses now pass
    summary = json.loads((workdir / "results" / "rescore-summary.json").read_text())
    assert summary["pass_at_k"] == summarize(again, rollouts_per_task=4)["pass_at_k"]
    recorded = json.loads((workdir / "results" / "summary.json").read_text())["pass_at_k"]
    assert summary["pass_at_k"]["1"] > recorded["1"]
    assert f"pass@1 {recorded['1']:.3f} -> {summary['pass_at_k']['1']:.3f}" in changed.out
    assert read_rows(workdir / "results") == rows  # the rows stay as they were played


def test_rescore_rescores_a_reworded_observation_and_refuses_another_episode(
    cli: Any, word_game: Any, serve: Any, workdir: Path
) -> None:
    assert cli("eval", word_game.url, *ARGS).code == 0
    from word_game import Feedback, GameState, Guess, WordGame

    from openenv_hub import create_app

    class Reworded(WordGame):  # the same game, its messages worded anew
        def step(self, action: Guess, timeout_s: float | None = None, **kw: Any) -> Any:
            observation = super().step(action, timeout_s)
            return observation.model_copy(update={"message": observation.message.upper()})

    reworded = serve(create_app(Reworded, Guess, Feedback, state_cls=GameState))
    result = cli("rescore", "results", "--env", reworded.url)
    assert result.code == 0, result.text
    assert "12 unchanged, 0 changed, 0 not rescored" in result.out
    assert "12 rollouts read differently (message) with the rubric's inputs the same" in result.out

    class OtherWord(WordGame):  # ignores the seed: the replay meets another secret word
        def reset(self, seed: int | None = None, episode_id: str | None = None, **kw: Any) -> Any:
            observation = super().reset(seed, episode_id)
            self._secret = "zzzzz"
            return observation

    other = serve(create_app(OtherWord, Guess, Feedback, state_cls=GameState))
    result = cli("rescore", "results", "--env", other.url)
    assert result.code == 1, result.text  # some rollouts could not be replayed: not a result
    rows = read_rows(workdir / "results")
    report = json.loads((workdir / "results" / "rescore.json").read_text())
    won = [r["passed"] for r in rows]
    assert 0 < sum(won) < 12
    for row, rescored in zip(rows, report, strict=True):
        if row["passed"]:  # the word was found: the replay, never finding it, is another episode
            assert rescored["problem"].startswith("not replayed alike: the ")
        else:  # the same guesses, unsolved either way: the rubric's inputs are the same
            assert rescored["problem"] == "" and rescored["rescored"] == row["rewards"]
            assert "feedback" in rescored["text_changed"]
    assert f"{12 - sum(won)} unchanged, 0 changed, {sum(won)} not rescored" in result.out
    assert f"{sum(won)} of 12 rollouts could not be replayed" in result.text
    after = json.loads((workdir / "results" / "rescore-summary.json").read_text())
    assert after["errors"] == sum(won) and after["complete"] is False  # never their old rewards
    assert after["pass_at_k"]["1"] == 0.0  # what was replayed: the unsolved rollouts


def test_each_evaluated_split_is_a_split_of_the_pushed_dataset(
    cli: Any, word_game: Any, workdir: Path, hub_env: Any
) -> None:
    import datasets

    (workdir / "tasks" / "train.jsonl").write_text('{"key": "mango", "reset": {"seed": 3}}\n')
    repo = hub_env.repo_id("word-eval")
    result = cli(
        "eval", word_game.url, "--policy", "guesser:guess", "--tasks", "tasks", "-k", 2,
        "-o", "both", "--push-to-hub", repo,
    )  # fmt: skip
    assert result.code == 0, result.text
    rows = read_rows(workdir / "both")
    for split, keys in (("test", {"brick", "pious", "crane"}), ("train", {"mango"})):
        pushed = datasets.load_dataset(repo, split=split).to_list()
        assert {r["task_key"] for r in pushed} == keys
        assert pushed == [r for r in rows if r["split"] == split]

    only = cli(
        "eval", word_game.url, "--policy", "guesser:guess", "--tasks", "tasks", "--split",
        "train", "-o", "train-only",
    )  # fmt: skip
    assert only.code == 0, only.text
    assert {r["task_key"] for r in read_rows(workdir / "train-only")} == {"mango"}
