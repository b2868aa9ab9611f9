"""Action schemas become form fields, and widget values become typed JSON."""

from __future__ import annotations

import pytest
from ui_envs import AllFieldsAction, TypedEchoAction

from openenv_hub.model.tools import MCPEnvironment, tool
from openenv_hub.types import CallToolAction
from openenv_hub.ui.schema import MISSING, FieldError, collect, form_fields, initial_value

FIELDS = {spec.name: spec for spec in form_fields(AllFieldsAction.model_json_schema())}


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("text", "text"),
        ("count", "integer"),
        ("ratio", "number"),
        ("flag", "boolean"),
        ("mode", "choice"),
        ("color", "choice"),
        ("items", "json"),
        ("weights", "json"),
        ("point", "json"),
        ("limit", "integer"),
    ],
)
def test_each_field_gets_its_widget_kind(name, kind):
    assert FIELDS[name].kind == kind


def test_metadata_is_left_out_and_order_is_kept():
    assert list(FIELDS) == [
        "text",
        "count",
        "ratio",
        "flag",
        "mode",
        "color",
        "items",
        "weights",
        "point",
        "limit",
    ]


def test_bounds_choices_defaults_and_descriptions():
    count, ratio = FIELDS["count"], FIELDS["ratio"]
    assert (count.minimum, count.maximum, count.default) == (0, 10, 3)
    assert (ratio.exclusive_minimum, ratio.exclusive_maximum) == (0, 1)
    assert count.info() == "A bounded integer · integer, 0 ≤ x ≤ 10 · default 3"
    assert ratio.bounds_text() == "0 < x < 1"
    assert FIELDS["mode"].choices == ("fast", "slow")
    assert FIELDS["color"].choices == ("red", "green", "blue")
    assert FIELDS["color"].default == "red"
    assert FIELDS["text"].required and FIELDS["text"].multiline
    assert FIELDS["limit"].nullable and FIELDS["limit"].default is None


def test_initial_values():
    assert initial_value(FIELDS["text"]) == ""
    assert initial_value(FIELDS["count"]) == 3
    assert initial_value(FIELDS["flag"]) is False
    assert initial_value(FIELDS["mode"]) == "fast"
    assert initial_value(FIELDS["items"]) == "[]"
    assert initial_value(FIELDS["point"]) == '{\n  "x": 0,\n  "y": 0.0\n}'  # from the schema
    assert initial_value(FIELDS["limit"]) == ""


def test_collect_types_widget_values_and_drops_empty_optionals():
    specs = list(FIELDS.values())
    raw = ["hi", 4.0, 0.25, True, "slow", "blue", "[1, 2]", '{"a": 1}', '{"x": 3}', ""]
    data, errors = collect(specs, raw)
    assert errors == []
    assert data == {
        "text": "hi",
        "count": 4,
        "ratio": 0.25,
        "flag": True,
        "mode": "slow",
        "color": "blue",
        "items": [1, 2],
        "weights": {"a": 1},
        "point": {"x": 3},
    }
    assert type(data["count"]) is int
    action = AllFieldsAction.model_validate(data)
    assert action.limit is None and action.point.x == 3


@pytest.mark.parametrize(
    ("name", "raw", "expected"),
    [
        ("limit", " 12 ", 12),
        ("limit", "1.5", 1.5),  # left to the model, which names the field in its error
        ("ratio", 1, 1),
        ("count", None, MISSING),
        ("text", "", ""),  # a required string may be empty
    ],
)
def test_collect_single_values(name, raw, expected):
    data, errors = collect([FIELDS[name]], [raw])
    assert errors == []
    assert data.get(name, MISSING) == expected


@pytest.mark.parametrize(
    ("name", "raw", "message"),
    [
        ("items", "[1, 2", "not valid JSON (Expecting ',' delimiter at line 1, column 6)"),
        ("limit", "ten", "'ten' is not a number"),
    ],
)
def test_collect_reports_unreadable_fields(name, raw, message):
    _, errors = collect([FIELDS[name]], [raw])
    assert errors == [FieldError(name, message)]


def test_the_generated_template_action_is_one_text_box():
    (spec,) = form_fields(TypedEchoAction.model_json_schema())
    assert (spec.name, spec.kind, spec.required, spec.description) == (
        "message",
        "text",
        True,
        "Message to echo back",
    )


def test_tool_input_schemas_are_forms_too():
    class Tools(MCPEnvironment):
        @tool
        def move(self, steps: int, direction: str = "north", fast: bool = False) -> str:
            return direction

    (move,) = Tools.list_tools()
    specs = form_fields(move.input_schema, skip=())
    assert [(s.name, s.kind, s.required) for s in specs] == [
        ("steps", "integer", True),
        ("direction", "text", False),
        ("fast", "boolean", False),
    ]


def test_call_tool_action_fields():
    names = [s.name for s in form_fields(CallToolAction.model_json_schema())]
    assert names == ["type", "tool_name", "arguments"]
