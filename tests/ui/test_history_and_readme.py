"""History rows and JSONL, README lookup and front matter."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
from echo_env.server.environment import EchoEnvironment
from ui_envs import TypedEchoEnvironment

from openenv_hub.support.folder_imports import import_from_folder
from openenv_hub.ui.history import HistoryEntry, table_rows, to_jsonl
from openenv_hub.ui.readme import find_readme, strip_front_matter


def entry(**changes):
    values = dict(
        step=1,
        kind="step",
        action={"message": "hi"},
        reward=0.2,
        done=False,
        observation={"echoed_message": "hi"},
        timestamp=0.0,
        duration_ms=1.4,
    )
    return HistoryEntry(**{**values, **changes})


def test_table_rows_label_each_kind():
    rows = table_rows(
        [
            entry(step=0, kind="reset", action={"seed": 3}, reward=None),
            entry(),
            entry(kind="tool", tool_name="echo", action={"message": "x" * 200}),
        ]
    )
    assert [row[:4] for row in rows[:2]] == [
        [0, "reset(seed=3)", "", "false"],
        [1, '{"message": "hi"}', 0.2, "false"],
    ]
    assert rows[2][1].startswith('echo({"message": "xxx') and len(rows[2][1]) == 120
    assert rows[1][4].endswith("(1 ms)")


def test_jsonl_has_one_record_per_entry():
    lines = to_jsonl([entry(), entry(kind="tool", tool_name="echo")]).splitlines()
    first, second = map(json.loads, lines)
    assert first["time"] == "1970-01-01T00:00:00+00:00"
    assert first["action"] == {"message": "hi"} and "tool_name" not in first
    assert second["tool_name"] == "echo"
    assert to_jsonl([]) == ""


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("---\ntitle: Echo\nsdk: docker\n---\n\n# Echo\n", "# Echo\n"),
        ("\ufeff---\r\ntitle: x\r\n---\r\nbody", "body"),
        ("# No front matter\n---\nrule\n", "# No front matter\n---\nrule\n"),
    ],
)
def test_strip_front_matter(text, expected):
    assert strip_front_matter(text) == expected


def test_readme_is_found_next_to_openenv_yaml(monkeypatch):
    monkeypatch.delenv("ENV_README_PATH", raising=False)
    assert "# Echo environment" in find_readme(EchoEnvironment)
    assert find_readme(TypedEchoEnvironment) is None  # tests/ui has no openenv.yaml
    assert find_readme(EchoEnvironment, "given") == "given"


def test_readme_is_the_defining_folders_when_a_copy_of_its_package_was_imported_since(
    monkeypatch, tmp_path
):
    # A quality check or a push of a copied echo_env in the same process leaves the copy in
    # sys.modules under the same names; the class still came from the original folder.
    monkeypatch.delenv("ENV_README_PATH", raising=False)
    copy = tmp_path / "echo_copy"
    shutil.copytree(Path(sys.modules["echo_env"].__file__).parents[1], copy)
    (copy / "README.md").unlink()
    before = {n: m for n, m in sys.modules.items() if n.split(".")[0] == "echo_env"}
    path_before = list(sys.path)
    try:
        import_from_folder("echo_env.server.environment", copy)
        assert sys.modules["echo_env.server.environment"].EchoEnvironment is not EchoEnvironment
        assert "# Echo environment" in find_readme(EchoEnvironment)
    finally:
        for name in [n for n in sys.modules if n.split(".")[0] == "echo_env"]:
            del sys.modules[name]
        sys.modules.update(before)
        sys.path[:] = path_before


def test_readme_from_the_environment_variable(monkeypatch, tmp_path):
    (tmp_path / "README.md").write_text("from env var")
    monkeypatch.setenv("ENV_README_PATH", str(tmp_path / "README.md"))
    assert find_readme(TypedEchoEnvironment) == "from env var"
