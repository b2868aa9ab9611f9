"""``openenv validate``: good environments pass every level; each broken one fails the right check."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
ECHO = REPO / "envs" / "echo_env"


def _edit(relative: str, old: str, new: str) -> Callable[[Path], None]:
    def apply(root: Path) -> None:
        path = root / relative
        text = path.read_text(encoding="utf-8")
        assert re.search(old, text, flags=re.M), f"{old!r} not in {relative}"
        path.write_text(re.sub(old, new, text, count=1, flags=re.M), encoding="utf-8")

    return apply


def _remove(relative: str) -> Callable[[Path], None]:
    return lambda root: (root / relative).unlink()


# One broken fixture per bad input: (id, change, level, failing check, words in its message)
BROKEN = [
    ("no-manifest", _remove("openenv.yaml"), "static", "manifest", "not found"),
    ("yaml-syntax", _edit("openenv.yaml", r"^port: 8000", "port: [8000"), "static", "manifest", "line 9"),
    ("unknown-field", _edit("openenv.yaml", r"^port:", "prot:"), "static", "manifest", "Did you mean 'port'"),
    ("wrong-type", _edit("openenv.yaml", r"^port: 8000", "port: eighty"), "static", "manifest", "valid integer"),
    ("no-front-matter", _edit("README.md", r"\A---\n(.|\n)*?\n---\n", ""), "static", "space_card", "no front matter"),
    ("bad-card-yaml", _edit("README.md", r"^sdk: docker", "sdk: [docker"), "static", "space_card", "not valid YAML"),
    ("card-port", _edit("README.md", r"^app_port: 8000", "app_port: 7860"), "static", "space_card", "app_port"),
    ("card-sdk", _edit("README.md", r"^sdk: docker", "sdk: gradio"), "static", "space_card", "sdk"),
    ("card-tag", _edit("README.md", r"^  - openenv", "  - other"), "static", "space_card", "openenv"),
    ("no-base-image", _edit("Dockerfile", r"^ARG BASE_IMAGE=.*\nFROM .*", "FROM python:3.11-slim"), "static", "dockerfile", "BASE_IMAGE"),
    ("shell-cmd", _edit("Dockerfile", r"^CMD .*", "CMD uvicorn my_env.server.app:app"), "static", "dockerfile", "shell form"),
    ("no-dependency", _edit("pyproject.toml", r"^dependencies = .*", "dependencies = []"), "static", "pyproject", "openenv-hub"),
    ("no-server-script", _edit("pyproject.toml", r"^my-env-server = .*", ""), "static", "pyproject", "server script"),
    ("missing-client", _remove("my_env/client.py"), "static", "layout", "client.py"),
    ("app-not-importable", _edit("openenv.yaml", r"^app: .*", "app: my_env.server.nope:app"), "import", "app_import", "does not import"),
    ("app-import-error", _edit("my_env/server/app.py", r"^from openenv_hub import", "from openenv_hub import nothing_here,"), "import", "app_import", "nothing_here"),
    ("bad-action-class", _edit("openenv.yaml", r"^action: .*", "action: my_env.models:Nope"), "import", "classes", "Nope"),
    ("app-exits", _edit("my_env/server/app.py", r"^app = ", "raise SystemExit(3)\napp = "), "import", "app_import", "SystemExit"),
    ("reset-raises", _edit("my_env/server/environment.py", r"^        self._state = State\(episode_id=episode_id", "        raise RuntimeError('boom')\n        self._state = State(episode_id=episode_id"), "runtime", "reset", "500"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("change", "level", "check", "words"), [b[1:] for b in BROKEN], ids=[b[0] for b in BROKEN]
)
def test_a_broken_env_fails_the_right_check(
    cli: Callable[..., Any],
    new_env: Callable[[], Path],
    change: Callable[[Path], None],
    level: str,
    check: str,
    words: str,
) -> None:
    root = new_env()
    change(root)
    result = cli("validate", root, "--level", level, "--json")
    assert result.code == 1
    report = json.loads(result.out)
    failed = [c for c in report["checks"] if not c["ok"]]
    assert failed[0]["name"] == check, failed
    assert words in failed[0]["message"]
    assert level == "runtime" or len(failed) == 1
    assert "Traceback" not in result.err


@pytest.mark.parametrize("level", ["static", "import", "runtime"])
@pytest.mark.parametrize("env", ["generated", "echo"])
def test_good_envs_pass(cli: Callable[..., Any], rendered_env: Path, env: str, level: str) -> None:
    path = rendered_env if env == "generated" else ECHO
    result = cli("validate", path, "--level", level, "--json")
    report = json.loads(result.out)
    assert result.code == 0, [c for c in report["checks"] if not c["ok"]]
    names = {c["name"] for c in report["checks"]}
    assert "dockerfile" in names
    assert ("app_import" in names) == (level != "static")
    assert ("websocket" in names) == (level == "runtime")


def test_the_table_names_failed_checks(
    cli: Callable[..., Any], new_env: Callable[[], Path]
) -> None:
    root = new_env()
    _remove("my_env/client.py")(root)
    result = cli("validate", root, "--level", "static")
    assert result.code == 1
    assert "FAIL" in result.out and "Failed: layout" in result.out


def _renamed(root: Path) -> Path:
    """The environment in a folder not named after its package (as 'openenv pull' makes)."""
    moved = root.with_name("my_copy")
    root.rename(moved)
    return moved


@pytest.mark.parametrize(
    ("change", "check", "words"),
    [
        (_edit("openenv.yaml", r"^port:", "prot:"), "manifest", "unknown field 'prot'"),
        (_edit("openenv.yaml", r"^name: my_env", "name: my_envx"), "layout", "my_envx"),
    ],
    ids=["typo", "renamed"],
)
def test_a_manifest_mistake_is_the_one_failure_and_names_the_folder(
    cli: Callable[..., Any],
    new_env: Callable[[], Path],
    change: Callable[[Path], None],
    check: str,
    words: str,
) -> None:
    root = _renamed(new_env())
    change(root)
    result = cli("validate", root, "--level", "static", "--json")
    assert result.code == 1
    failed = [c for c in json.loads(result.out)["checks"] if not c["ok"]]
    assert [c["name"] for c in failed] == [check], failed
    text = failed[0]["message"] + failed[0]["hint"]
    assert words in text and str(root) in text
    assert text.lower().count("did you mean") == 1, text
    if check == "layout":
        assert f"{root}/my_envx is not a folder" in text and "'name: my_env'" in text


def test_a_missing_file_is_named_with_its_folder(
    cli: Callable[..., Any], new_env: Callable[[], Path]
) -> None:
    root = _renamed(new_env())
    _remove("my_env/client.py")(root)
    result = cli("validate", root, "--level", "static", "--json")
    (failed,) = [c for c in json.loads(result.out)["checks"] if not c["ok"]]
    assert failed["message"] == f"missing my_env/client.py in {root}"


def test_the_table_says_a_failures_hint_first(
    cli: Callable[..., Any], new_env: Callable[[], Path]
) -> None:
    root = new_env()
    broken = root / "my_env" / "server" / "app.py"
    broken.write_text(broken.read_text() + "\ndef broken(:\n")
    for name in [m for m in sys.modules if m.split(".")[0] == "my_env"]:
        del sys.modules[name]
    result = cli("validate", root, "--level", "import")
    assert result.code == 1
    row = result.out[result.out.index("app_import") :]
    assert row.index("hint:") < row.index("does not import") < row.index("def broken(:")


def test_a_missing_path(cli: Callable[..., Any], tmp_path: Path) -> None:
    result = cli("validate", tmp_path / "nope")
    assert result.code == 1
    assert "does not exist" in result.err and "Traceback" not in result.err


def test_url_of_a_running_echo_server(cli: Callable[..., Any], echo_server: Any) -> None:
    result = cli("validate", echo_server.url, "--json")
    report = json.loads(result.out)
    assert result.code == 0, report
    names = [c["name"] for c in report["checks"]]
    openenv_criteria = [
        "openapi_version_available", "health_endpoint", "metadata_endpoint",
        "schema_endpoint", "mcp_endpoint", "mode_endpoint_consistency",
    ]  # fmt: skip
    assert all(name in names for name in openenv_criteria)
    assert {"reset", "step", "websocket"} <= set(names)


def test_url_that_does_not_answer(cli: Callable[..., Any]) -> None:
    from openenv_hub.transport.local_ports import free_port

    result = cli("validate", f"http://127.0.0.1:{free_port()}", "--json")
    assert result.code == 1
    report = json.loads(result.out)
    assert [c["name"] for c in report["checks"]] == ["reachable"]
    assert "nothing answers" in report["checks"][0]["message"]


def test_url_of_a_server_that_is_not_openenv(
    cli: Callable[..., Any], serve: Callable[..., Any]
) -> None:
    from starlette.applications import Starlette
    from starlette.responses import PlainTextResponse
    from starlette.routing import Route

    server = serve(Starlette(routes=[Route("/", lambda request: PlainTextResponse("hello"))]))
    result = cli("validate", server.url, "--json")
    assert result.code == 1
    failed = {c["name"] for c in json.loads(result.out)["checks"] if not c["ok"]}
    assert {"openapi_version_available", "health_endpoint", "schema_endpoint"} <= failed
