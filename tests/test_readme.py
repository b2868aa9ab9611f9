"""The README's examples run as written."""

from __future__ import annotations

import asyncio
import importlib
import re
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"


def python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.S)


def test_write_an_environment_example(
    tmp_path: Path, serve: Any, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    environment, client = python_blocks()[:2]
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
