"""openenv.yaml: the model, its errors (with lines and suggestions), and its published schema."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from openenv_hub.model.manifest import (
    Manifest,
    ManifestError,
    load_manifest,
    manifest_schema,
    parse_manifest,
)

REPO = Path(__file__).resolve().parents[1]

OPENENV_TEMPLATE = """\
spec_version: 1
name: my_game_env
type: space
runtime: fastapi
app: server.app:app
port: 8000
"""


def test_the_echo_manifest_loads() -> None:
    manifest = load_manifest(REPO / "envs" / "echo_env")
    assert manifest.name == "echo_env"
    assert manifest.app_path == "echo_env.server.app:app"
    assert manifest.client == "echo_env.client:EchoEnv"


def test_openenv_manifests_load() -> None:
    manifest = parse_manifest(OPENENV_TEMPLATE)
    assert (manifest.type, manifest.runtime, manifest.app_path) == (
        "space",
        "fastapi",
        "server.app:app",
    )
    legacy = parse_manifest("name: coding_env\naction: CodeAction\nobservation: CodeObservation\n")
    assert legacy.action == "CodeAction"
    # openenv 0.10's template adds a validation policy block; it is kept as is.
    current = parse_manifest("name: my_env\nversion: 0.1.0\nvalidation:\n  reward_range: [0, 1]\n")
    assert current.validation == {"reward_range": [0, 1]}


def test_an_unknown_field_suggests_the_close_one_once() -> None:
    with pytest.raises(ManifestError) as info:
        parse_manifest("name: my_env\nprot: 8000\n", path=Path("openenv.yaml"))
    assert str(info.value).count("Did you mean 'port'?") == 1
    assert info.value.hint.startswith("Rename 'prot' to 'port'.")
    assert "did you mean" not in info.value.hint.lower()


def test_defaults() -> None:
    manifest = Manifest(name="my_env")
    assert manifest.app_path == "my_env.server.app:app"
    assert manifest.port == 8000
    assert parse_manifest(manifest.dump()) == manifest


@pytest.mark.parametrize(
    ("text", "line", "field", "words"),
    [
        ("name: my_env\nport: [8000\n", 3, None, ["invalid YAML"]),
        ("name: my_env\nprot: 8000\n", 2, "prot", ["unknown field 'prot'", "Did you mean 'port'?"]),
        ("name: my_env\n\nport: eighty\n", 3, "port", ["'port'", "eighty", "listens on"]),
        ("name: my-env\n", 1, "name", ["not a Python identifier", "my_env"]),
        ("name: my_env\nsecrets:\n  API_KEY: hunter2\n", 2, "secrets", ["names only"]),
        ("name: my_env\napp: 'not a path'\n", 2, "app", ["not an import path"]),
    ],
)
def test_errors_name_the_field_and_line(
    text: str, line: int, field: str | None, words: list[str]
) -> None:
    with pytest.raises(ManifestError) as info:
        parse_manifest(text, path=Path("openenv.yaml"))
    assert info.value.line == line
    assert info.value.field == field
    for word in words:
        assert word in str(info.value)
    assert f"line {line}" in str(info.value)
    assert "hunter2" not in str(info.value)


def test_missing_name_and_non_mapping() -> None:
    with pytest.raises(ManifestError, match="missing required field 'name'"):
        parse_manifest("port: 8000\n")
    with pytest.raises(ManifestError, match="expected a mapping"):
        parse_manifest("- a\n- b\n")


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ManifestError, match="not found") as info:
        load_manifest(tmp_path)
    assert "openenv init" in info.value.hint


def test_published_schema_matches_the_model() -> None:
    published = json.loads((REPO / "docs" / "manifest.schema.json").read_text(encoding="utf-8"))
    assert published == manifest_schema(), (
        'docs/manifest.schema.json is stale; regenerate it with: python -c "from openenv_hub.'
        "manifest import manifest_schema_text as t; open('docs/manifest.schema.json','w').write(t())\""
    )


def test_a_taskset_is_files_or_a_generator_never_both() -> None:
    files = parse_manifest(
        "name: e\ntaskset:\n  source: hf://datasets/o/t\n  splits: [test]\n  key: word\n"
    )
    assert files.taskset is not None
    assert (files.taskset.source, files.taskset.splits, files.taskset.key) == (
        "hf://datasets/o/t", ["test"], "word",
    )  # fmt: skip
    made = parse_manifest("name: e\ntaskset:\n  generator: e.tasks:make\n  size: 5\n")
    assert made.taskset is not None and (made.taskset.size, made.taskset.split) == (5, "test")
    assert parse_manifest(made.dump()) == made
    for text, words in [
        ("name: e\ntaskset:\n  size: 5\n", "give exactly one of 'source'"),
        ("name: e\ntaskset:\n  source: t\n  generator: e:f\n", "give exactly one of 'source'"),
        ("name: e\ntaskset:\n  generator: e.tasks\n", "not a function path"),
        (
            "name: e\n\ntaskset:\n  sorce: t\n",
            "unknown field 'taskset.sorce'. Did you mean 'source'?",
        ),
    ]:
        with pytest.raises(ManifestError, match=re.escape(words)) as info:
            parse_manifest(text, path=Path("openenv.yaml"))
        assert info.value.line == text.split("\n").index("taskset:") + 1
