"""The README's examples run as written."""

from __future__ import annotations

import re
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
from doc_blocks import REPO, doc_block


def test_write_an_environment_example_runs_as_saved_scripts(tmp_path: Path) -> None:
    """Both blocks saved as files, the server started and the client run as the README says."""
    import shlex
    import subprocess

    from serving import free_port

    from openenv_hub.runtimes.local import LocalProcessProvider
    from openenv_hub.transport.local_ports import wait_for_health

    environment = doc_block("README.md", "write an environment").code
    client = doc_block("README.md", "talk to it").code
    assert environment.startswith("# guess.py\n") and client.startswith("# play.py\n")
    (tmp_path / "guess.py").write_text(environment, encoding="utf-8")
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    start = re.search(
        r"start the server with `(openenv serve [^`]+)`, then run\n`(python play.py)`", readme
    )
    assert start, "the README says how to start the server and the client"
    port = str(free_port())
    (tmp_path / "play.py").write_text(client.replace("8000", port), encoding="utf-8")
    bin_dir = Path(sys.executable).parent
    server = shlex.split(start.group(1).replace("8000", port))
    log = tempfile.TemporaryFile()  # noqa: SIM115 - closed by stop()
    process = subprocess.Popen(
        [str(bin_dir / server[0]), *server[1:]], cwd=tmp_path, stdout=log, stderr=log
    )
    provider = LocalProcessProvider(process, f"http://127.0.0.1:{port}", log)
    try:
        wait_for_health(provider.base_url, timeout_s=60, alive=provider.running)
        done = subprocess.run(
            [sys.executable, *shlex.split(start.group(2))[1:]],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    finally:
        provider.stop()
    assert done.returncode == 0, done.stderr
    out = done.stdout.splitlines()
    assert out[0].startswith("found it in") and int(out[0].split()[3]) <= 7
    assert out[1] == "correct"


@pytest.mark.slow
def test_the_first_command_serves_echo_with_its_ui() -> None:
    """The quick start's first command, after its install step (which the suite's own install did)."""
    import os
    import shlex
    import signal
    import subprocess
    import time

    import httpx
    from child_processes import end_child, start_child
    from serving import free_port

    install, serve = doc_block("README.md", "quick start").code.strip().split(" && ")
    assert install.startswith("pip install -e") and serve.startswith("openenv serve")
    port = free_port()
    argv = [*shlex.split(serve), "--port", str(port)]
    argv[0] = str(Path(sys.executable).with_name("openenv"))
    process = start_child(
        argv, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/web/", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert process.poll() is None and time.monotonic() < deadline, (
                process.stdout.read() if process.stdout else ""
            )
            time.sleep(0.2)
        assert httpx.get(f"http://127.0.0.1:{port}/health").json() == {"status": "healthy"}
    finally:
        end_child(process, signal.SIGTERM, timeout_s=10)
    assert (
        os.path.isfile(REPO / "scripts" / "test.sh")
        and doc_block("README.md", "test command").code.strip() == "bash scripts/test.sh"
    )


async def test_the_example_environment_stepped_before_reset_is_told_to_reset(serve: Any) -> None:
    """The README's environment keeps no state until reset: the server says so, as the README
    does, instead of the AttributeError its step would raise."""
    import httpx

    from openenv_hub import GenericEnvClient
    from openenv_hub.errors import ResetRequiredError

    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert '`ResetRequiredError` ("call reset() first")' in readme
    namespace: dict[str, Any] = {"__name__": "guess"}
    exec(
        compile(doc_block("README.md", "write an environment").code, "guess.py", "exec"), namespace
    )
    server = serve(namespace["app"])
    async with GenericEnvClient(server.url) as env:
        with pytest.raises(ResetRequiredError, match=r"call reset\(\) first"):
            await env.step({"number": 50})
        with pytest.raises(ResetRequiredError):
            await env.state()
        await env.reset(seed=7)
        assert (await env.step({"number": 7})).reward == 1.0
    async with httpx.AsyncClient(base_url=server.url) as http:
        assert (await http.get("/metadata")).json()["reward_range"] == [0.0, 1.0]
