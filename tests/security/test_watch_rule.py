"""Watching, listing and forking other clients' sessions follow one rule: on for a server bound
to a loopback address (not on a Space), off elsewhere unless the operator turns it on; the
recorded episodes obey it too, and a recording server keeps what it recorded.

``tests/runtimes/test_watch_in_images.py`` checks the rule in the Docker image itself.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from child_processes import end_child, start_child
from pydantic import Field
from serving import free_port

from openenv_hub import Action, EnvClient, Environment, Observation, State, create_app
from openenv_hub.server.watch import WATCH_SETTING

REPO = Path(__file__).resolve().parents[2]


class Add(Action):
    amount: int = Field(ge=0, le=100)


class Total(Observation):
    total: int = 0


class Counter(Environment[Add, Total, State]):
    """A counter that can be snapshot: a fork at a step is exact while the server runs."""

    def reset(self, seed: Any = None, episode_id: Any = None, **kwargs: Any) -> Total:
        self.total, self._state = 0, State(episode_id=episode_id)
        return Total(total=0)

    def step(self, action: Add, timeout_s: Any = None, **kwargs: Any) -> Total:
        self.total += action.amount
        self._state.step_count += 1
        return Total(total=self.total, reward=float(action.amount), done=self.total >= 10)

    @property
    def state(self) -> State:
        return self._state

    def snapshot(self) -> Any:
        return (self.total, self._state.model_copy())

    def restore(self, snapshot: Any) -> None:
        self.total, state = snapshot
        self._state = state.model_copy()


class CounterClient(EnvClient[Add, Total, State]):
    action_type = Add
    observation_type = Total


@pytest.fixture
def clean_environ(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (WATCH_SETTING, "OPENENV_WATCH_SESSIONS", "SPACE_ID", "OPENENV_BIND_HOST"):
        monkeypatch.delenv(name, raising=False)


async def test_a_local_server_serves_its_recorded_episodes_and_a_fork_is_exact(
    serve: Any, tmp_path: Path, clean_environ: None
) -> None:
    path = tmp_path / "episodes.jsonl"
    server = serve(create_app(Counter, Add, Total, trajectories=path))
    async with CounterClient(base_url=server.url) as env:
        await env.reset()
        for amount in (3, 4, 5):
            await env.step(Add(amount=amount))
    server.wait_for(lambda: path.exists() and path.stat().st_size > 0)
    async with httpx.AsyncClient() as http:
        reply = await http.get(f"{server.url}/episodes", params={"limit": 1}, timeout=30)
    assert reply.status_code == 200
    (episode,) = reply.json()["episodes"]
    assert [record["step"] for record in episode] == [0, 1, 2, 3]
    assert all(record["snapshot"] for record in episode)  # ids of the server's snapshots
    async with CounterClient(base_url=server.url) as other:
        forked = await other.fork(episode, 2)
        assert forked.observation.total == 7
        assert (await other.step(Add(amount=1))).observation.total == 8


@pytest.mark.parametrize(
    ("watch", "environ"),
    [(None, {"SPACE_ID": "me/counter"}), (False, {}), (None, {WATCH_SETTING: "0"})],
)
def test_recorded_episodes_are_refused_where_watching_is_off(
    serve: Any,
    tmp_path: Path,
    clean_environ: None,
    monkeypatch: pytest.MonkeyPatch,
    watch: bool | None,
    environ: dict[str, str],
) -> None:
    for name, value in environ.items():
        monkeypatch.setenv(name, value)
    path = tmp_path / "episodes.jsonl"
    server = serve(create_app(Counter, Add, Total, trajectories=path, watch=watch))
    reply = httpx.get(f"{server.url}/episodes", timeout=30)
    assert reply.status_code == 403
    assert reply.json()["code"] == "WATCHING_OFF"
    assert f"{WATCH_SETTING}=1" in reply.json()["detail"]


def test_a_server_that_records_nothing_says_so(serve: Any, clean_environ: None) -> None:
    server = serve(create_app(Counter, Add, Total))
    reply = httpx.get(f"{server.url}/episodes", timeout=30)
    assert reply.status_code == 404 and "trajectories=" in reply.json()["detail"]


# -- openenv serve, as a user runs it --------------------------------------------------------


@pytest.fixture
def openenv_serve() -> Iterator[Any]:
    """``openenv serve envs/echo_env --web`` with the given options, stopped at the end."""
    started: list[subprocess.Popen[str]] = []

    def start(*options: str, env: dict[str, str] | None = None) -> str:
        port = free_port()
        environ = {k: v for k, v in os.environ.items() if not k.startswith("OPENENV_WATCH")}
        environ.pop("SPACE_ID", None)
        command = [sys.executable, "-m", "openenv_hub_cli.main", "serve", str(REPO / "envs" /
                   "echo_env"), "--web", "--port", str(port), *options]  # fmt: skip
        process = start_child(command, env={**environ, **(env or {})}, text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT)  # fmt: skip
        started.append(process)
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise AssertionError(process.communicate()[0])
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{url}/web/", timeout=5).status_code == 200:
                    return url
            time.sleep(0.2)
        raise AssertionError("openenv serve did not serve its UI in 120 s")

    yield start
    for process in started:
        end_child(process)


@pytest.mark.slow
def test_openenv_serve_shows_sessions_on_loopback_only_unless_turned_on(
    openenv_serve: Any,
) -> None:
    local = openenv_serve()
    with httpx.stream("GET", f"{local}/web/watch", timeout=30) as stream:
        assert stream.status_code == 200
    shared = openenv_serve("--host", "0.0.0.0")
    refused = httpx.get(f"{shared}/web/watch", timeout=30)
    assert refused.status_code == 403
    assert "bound to 0.0.0.0" in refused.json()["detail"]
    opted_in = openenv_serve("--host", "0.0.0.0", env={WATCH_SETTING: "1"})
    with httpx.stream("GET", f"{opted_in}/web/watch", timeout=30) as stream:
        assert stream.status_code == 200
