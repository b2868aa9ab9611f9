"""The README's examples run as written."""

from __future__ import annotations

import asyncio
import importlib
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from doc_blocks import REPO, doc_block


def test_write_an_environment_example(
    tmp_path: Path, serve: Any, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    environment = doc_block("README.md", "write an environment").code
    client = doc_block("README.md", "talk to it").code
    (tmp_path / "guess.py").write_text(environment, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("guess", None)
    server = serve(importlib.import_module("guess").app)
    code = client.replace("http://127.0.0.1:8000", server.url)
    namespace: dict[str, Any] = {}
    exec(
        compile("async def _example():\n" + textwrap.indent(code, "    "), "README.md", "exec"),
        namespace,
    )
    asyncio.run(namespace["_example"]())
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("found it in") and int(out[0].split()[3]) <= 7
    assert out[1] == "correct"


@pytest.mark.slow
def test_the_first_command_serves_echo_with_its_ui() -> None:
    """The quick start's first command, after its install step (which the suite's own install did)."""
    import os
    import shlex
    import subprocess
    import time

    import httpx
    from serving import free_port

    install, serve = doc_block("README.md", "quick start").code.strip().split(" && ")
    assert install.startswith("pip install -e") and serve.startswith("openenv serve")
    port = free_port()
    argv = [*shlex.split(serve), "--port", str(port)]
    argv[0] = str(Path(sys.executable).with_name("openenv"))
    process = subprocess.Popen(
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
        process.terminate()
        process.communicate(timeout=10)  # also closes the pipe
    assert (
        os.path.isfile(REPO / "scripts" / "test.sh")
        and doc_block("README.md", "test command").code.strip() == "bash scripts/test.sh"
    )
