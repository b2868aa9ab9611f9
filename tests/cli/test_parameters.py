"""Every parameter of every command is declared as ``Annotated[type, typer.Option(...)]`` (or
``typer.Argument``), its default a plain Python default: no ``typer.Option`` call as a default
value, which needed a ``# noqa: B008`` and hid the default from type checkers."""

from __future__ import annotations

import ast
from pathlib import Path

CLI = Path(__file__).resolve().parents[2] / "cli" / "openenv_hub_cli"


def _is_typer_parameter(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == "typer"
        and node.func.attr in ("Option", "Argument")
    )


def _outside_annotated(tree: ast.AST) -> list[int]:
    """The lines of ``typer.Option``/``typer.Argument`` calls not inside ``Annotated[...]``."""
    inside: set[int] = set()
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Subscript)
            and isinstance(node.value, ast.Name)
            and node.value.id == "Annotated"
        ):
            elements = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
            inside.update(id(e) for e in elements if _is_typer_parameter(e))
    return [
        node.lineno
        for node in ast.walk(tree)
        if _is_typer_parameter(node) and id(node) not in inside
    ]


def test_every_typer_parameter_is_annotated() -> None:
    found = {
        path.name: lines
        for path in sorted(CLI.glob("*.py"))
        if (lines := _outside_annotated(ast.parse(path.read_text(encoding="utf-8"))))
    }
    assert found == {}, "declare these as Annotated[type, typer.Option(...)] = default"


def test_no_b008_exception_is_left() -> None:
    found = [p.name for p in sorted(CLI.glob("*.py")) if "noqa: B008" in p.read_text("utf-8")]
    assert found == []


def test_the_check_sees_a_default_style_parameter() -> None:
    old = "def f(x: int = typer.Option(1, '--x')) -> None: ...\n"
    new = "def f(x: Annotated[int, typer.Option('--x')] = 1) -> None: ...\n"
    assert _outside_annotated(ast.parse(old)) == [1]
    assert _outside_annotated(ast.parse(new)) == []
