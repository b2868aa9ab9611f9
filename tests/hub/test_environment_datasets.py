"""Environments published as Hub datasets (``environment.yaml`` at the root), against LocalHub
with the real huggingface_hub client: ``openenv push --dataset`` publishes one,
``openenv eval hf://datasets/NS/NAME`` evaluates it with nothing else set up, ``from_hub`` gives
a client with the dataset attached, and the dataset's code runs only with consent, pinned to
the commit consented to."""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from cli_runner import CliResult
from eval_support import read_rows, sums_env
from hub_support import unique_repo

from openenv_hub.client import GenericEnvClient, MCPToolClient
from openenv_hub.errors import ConfigurationError, RemoteCodeNotTrustedError
from openenv_hub.hub import push_dataset, resolve_environment_dataset
from openenv_hub.testing.pytest_plugin import HubEnv

__all__ = ["sums_env"]  # a fixture

GENERATOR = """
import random


def make_task(seed: int) -> dict:
    rng = random.Random(seed)
    a, b = rng.randint(10, 99), rng.randint(10, 99)
    return {"prompt": f"What is {a} + {b}? Answer with the number.", "answer": a + b}
"""

#: Answers right on the tasks of seeds 0 and 2, wrong on the others.
ADDER = """
import re


def add(messages, tools, seed):
    text = messages[0]["content"]
    a, b = map(int, re.search(r"What is (\\d+) \\+ (\\d+)", text).groups())
    wrong = text.startswith(("seed 1", "seed 3"))
    answer = {"message": str(a + b + (1 if wrong else 0))}
    return {"tool_calls": [{"name": "sums_action", "arguments": answer}]}
"""

ROWS = [{"key": f"sum-{n}", "reset": {"task_id": n}, "prompt": f"seed {n}"} for n in range(4)]


@pytest.fixture
def published(
    hub_env: HubEnv,
    sums_env: Callable[[str, str], Path],
    cli: Callable[..., CliResult],
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[tuple[str, Path]]:
    """``sums_env`` with a taskset of four rows, published with ``openenv push --dataset``;
    yields the dataset's id and an empty folder to work in (made the cwd)."""
    folder = sums_env(GENERATOR, "taskset:\n  source: tasks\n")
    (folder / "tasks").mkdir()
    (folder / "tasks" / "test.jsonl").write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    (folder / ".env").write_text("HF_TOKEN=hf_never_uploaded\n")
    repo_id = unique_repo(hub_env, "sums")
    done = cli("push", folder, "--dataset", "--repo-id", repo_id)
    assert done.code == 0, done.text
    elsewhere = folder.parent / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "adder.py").write_text(ADDER)
    monkeypatch.chdir(elsewhere)
    shutil.rmtree(folder)  # what runs comes from the dataset, nothing from here
    for name in [n for n in sys.modules if n == "sums_env" or n.startswith("sums_env.")]:
        del sys.modules[name]
    yield repo_id, elsewhere
    sys.modules.pop("adder", None)


def test_push_dataset_publishes_the_folder_an_environment_yaml_and_a_tagged_card(
    hub_env: HubEnv, published: tuple[str, Path]
) -> None:
    from huggingface_hub import hf_hub_download

    repo_id, _ = published
    files = set(hub_env.api().list_repo_files(repo_id, repo_type="dataset"))
    assert {"openenv.yaml", "environment.yaml", "README.md", "tasks/test.jsonl"} <= files
    assert "sums_env/server/app.py" in files and ".env" not in files
    assert not any(name.startswith(".openenv/") for name in files)  # no wheel, no link file

    declared = yaml.safe_load(
        Path(hf_hub_download(repo_id, "environment.yaml", repo_type="dataset")).read_text()
    )
    assert declared["spec_version"] == "hf-rl-env-0.1"
    (environment,) = declared["environments"]
    assert environment["id"] == "sums_env" and environment["splits"] == ["test"]
    assert environment["dataset"] == {"path": "tasks"}
    assert environment["frameworks"] == {"openenv": {"manifest": "openenv.yaml"}}

    card = hub_env.api().dataset_info(repo_id).card_data
    assert card is not None and card.tags[:2] == ["openenv", "rl-environment"]
    config = card.to_dict()["configs"][0]
    assert config["data_files"] == [{"split": "test", "path": "tasks/test*.jsonl"}]


@pytest.mark.slow
def test_openenv_eval_of_the_dataset_needs_nothing_else(
    published: tuple[str, Path], cli: Callable[..., CliResult]
) -> None:
    repo_id, workdir = published
    done = cli(
        "eval", f"hf://datasets/{repo_id}", "--policy", "adder:add", "--yes", "-k", "2",
        "-o", workdir / "results",
    )  # fmt: skip
    assert done.code == 0, done.text
    rows = read_rows(workdir / "results")
    returns = {(r["task_key"], r["return"]) for r in rows}
    assert returns == {("sum-0", 1.0), ("sum-1", 0.0), ("sum-2", 1.0), ("sum-3", 0.0)}
    assert len(rows) == 8 and all(r["error"] is None for r in rows)
    summary = json.loads((workdir / "results" / "summary.json").read_text())
    assert summary["pass_at_k"]["1"] == summary["pass_at_k"]["2"] == 0.5
    settings = json.loads((workdir / "results" / "run.json").read_text())
    commit = resolve_environment_dataset(f"hf://datasets/{repo_id}", trust_remote_code=True).commit
    pinned = f"hf://datasets/{repo_id}/sums_env@{commit}"
    assert settings["env"] == settings["tasks"] == pinned


@pytest.mark.slow
def test_from_hub_gives_a_client_with_the_dataset_attached(published: tuple[str, Path]) -> None:
    repo_id, _ = published
    env = GenericEnvClient.from_hub(f"hf://datasets/{repo_id}", trust_remote_code=True)
    provider = env.provider
    assert env.dataset is not None and provider is not None
    with env.sync() as client:
        assert client.dataset is env.dataset
        rows = client.dataset.rows()
        assert [r["key"] for r in rows] == ["sum-0", "sum-1", "sum-2", "sum-3"]
        assert {r["split"] for r in rows} == {"test"}
        first = client.reset(**rows[0]["reset"]).observation["echoed_message"]
        a, b = (int(word.strip("?")) for word in first.split()[2:5:2])
        result = client.step({"message": str(a + b)})
        assert (result.reward, result.done) == (1.0, True)
    assert provider.runtime == "local"
    assert not provider.running()  # type: ignore[attr-defined]


@pytest.mark.slow
def test_nothing_runs_without_consent_and_consent_is_for_one_commit(
    hub_env: HubEnv, published: tuple[str, Path], cli: Callable[..., CliResult]
) -> None:
    repo_id, workdir = published
    ref = f"hf://datasets/{repo_id}"
    with pytest.raises(RemoteCodeNotTrustedError):
        GenericEnvClient.from_hub(ref)
    refused = cli("eval", ref, "--policy", "adder:add", "-o", workdir / "never")
    assert refused.code != 0 and "it runs the dataset's code" in refused.text
    assert repo_id in refused.text and not (workdir / "never").exists()

    first = resolve_environment_dataset(ref, trust_remote_code=True)
    api = hub_env.api()
    api.upload_file(
        path_or_fileobj=b"def make_task(seed):\n    raise SystemExit('a later commit')\n",
        path_in_repo="sums_env/tasks.py",
        repo_id=repo_id,
        repo_type="dataset",
    )
    later = resolve_environment_dataset(ref, trust_remote_code=True)
    assert later.commit != first.commit
    with GenericEnvClient.from_hub(f"{ref}@{first.commit}", trust_remote_code=True).sync() as env:
        assert env.dataset is not None and env.dataset.commit == first.commit
        assert "What is" in env.reset(task_id=1).observation["echoed_message"]


@pytest.mark.parametrize(
    ("files", "says"),
    [
        ({"data/test.jsonl": '{"key": "a"}\n'}, "has no environment.yaml"),
        ({"environment.yaml": "spec_version: hf-rl-env-0.1\nenvironments: []\n"}, "environments"),
        ({"environment.yaml": "spec_version: hf-env-0.1\nenvironments: [{id: a}]\n"}, "frameworks"),
        (
            {"environment.yaml": "spec_version: '9'\nenvironments: [{id: a, frameworks: {x: {}}}]"},
            "spec_version '9' is not one this reads",
        ),
        (
            {
                "environment.yaml": "spec_version: hf-rl-env-0.1\nenvironments:\n"
                "  - {id: a, frameworks: {openenv: {space_id: x/y, image: z}}}\n"
            },
            "one of space_id, image and package",
        ),
        (
            {
                "environment.yaml": "spec_version: hf-rl-env-0.1\nenvironments:\n"
                "  - {id: a, frameworks: {harbor: {}}}\n  - {id: b, frameworks: {harbor: {}}}\n"
            },
            "declares no environments OpenEnv runs",
        ),
        (
            {
                "environment.yaml": "spec_version: hf-rl-env-0.1\nenvironments:\n"
                "  - {id: a, frameworks: {openenv: {manifest: ../../elsewhere/openenv.yaml}}}\n"
            },
            "'../../elsewhere/openenv.yaml' is not a path inside the dataset",
        ),
        (
            {
                "environment.yaml": "spec_version: hf-rl-env-0.1\nenvironments:\n"
                "  - {id: a, dataset: {path: /etc}, frameworks: {openenv: {}}}\n"
            },
            "'/etc' is not a path inside the dataset",
        ),
    ],
)
def test_a_dataset_that_declares_no_environment_is_told_what_to_do(
    hub_env: HubEnv,
    cli: Callable[..., CliResult],
    files: dict[str, str],
    says: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    request: pytest.FixtureRequest,
) -> None:
    (tmp_path / "adder.py").write_text(ADDER)  # the policy loads before the environment
    monkeypatch.chdir(tmp_path)
    request.addfinalizer(lambda: sys.modules.pop("adder", None))
    repo_id = _dataset(hub_env, files)
    done = cli("eval", f"hf://datasets/{repo_id}", "--policy", "adder:add", "--yes")
    assert done.code != 0 and says in done.text, done.text
    assert "Traceback" not in done.text


def test_an_image_a_dataset_names_runs_only_with_consent(hub_env: HubEnv) -> None:
    text = (
        "spec_version: hf-env-0.1\nenvironments:\n"
        "  - id: boxed\n    frameworks:\n      openenv: {image: 'example.invalid/never:1'}\n"
    )
    repo_id = _dataset(hub_env, {"environment.yaml": text})
    with pytest.raises(RemoteCodeNotTrustedError):
        GenericEnvClient.from_hub(f"hf://datasets/{repo_id}/boxed")
    with pytest.raises(ConfigurationError, match="declares no environment 'other'"):
        GenericEnvClient.from_hub(f"hf://datasets/{repo_id}/other")


def test_a_dataset_can_name_a_space_as_its_server(
    hub_env: HubEnv, echo_server: Any, make_space: Any
) -> None:
    """``space_id``: the client talks to the Space's app (LocalHub points it at a server here),
    with the dataset's rows attached; nothing of the dataset runs, so no consent is asked."""
    space = make_space()
    hub_env.hub.set_space_runtime(space, host=echo_server.url)
    text = (
        "spec_version: hf-rl-env-0.1\nenvironments:\n  - id: echo\n    splits: [test]\n"
        f"    frameworks:\n      openenv: {{space_id: {space}}}\n"
    )
    row = {"task_id": "hi", "openenv_reset": {"seed": 3}}
    repo_id = _dataset(
        hub_env, {"environment.yaml": text, "data/test.jsonl": json.dumps(row) + "\n"}
    )
    with MCPToolClient.from_hub(f"hf://datasets/{repo_id}").sync() as env:
        assert env.dataset is not None and env.dataset.folder is None
        assert env.dataset.rows() == [{**row, "split": "test"}]
        assert env.provider is not None and env.provider.runtime == "space"
        env.reset()
        assert env.call_tool("echo_message", message="hi") == "hi"


def _dataset(hub_env: HubEnv, files: dict[str, str]) -> str:
    from huggingface_hub import CommitOperationAdd

    api = hub_env.api()
    repo_id = unique_repo(hub_env, "declared")
    api.create_repo(repo_id, repo_type="dataset")
    operations = [CommitOperationAdd(path, text.encode()) for path, text in files.items()]
    api.create_commit(repo_id, operations, commit_message="files", repo_type="dataset")
    return repo_id


def test_push_dataset_dry_run_sends_nothing(hub_env: HubEnv, sums_env: Any) -> None:
    folder = sums_env(GENERATOR, "")
    repo_id = unique_repo(hub_env, "dry")
    result = push_dataset(folder, repo_id, dry_run=True)
    assert result.commit is None and "environment.yaml" in result.files
    assert not hub_env.api().repo_exists(repo_id, repo_type="dataset")
