"""The registry of runtimes: every way to start a server goes through it, by name, and a runtime
added by a module of its own (``echo_everywhere.py``) works with all of them."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from child_processes import end_child, start_child
from echo_env import EchoEnv
from runtime_support import ECHO_ENV, REPO

from openenv_hub.errors import ClusterError, ConfigurationError
from openenv_hub.runtimes import SpaceRef, get_runtime, runtime_names, starter, unregister
from openenv_hub.transport.local_ports import free_port, port_in_use


@pytest.fixture
def echo_everywhere() -> Iterator[Any]:
    import echo_everywhere

    from openenv_hub.runtimes import register

    register(echo_everywhere.RUNTIME)
    echo_everywhere.RUNTIME.started.clear()
    yield echo_everywhere.RUNTIME
    unregister("echo_everywhere")


def test_the_builtin_runtimes_and_what_each_starts_from() -> None:
    assert set(runtime_names()) >= {"docker", "kubernetes", "local", "ray", "space", "swarm", "uv"}
    assert set(runtime_names("space")) >= {"docker", "local", "space", "swarm", "uv"}
    assert set(runtime_names("image")) >= {"docker", "kubernetes", "swarm"}
    assert set(runtime_names("folder")) >= {"docker", "kubernetes", "local", "ray", "swarm", "uv"}
    assert not {"space", "ray"} & set(runtime_names("image"))
    assert "space" not in runtime_names("folder") and "ray" not in runtime_names("space")
    for name in runtime_names():
        runtime = get_runtime(name)
        assert runtime.name == name and runtime.summary and runtime.options
        assert all(callable(getattr(runtime, f"start_{source}")) for source in runtime.options)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: starter("podman", "folder", ECHO_ENV, {}), "Unknown runtime 'podman'; use one of"),
        (lambda: starter("dokcer", "image", "i", {}), "(did you mean 'docker'?)"),
        (
            lambda: starter("ray", "image", "i", {}),
            "The ray runtime cannot start from an image; these can: daytona, docker, ",
        ),
        (
            lambda: starter("uv", "folder", ECHO_ENV, {"replicas": 2}),
            "The uv runtime does not take replicas; it takes env, port, python and "
            "startup_timeout_s.",
        ),
        (lambda: starter("local", "folder", ECHO_ENV.parent, {}), "no openenv.yaml"),
        (
            lambda: EchoEnv.from_docker_image("i", runtime="uv"),
            "The uv runtime cannot start from an image",
        ),
        (
            lambda: EchoEnv.from_hub("alice/x", runtime="ray"),
            "The ray runtime cannot start from a Space; these can: daytona, docker, ",
        ),
        (
            lambda: EchoEnv.from_hub("alice/x", runtime="docker", local=True),
            "local=True means runtime='local'",
        ),
        (
            lambda: EchoEnv.from_folder(ECHO_ENV, runtime="kubernetes").sync(),
            "pass image='REGISTRY/NAME:TAG'",
        ),
    ],
)
def test_what_cannot_start_is_refused_before_anything_starts(call: Any, message: str) -> None:
    with pytest.raises(ConfigurationError, match=re.escape(message)):
        call()


def test_a_runtime_of_its_own_module_serves_every_client_method(echo_everywhere: Any) -> None:
    with EchoEnv.from_folder(ECHO_ENV, runtime="echo_everywhere").sync() as env:
        assert env.call_tool("echo_message", message="folder") == "folder"
        assert env.provider is not None and env.provider.runtime == "echo_everywhere"
    with EchoEnv.from_docker_image(
        "any:image", runtime="echo_everywhere", env_vars={"A": "1"}
    ).sync() as env:
        assert env.call_tool("echo_message", message="image") == "image"
    with EchoEnv.from_hub("alice/anything", runtime="echo_everywhere", revision="v1").sync() as env:
        assert env.call_tool("echo_message", message="space") == "space"
    sources = [(source, target) for source, target, _ in echo_everywhere.started]
    assert sources == [
        ("folder", ECHO_ENV),
        ("image", "any:image"),
        ("space", SpaceRef("alice/anything", "v1")),
    ]
    assert echo_everywhere.started[1][2] == {"env": {"A": "1"}}  # env_vars, OpenEnv's name


def test_openenv_serve_runs_a_runtime_of_its_own_module_and_lists_the_builtin_ones() -> None:
    """``openenv serve --runtime NAME`` takes any registered runtime (the module registers it;
    nothing else changes), and its help describes each built-in one."""
    port = free_port()
    code = (
        "import sys; sys.path.insert(0, 'tests/runtimes'); import echo_everywhere; "
        "from openenv_hub_cli.main import main; main(sys.argv[1:])"
    )
    command = [sys.executable, "-c", code, "serve", str(ECHO_ENV), "--runtime", "echo_everywhere"]
    process = start_child(
        [*command, "--port", str(port)],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "COLUMNS": "200"},
    )
    try:
        seen = []
        assert process.stdout is not None
        for line in process.stdout:
            seen.append(line)
            if "Press Ctrl+C to stop." in line:
                break
        assert f"API   http://127.0.0.1:{port}" in "".join(seen), "".join(seen)
        process.send_signal(signal.SIGINT)
        output = "".join(seen) + process.communicate(timeout=60)[0]
    finally:
        end_child(process)
    assert process.returncode == 0 and "Stopped." in output, output
    assert not port_in_use("127.0.0.1", port)

    shown = subprocess.run(
        [sys.executable, "-m", "openenv_hub_cli.main", "serve", "--help"],
        capture_output=True, text=True, timeout=120, env={**os.environ, "COLUMNS": "400"},
        check=False,
    )  # fmt: skip
    text = " ".join(shown.stdout.replace("\u2502", " ").split())  # without the box's sides
    for name in runtime_names("folder"):
        if name != "local":
            assert f"{name}: {get_runtime(name).summary}" in text, name


def test_the_kubernetes_runtime_deploys_an_image_through_the_registry(tmp_path: Path) -> None:
    """From an image alone (no folder), the objects are made and applied: here to a cluster
    that does not answer, which is a ClusterError naming it."""
    pytest.importorskip("kubernetes")
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "c", "cluster": {"server": "https://127.0.0.1:9"}}],
        "users": [{"name": "u", "user": {"token": "t"}}],
        "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
        "current-context": "x",
    }
    path = tmp_path / "config"
    path.write_text(yaml.safe_dump(config))
    start = starter(
        "kubernetes", "image", "registry.example/echo-env:1", {"kubeconfig": path, "replicas": 2}
    )
    with pytest.raises(ClusterError, match=r"127\.0\.0\.1:9"):
        start()
