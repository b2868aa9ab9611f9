"""At 80 columns (a terminal's default width) every command's help wraps what does not fit
its columns (a URL, a long option name) onto the next line; nothing is cut with an ellipsis."""

from __future__ import annotations

import os
import subprocess
import sys

HELP_OF_EVERY_COMMAND = """
import contextlib, sys, typer
from openenv_hub_cli.main import app, main

def paths(command, path=()):
    subs = getattr(command, "commands", {})
    if not subs:
        yield path
    for name, sub in subs.items():
        yield from paths(sub, (*path, name))

for path in paths(typer.main.get_command(app)):
    print("=== " + " ".join(path), flush=True)
    with contextlib.suppress(SystemExit):
        main([*path, "-h"])
    sys.stdout.flush()
"""


def test_help_at_80_columns_wraps_and_cuts_nothing() -> None:
    env = {**os.environ, "COLUMNS": "80", "LINES": "24", "TERMINAL_WIDTH": ""}
    env.pop("TERMINAL_WIDTH")
    done = subprocess.run(
        [sys.executable, "-c", HELP_OF_EVERY_COMMAND],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    sections = done.stdout.split("=== ")[1:]
    assert len(sections) > 20 and all("Usage:" in section for section in sections)
    cut = {
        section.splitlines()[0]: [line for line in section.splitlines() if "…" in line]
        for section in sections
        if "…" in section
    }
    assert cut == {}
    assert max(len(line) for line in done.stdout.splitlines()) <= 80
    serve = next(s for s in sections if s.startswith("serve\n"))
    assert "--max-concurrent-" in serve
