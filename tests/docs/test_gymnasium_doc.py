"""docs/gymnasium.md: the app, the Blackjack example and the error message, run as printed."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
from doc_blocks import doc_block

from openenv_hub import GenericEnvClient
from openenv_hub.errors import ActionValidationError

DOC = "docs/gymnasium.md"


def test_the_install_line_is_the_extra_the_error_names() -> None:
    assert doc_block(DOC, "install").code.strip() == 'pip install "openenv-hub[gymnasium]"'
    code = "import sys; sys.modules['gymnasium'] = None\nfrom openenv_hub.gymnasium import make_env\ntry:\n    make_env('Blackjack-v1')\nexcept ImportError as e:\n    print(e)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout
    assert doc_block(DOC, "install").code.strip().removeprefix("pip install ") in out


@pytest.fixture
def app_from_the_doc(serve: Any) -> Any:
    namespace: dict[str, Any] = {}
    exec(doc_block(DOC, "app").code, namespace)
    return serve(namespace["app"])


def test_the_blackjack_example_plays_the_same_hands_every_time(
    app_from_the_doc: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    code = doc_block(DOC, "blackjack").code.replace("http://127.0.0.1:8000", app_from_the_doc.url)
    counts = []
    for _ in range(2):
        exec(code, {})
        counts.append(capsys.readouterr().out.strip())
    assert counts[0] == counts[1]
    wins = int(re.fullmatch(r"won (\d+) of 200 hands", counts[0]).group(1))  # type: ignore[union-attr]
    assert 50 < wins < 150


async def test_the_out_of_bounds_message(app_from_the_doc: Any) -> None:
    expected = doc_block(DOC, "out of bounds").code.strip()
    async with GenericEnvClient(app_from_the_doc.url) as env:
        await env.reset()
        with pytest.raises(ActionValidationError) as error:
            await env.step({"action": 2})
    assert str(error.value).startswith(expected)


def test_the_one_line_serves_the_id_that_the_example_plays(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from serving import free_port

    from openenv_hub.runtimes.local import LocalProcessProvider
    from openenv_hub.transport.local_ports import wait_for_health

    (line,) = doc_block(DOC, "serve an id").lines
    port = str(free_port())
    command = shlex.split(line.replace("8000", port))
    assert command[:2] == ["openenv", "serve"]
    log = tempfile.TemporaryFile()  # noqa: SIM115 - closed by stop()
    process = subprocess.Popen(
        [str(Path(sys.executable).parent / "openenv"), *command[1:]],
        cwd=tmp_path,
        stdout=log,
        stderr=log,
    )
    server = LocalProcessProvider(process, f"http://127.0.0.1:{port}", log)
    try:
        wait_for_health(server.base_url, timeout_s=60, alive=server.running)
        exec(doc_block(DOC, "blackjack").code.replace("http://127.0.0.1:8000", server.base_url), {})
    finally:
        server.stop()
    assert re.fullmatch(r"won \d+ of 200 hands", capsys.readouterr().out.strip())
