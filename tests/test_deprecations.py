"""Every deprecated name says the version that removes it, and CHANGELOG.md lists it.

The old names are found in the source: each call of :func:`openenv_hub.support.deprecation.warn_moved`,
:func:`~openenv_hub.support.deprecation.warn_renamed` or
:func:`~openenv_hub.support.deprecation.deprecation_message`, with the old name and ``removed_in`` as
literals (``__name__`` for a module kept under its old name), and the old module names the
finder of :mod:`openenv_hub.support.moved_modules` answers, with :func:`removed_in`'s version
for each. No other code of the library
issues a ``DeprecationWarning``, so nothing deprecated escapes this list.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from dataclasses import dataclass

import pytest
from import_graph import REPO, Module, modules

import openenv_hub

HELPERS = {"warn_moved", "warn_renamed", "deprecation_message"}
ROW = re.compile(r"^\| `(?P<old>[^`]+)` \| .+ \| (?P<version>\d+\.\d+) \|$", re.M)


@dataclass(frozen=True)
class Deprecated:
    old: str
    removed_in: str
    module: str
    line: int
    moved_module: bool  # a module kept under its old name (warn_moved(__name__, ...))


def _calls(module: Module) -> list[ast.Call]:
    tree = ast.parse(module.path.read_text(encoding="utf-8"))
    return [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in HELPERS
    ]


def _deprecated() -> list[Deprecated]:
    found, unreadable = [], []
    for name, module in sorted(modules().items()):
        if name in ("openenv_hub.support.deprecation", "openenv_hub.support.moved_modules"):
            continue  # the helpers themselves, and the finder's table (read below)
        for call in _calls(module):
            first = call.args[0] if call.args else None
            removed = {k.arg: k.value for k in call.keywords}.get("removed_in")
            is_module = isinstance(first, ast.Name) and first.id == "__name__"
            old = name if is_module else getattr(first, "value", None)
            version = getattr(removed, "value", None)
            if not isinstance(old, str) or not isinstance(version, str):
                unreadable.append(f"{name}:{call.lineno}")
                continue
            moved = is_module and call.func.id == "warn_moved"  # type: ignore[attr-defined]
            found.append(Deprecated(old, version, name, call.lineno, moved))
    assert unreadable == [], f"give the old name and removed_in as literals: {unreadable}"
    return found + _answered_by_the_finder()


def _answered_by_the_finder() -> list[Deprecated]:
    from openenv_hub.support import moved_modules

    return [
        Deprecated(old, moved_modules.removed_in(old), moved_modules.__name__, 0, True)
        for old in moved_modules.MOVED
    ]


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split(".")[:2])


def _changelog_deprecated() -> dict[str, str]:
    """The rows of the Unreleased "Deprecated" table of CHANGELOG.md: old name -> version."""
    text = (REPO / "CHANGELOG.md").read_text(encoding="utf-8")
    unreleased = text.split("\n## [Unreleased]\n", 1)[1].split("\n## ", 1)[0]
    table = unreleased.split("\n### Deprecated\n", 1)[1].split("\n### ", 1)[0]
    return {row["old"]: row["version"] for row in ROW.finditer(table)}


def test_every_deprecation_is_found() -> None:
    """The scan sees the deprecations the library is known to keep (a guard on the scan)."""
    olds = {d.old for d in _deprecated()}
    assert {"openenv_hub.images", "openenv_hub.providers.swarm", "openenv_hub.run"} <= olds
    assert sum(d.moved_module for d in _deprecated()) >= 17


def test_every_deprecation_names_a_removal_version_after_this_one() -> None:
    current = _version(openenv_hub.__version__)
    late = [
        f"{d.module}:{d.line} {d.old} (removed_in={d.removed_in!r})"
        for d in _deprecated()
        if not re.fullmatch(r"\d+\.\d+", d.removed_in) or _version(d.removed_in) <= current
    ]
    assert late == [], (
        f"removed_in must be a later minor version than {openenv_hub.__version__} "
        f"(remove the old name when that version comes): {late}"
    )


def test_every_deprecation_is_listed_in_the_changelog() -> None:
    in_code = {d.old: d.removed_in for d in _deprecated()}
    assert _changelog_deprecated() == in_code, (
        "CHANGELOG.md's Deprecated table (| `old` | new | version |) and the warnings differ"
    )


def test_no_other_code_issues_a_deprecation_warning() -> None:
    direct = [
        f"{name}:{node.lineno}"
        for name, module in sorted(modules().items())
        if name != "openenv_hub.support.deprecation"
        for node in ast.walk(ast.parse(module.path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Name) and node.id == "DeprecationWarning"
    ]
    assert direct == [], (
        f"warn through openenv_hub.support.deprecation (it names a version): {direct}"
    )


def test_every_module_kept_under_its_old_name_warns_with_its_removal_version() -> None:
    moved = [d for d in _deprecated() if d.moved_module]
    code = (
        "import importlib, warnings\n"
        "with warnings.catch_warnings(record=True) as caught:\n"
        "    warnings.simplefilter('always')\n"
        f"    for name in {[d.old for d in moved]!r}:\n"
        "        importlib.import_module(name)\n"
        "print(repr([str(w.message) for w in caught if w.category is DeprecationWarning]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    messages = ast.literal_eval(done.stdout.strip().splitlines()[-1])
    for d in moved:
        said = [m for m in messages if m.startswith(f"{d.old} is deprecated ")]
        assert said, f"importing {d.old} gave no DeprecationWarning"
        assert f"will be removed in {d.removed_in}:" in said[0], said[0]


@pytest.mark.parametrize(
    ("function", "expected"),
    [
        ("warn_moved", "a.b is deprecated and will be removed in 0.9: import c.d instead."),
        ("warn_renamed", "a.b is deprecated and will be removed in 0.9: use c.d instead."),
    ],
)
def test_the_warning_names_the_removal_version(function: str, expected: str) -> None:
    from openenv_hub.support import deprecation

    with pytest.warns(DeprecationWarning) as caught:
        getattr(deprecation, function)("a.b", "c.d", removed_in="0.9")
    assert [str(w.message) for w in caught] == [expected]
