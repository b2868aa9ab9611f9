"""``openenv cache list`` and ``openenv cache prune`` on a real uv environment, made by
``runtime="uv"`` in a cache folder of the test's own (``$OPENENV_HUB_CACHE``)."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from doc_blocks import doc_block
from echo_env import EchoEnv
from provider_support import ECHO_ENV, REPO

from openenv_hub.providers.uv import COMPLETE_MARKER, cache_root
from openenv_hub.providers.uv_cache import cached_envs

pytestmark = pytest.mark.slow

DAY = 86400


@pytest.fixture
def own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv("OPENENV_HUB_CACHE", str(tmp_path / "cache"))
    yield cache_root()


def _last_started(env_path: Path, days_ago: float) -> None:
    then = time.time() - days_ago * DAY
    os.utime(env_path / COMPLETE_MARKER, (then, then))


def test_list_and_prune_a_real_environment(own_cache: Path, cli: Any) -> None:
    with EchoEnv.from_folder(ECHO_ENV, runtime="uv").sync() as env:
        assert env.call_tool("echo_message", message="uv") == "uv"
        (made,) = cached_envs()
        assert made.path.parent == own_cache and made.source == str(ECHO_ENV.resolve())
        assert made.in_use and made.size_bytes > 0
        listed = cli("cache", "list")
        assert listed.code == 0 and made.name in listed.out and str(ECHO_ENV) in listed.out
        assert "yes" in listed.out and "just now" in listed.out
        _last_started(made.path, 400)
        kept = cli("cache", "prune", "--all")  # a server runs from it: never removed
        assert kept.code == 0 and "Removed 0" in kept.out and made.path.is_dir()

    assert "0 would go" in cli("cache", "prune", "--dry-run", "--older-than", "500").out
    dry = cli("cache", "prune", "--dry-run")  # older than the default 30 days
    assert f"Would remove {made.name} ({ECHO_ENV.resolve()})" in dry.out and made.path.is_dir()

    with EchoEnv.from_folder(ECHO_ENV, runtime="uv").sync():  # a start marks it used again
        pass
    (again,) = cached_envs()
    assert again.name == made.name and again.unused_for_days() < 0.01 and not again.in_use
    assert "0 would go" in cli("cache", "prune", "--dry-run").out

    _last_started(made.path, 31)
    pruned = cli("cache", "prune")
    assert pruned.code == 0 and f"Removed {made.name}" in pruned.out and not made.path.exists()
    assert "No uv environments in" in cli("cache", "list").out


def test_an_environment_being_made_is_not_removed(own_cache: Path, cli: Any) -> None:
    making = own_cache / "folder-0123456789abcdef"
    making.mkdir(parents=True)
    with open(own_cache / f"{making.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # as prepare() holds it while uv works
        result = cli("cache", "prune", "--all")
    assert result.code == 1 and "1 could not be removed" in result.err and making.is_dir()
    assert "Traceback" not in result.text
    assert cli("cache", "prune", "--all").code == 0 and not making.exists()


def test_a_link_in_the_cache_is_removed_alone_never_what_it_points_to(
    own_cache: Path, tmp_path: Path, cli: Any
) -> None:
    """An environment moved to another disk and linked back (or a link planted in the cache)
    made prune crash ("Cannot call rmtree on a symbolic link"); following it instead would
    delete a folder outside the cache."""
    elsewhere = tmp_path / "big-disk" / "folder-0123456789abcdef"
    (elsewhere / "bin").mkdir(parents=True)
    (elsewhere / "bin" / "python").write_text("keep me", encoding="utf-8")
    own_cache.mkdir(parents=True)
    (own_cache / elsewhere.name).symlink_to(elsewhere)
    (own_cache / "folder-dangling").symlink_to(tmp_path / "gone")
    result = cli("cache", "prune", "--all")
    assert result.code == 0 and "Traceback" not in result.text, result.text
    assert f"Removed the link {elsewhere.name} (what it points to, {elsewhere}, is left" in (
        result.out
    )
    assert "Removed the link folder-dangling" in result.out and "Removed 2" in result.out
    assert not (own_cache / elsewhere.name).is_symlink()
    assert (elsewhere / "bin" / "python").read_text(encoding="utf-8") == "keep me"

    (own_cache / elsewhere.name).symlink_to(elsewhere)
    listed = cli("cache", "list")
    assert listed.code == 0 and f"a link to {elsewhere}" in listed.out, listed.text


def test_the_documented_commands(own_cache: Path) -> None:
    """The block "uv cache" of docs/runtimes.md, as printed, on an environment 40 days unused."""
    with EchoEnv.from_folder(ECHO_ENV, runtime="uv").sync():
        pass
    (made,) = cached_envs()
    _last_started(made.path, 40)
    done = subprocess.run(
        ["bash", "-e", "-c", doc_block("docs/runtimes.md", "uv cache").code],
        cwd=REPO,
        env={
            **os.environ,
            "COLUMNS": "200",
            "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",
        },
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert made.name in done.stdout and "40 days ago" in done.stdout
    assert f"Removed {made.name}" in done.stdout and not made.path.exists()
