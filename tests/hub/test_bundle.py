"""What goes into a Space: ignore rules, fixed excludes, the Space card fix, the staged bundle."""

from __future__ import annotations

from pathlib import Path

import pytest

from openenv_hub.errors import EnvironmentValidationError
from openenv_hub.hub._bundle import stage_bundle
from openenv_hub.hub._card import fix_card
from openenv_hub.hub._diff import RemoteFile, diff_files, git_blob_id
from openenv_hub.hub._ignore import select_files


@pytest.mark.parametrize(
    ("pattern", "path", "is_dir", "ignored"),
    [
        ("*.log", "debug.log", False, True),
        ("*.log", "deep/in/debug.log", False, True),
        ("/top.txt", "top.txt", False, True),
        ("/top.txt", "sub/top.txt", False, False),
        ("out/", "pkg/out", True, True),
        ("out/", "pkg/out", False, False),
        ("docs/*.md", "docs/a.md", False, True),
        ("docs/*.md", "docs/sub/a.md", False, False),
        ("**/cache", "a/b/cache", True, True),
        ("a/**/z", "a/z", False, True),
        ("a/**/z", "a/b/c/z", False, True),
        ("data/**", "data/x/y.bin", False, True),
        ("file?.txt", "file1.txt", False, True),
        ("file?.txt", "file10.txt", False, False),
        ("[abc].py", "b.py", False, True),
        ("[!abc].py", "b.py", False, False),
        ("\\#hash", "#hash", False, True),
    ],
)
def test_gitignore_patterns(
    tmp_path: Path, pattern: str, path: str, is_dir: bool, ignored: bool
) -> None:
    _tree(tmp_path, {".gitignore": pattern + "\n", path + ("/file" if is_dir else ""): ""})
    selection = select_files(tmp_path)
    parts = path.split("/")
    left_out = {"/".join(parts[:i]) + "/" for i in range(1, len(parts) + 1)} | {path}
    assert bool(left_out & set(selection.ignored)) is ignored
    assert (path + ("/file" if is_dir else "") in selection.files) is not ignored


@pytest.mark.parametrize("line", ["", "   ", "# comment", "/"])
def test_blank_and_comment_lines_are_no_rules(tmp_path: Path, line: str) -> None:
    _tree(tmp_path, {".gitignore": line + "\n", "a.py": "", "sub/b.py": ""})
    assert select_files(tmp_path).files == [".gitignore", "a.py", "sub/b.py"]


def _tree(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def test_select_files_honours_nested_gitignores_negation_and_excludes(tmp_path: Path) -> None:
    _tree(
        tmp_path,
        {
            ".gitignore": "*.log\n!keep.log\nout/\n",
            "a.py": "",
            "x.log": "",
            "keep.log": "",
            "out/result.txt": "",
            "sub/.gitignore": "local.txt\n!x.log\n",
            "sub/local.txt": "",
            "sub/x.log": "",
            "sub/y.txt": "",
            "notes/draft.md": "",
        },
    )
    selection = select_files(tmp_path, exclude=["notes/"])
    assert selection.files == [
        ".gitignore",
        "a.py",
        "keep.log",
        "sub/.gitignore",
        "sub/x.log",
        "sub/y.txt",
    ]
    assert {"x.log", "out/", "sub/local.txt", "notes/"} <= set(selection.ignored)


def test_secrets_environments_caches_and_build_outputs_are_never_selected(tmp_path: Path) -> None:
    _tree(
        tmp_path,
        {
            ".gitignore": "!.env\n!.venv/\n",  # even when re-included on purpose
            ".env": "TOKEN=x",
            ".env.local": "TOKEN=y",
            ".env.example": "TOKEN=",
            ".venv/bin/python": "",
            ".git/config": "",
            "pkg/__pycache__/m.cpython-311.pyc": "",
            "pkg/m.py": "",
            "pkg.egg-info/PKG-INFO": "",
            "build/lib/m.py": "",
            "dist/pkg.whl": "",
            ".pytest_cache/v": "",
            ".openenv/wheels/old.whl": "",
        },
    )
    assert select_files(tmp_path).files == [".env.example", ".gitignore", "pkg/m.py"]


def test_gitignore_of_the_enclosing_work_tree_applies(tmp_path: Path) -> None:
    _tree(
        tmp_path,
        {
            ".gitignore": "*.tmp\nenvs/my_env/local/\n",
            "envs/my_env/a.py": "",
            "envs/my_env/b.tmp": "",
        },
    )
    (tmp_path / ".git").mkdir()
    _tree(tmp_path, {"envs/my_env/local/x": "", "envs/my_env/c.txt": ""})
    assert select_files(tmp_path / "envs" / "my_env").files == ["a.py", "c.txt"]


@pytest.mark.parametrize(
    ("readme", "changes"),
    [
        (None, ["README.md: created with a Space card"]),
        ("# Title\n", ["front matter: added (the README had none)"]),
        (
            "---\nsdk: gradio\napp_port: 7860\ntags: [rl]\ncolorFrom: '#00C9FF'\n---\nbody\n",
            [
                "sdk: 'gradio' -> 'docker'",
                "app_port: 7860 -> 8000",
                "base_path: added (/web)",
                "tags: added 'openenv', 'rl-environment'",
                "colorFrom: '#00C9FF' -> 'blue'",
            ],
        ),
        (
            "---\nsdk: docker\napp_port: 8000\nbase_path: /web\ntags:\n  - openenv\n"
            "  - rl-environment\n---\nbody\n",
            [],
        ),
    ],
)
def test_fix_card(readme: str | None, changes: list[str]) -> None:
    from openenv_hub.checks.static import read_front_matter

    text, made = fix_card(readme, port=8000, title="My Env")
    assert made == changes
    card = read_front_matter(text)
    assert card["sdk"] == "docker" and card["app_port"] == 8000 and "openenv" in card["tags"]
    if readme and readme.endswith("body\n"):
        assert text.endswith("---\nbody\n")
    if not changes:
        assert text == readme


def test_a_broken_front_matter_is_left_for_validation_to_report(tmp_path: Path) -> None:
    assert fix_card("---\nsdk: [\n---\n", port=8000, title="x") == ("---\nsdk: [\n---\n", [])


def test_stage_fixes_the_card_in_the_copy_only(echo_copy: Path, tmp_path: Path) -> None:
    readme = echo_copy / "README.md"
    original = readme.read_text(encoding="utf-8").replace("sdk: docker", "sdk: gradio")
    readme.write_text(original, encoding="utf-8")
    bundle = stage_bundle(echo_copy, tmp_path / "stage" / "echo_env", bundle_wheel=False)
    assert bundle.card_changes == ["sdk: 'gradio' -> 'docker'"]
    assert readme.read_text(encoding="utf-8") == original
    assert "sdk: docker" in (bundle.root / "README.md").read_text(encoding="utf-8")


def test_stage_leaves_out_the_manifest_excludes(echo_copy: Path, tmp_path: Path) -> None:
    (echo_copy / "data").mkdir()
    (echo_copy / "data" / "big.bin").write_bytes(b"\0" * 10)
    (echo_copy / "data" / "keep.txt").write_text("kept", encoding="utf-8")
    manifest = echo_copy / "openenv.yaml"
    manifest.write_text(
        manifest.read_text(encoding="utf-8") + "exclude: ['*.bin']\n", encoding="utf-8"
    )
    bundle = stage_bundle(echo_copy, tmp_path / "stage" / "echo_env", bundle_wheel=False)
    assert (bundle.root / "data" / "keep.txt").is_file()
    assert not (bundle.root / "data" / "big.bin").exists()


def test_stage_refuses_an_invalid_environment(echo_copy: Path, tmp_path: Path) -> None:
    (echo_copy / "Dockerfile").unlink()
    with pytest.raises(EnvironmentValidationError) as info:
        stage_bundle(echo_copy, tmp_path / "stage" / "echo_env", bundle_wheel=False)
    assert [r.name for r in info.value.results if not r.ok] == ["dockerfile"]
    assert f"no Dockerfile in {echo_copy} " in str(info.value)  # named where it is missing


def test_diff_compares_git_blob_ids_and_lfs_hashes(tmp_path: Path) -> None:
    import hashlib

    _tree(tmp_path, {"same.txt": "a", "changed.txt": "b", "new.txt": "c", "big.bin": "d"})
    remote = {
        "same.txt": RemoteFile("same.txt", git_blob_id(b"a")),
        "changed.txt": RemoteFile("changed.txt", git_blob_id(b"old")),
        "big.bin": RemoteFile("big.bin", "pointer", hashlib.sha256(b"d").hexdigest()),
        "gone.txt": RemoteFile("gone.txt", "x"),
        ".gitattributes": RemoteFile(".gitattributes", "y"),
    }
    changes = diff_files(tmp_path, ["same.txt", "changed.txt", "new.txt", "big.bin"], remote)
    assert changes.added == ["new.txt"]
    assert changes.changed == ["changed.txt"]
    assert changes.unchanged == ["big.bin", "same.txt"]
    assert changes.deleted == ["gone.txt"]  # .gitattributes is the Hub's


def test_only_transport_failures_count_as_network_errors() -> None:
    import socket

    import httpx

    from openenv_hub.hub._errors import hub_error, is_network_error

    assert is_network_error(httpx.ConnectError("refused"))
    assert is_network_error(ConnectionResetError())
    assert is_network_error(socket.gaierror("no such host"))
    assert not is_network_error(FileNotFoundError("x"))
    assert hub_error(FileNotFoundError("x"), endpoint="http://h") is None
