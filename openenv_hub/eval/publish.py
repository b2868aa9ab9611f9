"""Publishing a results folder as a Hugging Face dataset: one split per evaluated split (a
JSON Lines file each, under ``data/``), the summary, the settings and the plot, and a card.

Layer: client.
"""

from __future__ import annotations

import datetime as dt
import json
from collections import defaultdict
from typing import Any

import yaml

from openenv_hub.errors import ConfigurationError
from openenv_hub.eval.results import ResultsFolder

__all__ = ["RESULTS_TAG_PREFIX", "dataset_card", "push_results", "results_tag"]


#: Prefix of the tag that names the environment's Space on a results dataset.
RESULTS_TAG_PREFIX = "openenv-env:"


def results_tag(space_id: str) -> str:
    """The tag of the results of an evaluation of the Space ``space_id`` (``NS/NAME``): the
    catalog lists the datasets that carry it on the environment's page."""
    return f"{RESULTS_TAG_PREFIX}{space_id}"


def dataset_card(settings: dict[str, Any], summary: dict[str, Any], splits: list[str]) -> str:
    """The README.md of a results dataset: its splits, and what was evaluated, how.

    The front matter's ``openenv_eval`` holds the figures a leaderboard shows (model, mean
    return, pass@1, rollouts, date), whether the run is ``complete`` (every rollout played,
    none failed on an infrastructure error), the error counts, the sampling settings, what
    makes two runs' figures comparable (the taskset's digest, the pass threshold, the turn limit,
    the split and limit) and the toolkit's version; with ``settings["environment"]["space"]`` the
    card is tagged :func:`results_tag` of that Space.
    """
    env = settings.get("environment", {})
    space = env.get("space")
    front = {
        "configs": [
            {
                "config_name": "default",
                "data_files": [{"split": s, "path": f"data/{s}.jsonl"} for s in splits],
            }
        ],
        "tags": ["openenv", "evaluation", *([results_tag(space)] if space else [])],
        "openenv_eval": {
            "environment": space or env.get("name"),
            "model": settings.get("model") or settings.get("policy"),
            "mean_return": summary["return"]["mean"],
            "pass_at_1": summary["pass_at_k"].get("1"),
            "rollouts": summary["rollouts"],
            "tasks": summary["tasks"],
            "complete": _complete(settings, summary),
            "errors": summary.get("errors", 0),
            "errors_by_kind": summary.get("errors_by_kind", {}),
            "incomplete_tasks": len(summary.get("incomplete_tasks", [])),
            "sampling": settings.get("sampling", {}),
            "rollouts_per_task": settings.get("rollouts_per_task"),
            "pass_threshold": settings.get("pass_threshold"),
            "max_turns": settings.get("max_turns"),
            "split": settings.get("split"),
            "limit": settings.get("limit"),
            "taskset_digest": settings.get("taskset_digest"),
            "toolkit_version": settings.get("toolkit_version"),
            "date": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d"),
        },
    }
    lines = [
        "---",
        yaml.safe_dump(front, sort_keys=False, allow_unicode=True).rstrip("\n"),
        "---",
        "",
        f"# Evaluation of {settings.get('model') or settings.get('policy')} on {env.get('name')}",
        "",
        f"- environment: {env.get('name')} {env.get('version') or ''} at {settings.get('env')}",
        f"- environment Space: {space or 'none'} (commit {env.get('commit') or 'unknown'})",
        f"- model: {settings.get('model') or 'none'}; policy: {settings.get('policy') or 'none'}",
        f"- settings: `{json.dumps(settings.get('sampling', {}))}`, "
        f"{settings.get('rollouts_per_task')} rollouts per task, "
        f"max {settings.get('max_turns')} turns, pass at return >= {settings.get('pass_threshold')}",
        "",
        "## Summary",
        "",
        f"- rollouts: {summary['rollouts']} over {summary['tasks']} tasks; infrastructure "
        f"errors (not counted): {summary['errors']}",
        f"- return: mean {summary['return']['mean']:.4g}, std {summary['return']['std']:.4g}",
        "- pass@k: " + ", ".join(f"pass@{k} = {v:.4g}" for k, v in summary["pass_at_k"].items()),
        "",
    ]
    return "\n".join(lines)


def _complete(settings: dict[str, Any], summary: dict[str, Any]) -> bool:
    expected = settings.get("expected_rollouts")
    played = summary["rollouts"]
    if summary.get("errors") or summary.get("incomplete_tasks"):
        return False
    return expected is None or played >= expected


def push_results(
    results: ResultsFolder, repo_id: str, *, partial: bool = False, private: bool | None = None
) -> str:
    """Upload ``results`` to the dataset ``repo_id`` (created when missing); returns its URL.

    Raises:
        ConfigurationError: The run is incomplete, or holds rollouts that failed on an
            infrastructure error, and ``partial`` was not given.
    """
    settings = results.read_json(ResultsFolder.RUN)
    summary = results.read_json(ResultsFolder.SUMMARY)
    rows = results.rows()
    expected = settings.get("expected_rollouts")
    if not partial and expected is not None and len(rows) < expected:
        raise ConfigurationError(
            f"{results.path} holds {len(rows)} of {expected} rollouts: the run is incomplete.",
            hint="Finish it with --resume, or pass --partial to push what there is.",
        )
    errors = sum(1 for r in rows if r.get("finish") == "error")
    if not partial and errors:
        raise ConfigurationError(
            f"{results.path} holds {errors} rollouts that failed on infrastructure errors: its "
            "figures would not be the model's.",
            hint="Play them again with --resume, or pass --partial to push the run marked as "
            "incomplete.",
        )
    by_split: dict[str, list[str]] = defaultdict(list)
    for row in rows:
        by_split[row["split"]].append(json.dumps(row, ensure_ascii=False))
    from huggingface_hub import CommitOperationAdd, HfApi

    from openenv_hub.hub import resolve_endpoint, translate

    api = HfApi(endpoint=resolve_endpoint())
    operations = [
        CommitOperationAdd(f"data/{split}.jsonl", ("\n".join(lines) + "\n").encode())
        for split, lines in sorted(by_split.items())
    ]
    card = dataset_card(settings, summary, sorted(by_split))
    operations.append(CommitOperationAdd("README.md", card.encode()))
    for name in (ResultsFolder.RUN, ResultsFolder.SUMMARY, ResultsFolder.PLOT):
        if (results.path / name).is_file():
            operations.append(CommitOperationAdd(name, str(results.path / name)))
    publishing = translate(
        endpoint=api.endpoint, repo_id=repo_id, action="push results", repo_type="dataset"
    )
    with publishing:
        api.create_repo(repo_id, repo_type="dataset", private=private, exist_ok=True)
        api.create_commit(
            repo_id, operations, commit_message="Evaluation results", repo_type="dataset"
        )
    return f"{api.endpoint}/datasets/{repo_id}"
