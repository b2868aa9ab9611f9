"""docs/authoring.md: the samples it shows are what the command prints."""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from doc_blocks import REPO, doc_block

from openenv_hub.model.manifest import Manifest


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


def _manifest_table_fields() -> list[str]:
    """The fields named in the first column of the table under '## openenv.yaml'."""
    text = (REPO / "docs" / "authoring.md").read_text(encoding="utf-8")
    section = text.split("\n## openenv.yaml\n", 1)[1].split("\n## ", 1)[0]
    first_cells = re.findall(r"^\| ([^|]+) \|", section, re.M)
    return [name for cell in first_cells for name in re.findall(r"`(\w+)`", cell)]


def test_the_manifest_table_lists_every_field_once() -> None:
    listed = _manifest_table_fields()
    missing = sorted(set(Manifest.model_fields) - set(listed))
    unknown = sorted(set(listed) - set(Manifest.model_fields))
    assert missing == [], f"add to the table in docs/authoring.md: {missing}"
    assert unknown == [], f"not fields of Manifest: {unknown}"
    assert len(listed) == len(set(listed))
