"""A Space pushed from a development build names its bundled wheel by URL, at the commit that
holds it (docs/publishing.md, "Development builds"); released versions keep the plain line."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
from cli_runner import CliResult
from doc_blocks import doc_block
from hub_support import space_files, unique_repo

from openenv_hub.hub import push
from openenv_hub.hub._wheel_pin import find_pinned_commit, pin_requirements
from openenv_hub.testing.pytest_plugin import HubEnv

URL = "http://hub/spaces/a/b/resolve/c0ffee/.openenv/wheels/openenv_hub-0.1.0-py3-none-any.whl"


@pytest.mark.parametrize(
    ("line", "pinned"),
    [
        ('"openenv-hub>=0.1.0"', f'"openenv-hub @ {URL}"'),
        ('"openenv-hub"', f'"openenv-hub @ {URL}"'),
        ("'openenv_hub[ui] >= 0.1'", f"'openenv-hub[ui] @ {URL}'"),
        ('"openenv-hub>=0.1; python_version >= \'3.10\'"', f"\"openenv-hub @ {URL} ; python_version >= '3.10'\""),
        ('"openenv-hub @ http://old/x.whl"', f'"openenv-hub @ {URL}"'),
        ('"openenv-hub-extras>=1"', '"openenv-hub-extras>=1"'),
        ('"numpy>=2"', '"numpy>=2"'),
    ],
)  # fmt: skip
def test_pin_requirements(line: str, pinned: str) -> None:
    text, changes = pin_requirements(f"dependencies = [{line}]\n", URL)
    assert text == f"dependencies = [{pinned}]\n"
    assert len(changes) == (line != pinned)


def test_find_pinned_commit() -> None:
    sha = "0123456789abcdef0123456789abcdef01234567"
    text = f'deps = ["openenv-hub @ http://h/spaces/a/b/resolve/{sha}/.openenv/wheels/w.whl"]'
    assert find_pinned_commit(text, "http://h/spaces/a/b", ".openenv/wheels/w.whl") == sha
    assert find_pinned_commit(text, "http://h/spaces/a/c", ".openenv/wheels/w.whl") is None


def test_the_uploaded_pyproject_names_the_wheel_at_the_commit_that_holds_it(
    hub_env: HubEnv, echo_copy: Path, cli: Callable[..., CliResult]
) -> None:
    repo_id = unique_repo(hub_env, "pin")
    dry = cli("push", echo_copy, "--repo-id", repo_id, "--dry-run")
    assert dry.code == 0, dry.text
    assert "pyproject.toml: openenv-hub>=0.1.0 -> openenv-hub @ " in dry.out
    assert "/resolve/<commit-of-the-wheel>/.openenv/wheels/openenv_hub-" in dry.out

    real = cli("push", echo_copy, "--repo-id", repo_id)
    assert real.code == 0, real.text
    result = push(echo_copy, repo_id, dry_run=True)  # the same plan, now that the Space exists
    assert result.plan.pin is not None and result.plan.pin.commit is not None
    wheel, commit = result.plan.pin.wheel, result.plan.pin.commit
    api = hub_env.api("alice")
    commits = api.list_repo_commits(repo_id, repo_type="space")
    assert [c.title.split(": ")[-1] for c in commits[:2]] == [
        "14 added or changed, 0 deleted",  # the echo folder's files, its wheel aside
        "bundled openenv-hub wheel",
    ]
    assert commits[1].commit_id == commit
    files = space_files(hub_env, repo_id)
    url = f"{hub_env.endpoint}/spaces/{repo_id}/resolve/{commit}/{wheel}"
    assert f'dependencies = ["openenv-hub @ {url}"]' in files["pyproject.toml"].decode()
    assert f'ui = ["openenv-hub[ui] @ {url}"]' in files["pyproject.toml"].decode()
    assert httpx.get(url).content == files[wheel]  # what pip downloads is the bundled wheel
    assert (echo_copy / "pyproject.toml").read_text().count("openenv-hub>=0.1.0") == 1
    (documented,) = doc_block("docs/publishing.md", "pinned requirement").lines
    documented = documented.replace("https://huggingface.co", hub_env.endpoint)
    documented = documented.replace("YOUR_NAME/echo_env", repo_id).replace("COMMIT", commit)
    assert documented in real.out  # the docs show what push prints

    again = push(echo_copy, repo_id)  # nothing changed: the pin is the same, no commit
    assert again.plan.files.empty and again.commit == commits[0].commit_id


def test_a_released_openenv_hub_keeps_the_plain_requirement(
    hub_env: HubEnv, echo_copy: Path
) -> None:
    repo_id = unique_repo(hub_env, "released")
    result = push(echo_copy, repo_id, bundle_wheel=False)  # as from a release: no wheel
    assert result.plan.pin is None
    uploaded = space_files(hub_env, repo_id)["pyproject.toml"]
    assert uploaded == (echo_copy / "pyproject.toml").read_bytes()
