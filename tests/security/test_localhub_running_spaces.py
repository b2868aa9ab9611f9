"""Spaces that LocalHub really builds and runs, in Docker: who may call a private Space's app,
and what a Space's build and app can reach on the machine."""

from __future__ import annotations

import json
import os

import httpx
import pytest
from localhub_spaces import push_space, space_hub, tiny_space

from openenv_hub.localhub import LocalHub

__all__ = ["space_hub"]  # the fixture, imported for pytest

pytestmark = [pytest.mark.docker, pytest.mark.slow]


@pytest.fixture(scope="module")
def private_app(space_hub: LocalHub) -> str:
    push_space(space_hub, "alice/private-app", tiny_space(), private=True)
    return f"{space_hub.endpoint}/_localhub/apps/alice/private-app"


def test_a_private_app_answers_only_who_may_read_the_space(
    space_hub: LocalHub, private_app: str
) -> None:
    """Threat: anyone on the machine reads a private Space's app or resets its episode."""
    alice = {"authorization": f"Bearer {space_hub.token_for('alice')}"}
    bob = {"authorization": f"Bearer {space_hub.token_for('bob')}"}
    assert httpx.post(f"{private_app}/reset", timeout=10).status_code == 404
    assert httpx.post(f"{private_app}/reset", headers=bob, timeout=10).status_code == 404
    assert httpx.get(f"{private_app}/data", headers=alice, timeout=10).status_code == 200

    seen = httpx.get(f"{private_app}/seen", headers=alice, timeout=10).json()
    assert [(s["method"], s["path"]) for s in seen if s["path"] != "/health"] == [("GET", "/data")]


def test_a_private_apps_code_never_sees_the_callers_token(
    space_hub: LocalHub, private_app: str
) -> None:
    """Threat: the Space's code (anyone's, once it is forked) collects its callers' tokens."""
    token = space_hub.token_for("alice")
    httpx.get(f"{private_app}/bearer", headers={"authorization": f"Bearer {token}"}, timeout=10)
    httpx.get(f"{private_app}/basic", auth=("alice", token), timeout=10)
    seen = httpx.get(f"{private_app}/seen", auth=("alice", token), timeout=10).text
    assert '"/bearer"' in seen and '"/basic"' in seen
    assert token not in seen and "uthorization" not in seen


def test_an_app_hears_no_host_or_client_its_caller_made_up(
    space_hub: LocalHub, private_app: str
) -> None:
    """Threat: a caller names the host the app believes it was asked for (``Forwarded``,
    ``X-Forwarded-Host``; LocalHub copied the caller's ``Host`` into ``Forwarded``) or passes for
    another client (``X-Forwarded-For``, which LocalHub passed on)."""
    alice = ("alice", space_hub.token_for("alice"))
    made_up = {
        "host": "rebind.evil.com",
        "forwarded": "for=6.6.6.6;host=rebind.evil.com;proto=https",
        "x-forwarded-for": "6.6.6.6",
        "x-forwarded-host": "rebind.evil.com",
        "x-forwarded-proto": "https",
        "x-real-ip": "6.6.6.6",
    }
    httpx.get(f"{private_app}/by-path", headers=made_up, auth=alice, timeout=10)
    own = f"alice--private-app.localhost:{space_hub.port}"
    at_own_origin = {**made_up, "host": own}
    httpx.get(f"{space_hub.endpoint}/by-host", headers=at_own_origin, auth=alice, timeout=10)
    seen = httpx.get(f"{private_app}/seen", auth=alice, timeout=10).json()
    heard = {s["path"]: {k.lower(): v for k, v in s["headers"].items()} for s in seen}
    for path in ("/by-path", "/by-host"):
        assert "evil" not in json.dumps(heard[path]) and "6.6.6.6" not in json.dumps(heard[path])
        assert heard[path]["x-forwarded-for"] == "127.0.0.1", path
        assert "forwarded" not in heard[path] and "x-real-ip" not in heard[path]
    assert heard["/by-host"]["host"] == own  # the app's own origin, as LocalHub routed it
    assert "x-forwarded-prefix" not in heard["/by-host"]
    assert heard["/by-path"]["x-forwarded-prefix"] == "/_localhub/apps/alice/private-app"


def test_a_big_body_reaches_the_app_streamed(space_hub: LocalHub, private_app: str) -> None:
    """The proxy streams a request's body to the app (never holding it whole); LocalHub's
    upload limit bounds it (test_localhub_uploads.py)."""
    alice = ("alice", space_hub.token_for("alice"))
    body = os.urandom(24 << 20)
    assert httpx.post(f"{private_app}/upload", content=body, auth=alice, timeout=60).is_success
    seen = httpx.get(f"{private_app}/seen", auth=alice, timeout=10).json()
    assert [s["length"] for s in seen if s["path"] == "/upload"] == [len(body)]


def test_a_spaces_image_names_that_space_and_commit(space_hub: LocalHub, private_app: str) -> None:
    """Threat: Spaces whose names read alike (``alice/my_env``, ``alice-my/env``) share images."""
    from docker_support.engine import docker
    from huggingface_hub import HfApi

    from openenv_hub.docker import space_image_tag

    api = HfApi(endpoint=space_hub.endpoint, token=space_hub.token_for("alice"))
    commit = api.space_info("alice/private-app").sha
    assert commit is not None
    mine = (
        f"label=openenv-hub.owner-pid={os.getpid()}",
        "label=openenv-hub.space=alice/private-app",
    )
    (container,) = docker("ps", "-q", "--filter", mine[0], "--filter", mine[1]).stdout.split()
    image = docker("inspect", "--format", "{{.Config.Image}}", container).stdout.strip()
    assert image == space_image_tag("alice/private-app", commit, prefix="localhub-space")


PROBE = """\
import socket
for host, port in [("127.0.0.1", {port}), ("pypi.org", 443)]:
    try:
        socket.create_connection((host, port), timeout=3).close()
        print(f"PROBE reached {{host}}:{{port}}", flush=True)
    except OSError:
        print(f"PROBE could not reach {{host}}:{{port}}", flush=True)
"""
PROBING_DOCKERFILE = """\
ARG BASE_IMAGE=python:3.11-slim
FROM ${BASE_IMAGE}
COPY probe.py /srv/probe.py
RUN python3 /srv/probe.py
RUN python3 -m venv /srv/venv && /srv/venv/bin/pip install --retries 0 tinypkg \\
    && /srv/venv/bin/python -c "import tinypkg; print('tinypkg', tinypkg.VALUE)"
COPY app.py /srv/app.py
CMD ["python3", "/srv/app.py"]
"""


def _build_log(hub: LocalHub, repo_id: str) -> str:
    alice = {"authorization": f"Bearer {hub.token_for('alice')}"}
    url = f"{hub.endpoint}/api/spaces/{repo_id}/logs/build"
    events = httpx.get(url, headers=alice, timeout=30).text.splitlines()
    return "".join(json.loads(e[len("data: ") :])["data"] for e in events if e.startswith("data: "))


@pytest.fixture(scope="module")
def probing_space(space_hub: LocalHub) -> str:
    files = tiny_space(
        **{"Dockerfile": PROBING_DOCKERFILE, "probe.py": PROBE.format(port=space_hub.port)}
    )
    push_space(space_hub, "alice/probe", files)
    return "alice/probe"


def test_a_build_reaches_nothing_and_installs_from_the_wheelhouse(
    space_hub: LocalHub, probing_space: str
) -> None:
    """Threat: a Space's ``RUN`` step (its author's code) reads LocalHub's request log, a private
    app's data or its build arguments through the host's loopback, or the internet."""
    log = _build_log(space_hub, probing_space)
    assert f"PROBE could not reach 127.0.0.1:{space_hub.port}" in log
    assert "PROBE could not reach pypi.org:443" in log and "PROBE reached" not in log
    assert "tinypkg 42" in log  # packages come from the wheelhouse


def test_a_spaces_app_listens_on_loopback_only(space_hub: LocalHub, probing_space: str) -> None:
    """Threat: a Space's app, run in the host's network, listens on every interface, so anyone
    on the network reaches it, a private one included, without LocalHub's access check."""
    from docker_support.engine import docker, listening_addresses

    mine = (
        f"label=openenv-hub.owner-pid={os.getpid()}",
        f"label=openenv-hub.space={probing_space}",
    )
    (container,) = docker("ps", "-q", "--filter", mine[0], "--filter", mine[1]).stdout.split()
    url = docker("inspect", "--format", '{{index .Config.Labels "openenv-hub.url"}}', container)
    port = int(url.stdout.strip().rsplit(":", 1)[1])
    assert listening_addresses(port) == {"127.0.0.1"}


NEEDS_A_PACKAGE = """\
FROM {base}
RUN python3 -m venv /srv/venv && /srv/venv/bin/pip install --retries 0 --timeout 3 tinypkg
"""


def test_a_build_that_cannot_get_a_package_says_where_packages_come_from(
    space_hub: LocalHub,
) -> None:
    from docker_support.engine import BASE_IMAGE

    files = {"Dockerfile": NEEDS_A_PACKAGE.format(base=BASE_IMAGE)}  # not FROM ${BASE_IMAGE}
    runtime = push_space(space_hub, "alice/needs-a-package", files, wait_for=("BUILD_ERROR",))
    message = runtime["errorMessage"]
    assert "Space builds have no network" in message and "--space-wheelhouse" in message
    assert "FROM ${BASE_IMAGE}" in message
