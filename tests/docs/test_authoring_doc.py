"""docs/authoring.md: the samples it shows are what the command prints."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from doc_blocks import REPO, doc_block


def test_the_manifest_error_sample_is_what_validate_prints(
    cli: Callable[..., Any], tmp_path: Path
) -> None:
    (sample,) = doc_block("docs/authoring.md", "manifest error").lines
    env = shutil.copytree(REPO / "envs" / "echo_env", tmp_path / "echo_env")
    manifest = env / "openenv.yaml"
    lines = manifest.read_text(encoding="utf-8").splitlines()
    line = int(sample.split("line ")[1].split(":")[0])
    assert lines[line - 1].startswith("port:")
    lines[line - 1] = lines[line - 1].replace("port:", "prot:")
    manifest.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = cli("serve", env)
    assert result.code == 1
    assert sample in result.err
