"""Every environment variable the library reads is read in its settings modules.

docs/architecture.md says so of ``openenv_hub.support.settings`` (the server's own variables are in
``openenv_hub.server.settings``). Everywhere else a read of ``os.environ`` or ``os.getenv``
fails here: a module asks the settings for a value by name (``named_variable``, ``is_true``,
a function per setting), and starts a child process's environment from ``environment()``.

A few modules write the environment, each for a reason listed in :data:`WRITES`: what they set
is read by code that cannot be handed an argument (a child process, the environment's own code,
the tests' code).
"""

from __future__ import annotations

import ast

import pytest
from import_graph import Module, modules

import openenv_hub.server.settings
import openenv_hub.support.settings

SETTINGS = {"openenv_hub.support.settings", "openenv_hub.server.settings"}

#: Modules that write os.environ (nothing else of it), and why.
WRITES = {
    "openenv_hub.server.app": "serve_app gives OPENENV_BIND_HOST to a server that runs in the "
    "reloader's child process, or to an app wrapping one of create_app's (no app to tell)",
    "openenv_hub.runtimes.ray_cluster": "RAY_USAGE_STATS_ENABLED=0, read by ray.init in this "
    "process and by the workers it starts",
    "openenv_hub.runtimes._ray_replica": "a Ray replica is the environment's process: its "
    "variables and secrets are set before the environment's code is imported",
    "openenv_hub.testing.pytest_plugin": "the plugin points the tests' process (HF_ENDPOINT, "
    "HF_TOKEN, ...) at LocalHub, and restores the variables afterwards",
}
_WRITING_METHODS = {"update", "pop", "setdefault", "__setitem__", "__delitem__", "clear"}


def _uses(source: str) -> list[tuple[int, str]]:
    """Each use of the process environment in ``source``: (line, "read" or "write")."""
    tree = ast.parse(source)
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "os":
            names = {alias.name for alias in node.names}
            if names & {"environ", "environb", "getenv", "getenvb"}:
                found.append((node.lineno, "read"))
        if not (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id == "os"
            and node.attr in ("environ", "environb", "getenv", "getenvb")
        ):
            continue
        parent = parents.get(node)
        writes = (
            isinstance(parent, ast.Subscript) and isinstance(parent.ctx, (ast.Store, ast.Del))
        ) or (isinstance(parent, ast.Attribute) and parent.attr in _WRITING_METHODS)
        found.append((node.lineno, "write" if writes else "read"))
    return found


def _library_uses() -> dict[str, list[tuple[int, str]]]:
    library: dict[str, Module] = modules()
    return {
        name: uses
        for name, module in sorted(library.items())
        if name not in SETTINGS and (uses := _uses(module.path.read_text(encoding="utf-8")))
    }


def test_no_module_but_the_settings_reads_the_environment() -> None:
    reads = {
        name: [line for line, kind in uses if kind == "read"]
        for name, uses in _library_uses().items()
        if any(kind == "read" for _, kind in uses)
    }
    assert reads == {}, (
        "read these through openenv_hub.support.settings (or openenv_hub.server.settings): a function "
        "per setting listed in its docstring, named_variable for a name a user chose, "
        "environment() for a child process's environment"
    )


def test_only_the_listed_modules_write_the_environment() -> None:
    writers = {name for name, uses in _library_uses().items() if uses}
    assert writers == set(WRITES), "a write needs a reason in WRITES, and a listed one must occur"


def _setting_literals() -> set[str]:
    """The variable names given as literals to the settings' readers anywhere in the library."""
    found = set()
    for module in modules().values():
        for node in ast.walk(ast.parse(module.path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in ("named_variable", "is_true")
                and node.args
                and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, str)
            ):
                found.add(node.args[0].value)
    return found


def test_every_variable_read_by_name_is_listed_in_a_settings_docstring() -> None:
    listed = (openenv_hub.support.settings.__doc__ or "") + (
        openenv_hub.server.settings.__doc__ or ""
    )
    assert {"HF_ENDPOINT", "RAY_ADDRESS", "OPENENV_MODE"} <= _setting_literals()
    missing = sorted(name for name in _setting_literals() if f"``{name}``" not in listed)
    assert missing == [], "list these in the docstring of openenv_hub.support.settings"


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        ("import os\nos.environ.get('A')\n", [(2, "read")]),
        ("import os\nx = os.getenv('A')\n", [(2, "read")]),
        ("import os\nenv = {**os.environ}\n", [(2, "read")]),
        ("from os import environ\n", [(1, "read")]),
        ("import os\nos.environ['A'] = '1'\ndel os.environ['A']\n", [(2, "write"), (3, "write")]),
        ("import os\nos.environ.update({})\nos.environ.setdefault('A', '')\n",
         [(2, "write"), (3, "write")]),
        ("import os\nos.environ['A']\n", [(2, "read")]),
    ],
)  # fmt: skip
def test_the_scan_tells_reads_from_writes(code: str, expected: list[tuple[int, str]]) -> None:
    assert sorted(_uses(code)) == expected


def test_the_settings_read_what_they_say(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENENV_BUILD_ARGS", "A=1  B=2")
    monkeypatch.setenv("OPENENV_TRUST_REMOTE_CODE", "yes")
    monkeypatch.setenv("ENABLE_WEB_INTERFACE", "on")
    monkeypatch.setenv("HF_ENDPOINT", "")
    assert openenv_hub.support.settings.build_args() == ["A=1", "B=2"]
    assert openenv_hub.support.settings.trusts_remote_code()
    assert openenv_hub.server.settings.web_interface()
    assert openenv_hub.support.settings.hub_endpoint() is None  # empty is unset
    assert openenv_hub.support.settings.environment()["OPENENV_BUILD_ARGS"] == "A=1  B=2"
