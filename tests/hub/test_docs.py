"""docs/publishing.md: every code block, run against LocalHub as written (names aside)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from hub_support import REPO, Venv, run_python, serve_app, unique_repo

from openenv_hub.testing.pytest_plugin import HubEnv

DOC = REPO / "docs" / "publishing.md"
CACHES = shutil.ignore_patterns("__pycache__", "*.egg-info", ".pytest_cache", ".openenv")


def blocks() -> dict[str, tuple[str, str]]:
    """``{marker: (language, code)}`` of the blocks marked as run by this test."""
    text = DOC.read_text(encoding="utf-8")
    found = re.findall(
        r"<!-- ([^:]+): run by tests/hub/test_docs.py -->\n```(\w+)\n(.*?)```", text, re.S
    )
    return {name: (lang, code) for name, lang, code in found}


def test_the_readme_shows_the_tested_publish_workflow() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    for name, (language, code) in blocks().items():
        if name in ("publish workflow", "connect"):
            found = re.search(rf"<!-- {name}: .*?-->\n```{language}\n(.*?)```", readme, re.S)
            assert found and found.group(1) == code, name


def test_every_code_block_is_run() -> None:
    text = DOC.read_text(encoding="utf-8")
    assert text.count("```") // 2 == len(blocks()) + 1 == 6  # + the pinned requirement
    assert list(blocks()) == [
        "publish workflow",
        "connect",
        "connect locally",
        "discovery",
        "fork and pull",
    ]


def _bash(venv: Venv, code: str, cwd: Path) -> str:
    done = subprocess.run(
        ["bash", "-e", "-c", code],
        cwd=cwd,
        env=venv.env(COLUMNS="200"),
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert done.returncode == 0, f"{done.stdout[-4000:]}\n{done.stderr[-4000:]}"
    return done.stdout


@pytest.mark.slow
def test_the_documented_workflow_runs(hub_env: HubEnv, hub_venv: Venv, tmp_path: Path) -> None:
    repo_id = unique_repo(hub_env, "docs")
    code = {
        name: body.replace("YOUR_NAME/echo_env", repo_id) for name, (_, body) in blocks().items()
    }

    checkout = tmp_path / "checkout"  # the repository's echo_env, where the block expects it
    shutil.copytree(REPO / "envs" / "echo_env", checkout / "envs" / "echo_env", ignore=CACHES)
    out = _bash(hub_venv, code["publish workflow"], checkout)
    assert "Dry run: nothing was changed." in out
    assert f"Pushed {repo_id} as version 0.1.0" in out
    assert f"pip install git+{hub_env.endpoint}/spaces/{repo_id}@0.1.0" in out
    assert "Installed" in out and "Use it: from echo_env.client import EchoEnv" in out

    with serve_app(hub_venv.python, "echo_env.server.app:app") as url:
        hub_env.hub.set_space_runtime(repo_id, host=url)  # LocalHub runs no apps: this one
        assert "{'message': 'Hi', 'length': 2}" in run_python(
            hub_venv.python, code["connect"], env=hub_venv.env()
        )
    hub_env.hub.clear_requests()
    assert run_python(hub_venv.python, code["connect locally"], env=hub_venv.env()).strip() == "Hi"
    assert not [r for r in hub_env.hub.requests() if "git-upload-pack" in r["path"]]  # reused

    api = hub_env.api("alice")
    source_commit = api.space_info(repo_id).sha
    out = _bash(hub_venv, code["fork and pull"], tmp_path)
    fork_id = repo_id + "_mine"
    assert api.space_info(fork_id).private
    assert api.get_space_variables(fork_id)["LOG_LEVEL"].value == "debug"
    assert (tmp_path / "my_echo_env" / "openenv.yaml").is_file()
    assert f"A push of my_echo_env goes to {fork_id} (the Space this folder was" in out
    assert f"Pushing my_echo_env to {fork_id} (the Space this folder was pulled from)" in out
    assert api.space_info(repo_id).sha == source_commit  # the source is left alone
    readme = Path(api.hf_hub_download(fork_id, "README.md", repo_type="space"))
    assert readme.read_text(encoding="utf-8").endswith("Changed by me.\n")

    assert "'echo_env'" in run_python(hub_venv.python, code["discovery"], env=hub_venv.env())


def test_localhub_serves_no_space_app_as_the_doc_says(hub_env: HubEnv) -> None:
    """docs/publishing.md, "Testing against LocalHub": what LocalHub runs and what it does not."""
    import httpx

    text = DOC.read_text(encoding="utf-8").split("## Testing against LocalHub", 1)[1]
    assert "does not build or run a Space's Docker image" in text
    assert "LocalHub.set_space_runtime(repo_id, host=url)" in text
    repo_id = unique_repo(hub_env, "noapp")
    hub_env.api("alice").create_repo(repo_id, repo_type="space", space_sdk="docker")
    host = hub_env.api("alice").space_info(repo_id).host
    answer = httpx.get(f"{host}/health")
    assert answer.status_code == 503 and "does not run Space apps" in answer.text
    assert "set_space_runtime" in answer.text
