"""Run the ``openenv`` command in-process, through its error boundary, and capture its output."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pytest

from openenv_hub_cli.main import main


@dataclass
class CliResult:
    code: int
    out: str
    err: str

    @property
    def text(self) -> str:
        return self.out + self.err


@pytest.fixture
def cli(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> Callable[..., CliResult]:
    """``cli("validate", path)`` runs ``openenv validate path`` and returns code and output."""
    monkeypatch.setenv("COLUMNS", "250")

    def run(*args: object) -> CliResult:
        capsys.readouterr()
        with pytest.raises(SystemExit) as exit_info:
            main([str(arg) for arg in args])
        captured = capsys.readouterr()
        return CliResult(int(exit_info.value.code or 0), captured.out, captured.err)

    return run
