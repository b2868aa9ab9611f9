"""Actions off the wire: a typed step frame in one pass, tool calls where the environment takes
them, and every frame the one pass cannot take left to the general path."""

from __future__ import annotations

import doctest
from typing import Any

import pytest
from pydantic import ValidationError

from openenv_hub.protocol import actions
from openenv_hub.protocol.actions import ActionReader
from openenv_hub.types import Action, CallToolAction, ListToolsAction


class Move(Action):
    to: str


def test_a_typed_step_frame_is_read_with_its_action_in_one_pass() -> None:
    reader = ActionReader(Move, tool_calls=False)
    action = reader.read_step_frame('{"type":"step","data":{"to":"e4"}}')
    assert isinstance(action, Move) and action.to == "e4"


@pytest.mark.parametrize(
    "text",
    [
        '{"type":"state"}',
        '{"type":"reset","data":{"step":1}}',
        '{"type":"step","data":{"to":5}}',  # an invalid action: the general path words the error
        '{"type":"step","data":{"to":"e4"},"more":1}',
        '{"type":"step","data":{"to":"e4","n":1e400}}',  # a number JSON cannot carry
        "not json",
    ],
)
def test_any_other_frame_is_left_to_the_general_path(text: str) -> None:
    assert ActionReader(Move, tool_calls=False).read_step_frame(text) is None


def test_tool_calls_are_actions_only_where_the_environment_takes_them() -> None:
    takes = ActionReader(Move, tool_calls=True)
    assert isinstance(takes.parse({"type": "list_tools"}), ListToolsAction)
    call = takes.parse({"type": "call_tool", "tool_name": "echo", "arguments": {}})
    assert isinstance(call, CallToolAction)
    assert isinstance(takes.parse({"to": "d5"}), Move)
    assert takes.read_step_frame('{"type":"step","data":{"to":"e4"}}') is None  # two passes
    with pytest.raises(ValidationError, match="type"):
        ActionReader(Move, tool_calls=False).parse({"type": "list_tools"})


def test_an_action_class_the_one_pass_cannot_nest_still_reads_in_two() -> None:
    class NotAModel:
        @classmethod
        def model_validate(cls, data: dict[str, Any]) -> Any:
            return data

    reader = ActionReader(NotAModel, tool_calls=False)
    assert reader.read_step_frame('{"type":"step","data":{"to":"e4"}}') is None
    assert reader.parse({"to": "e4"}) == {"to": "e4"}


def test_the_module_example_holds() -> None:
    assert doctest.testmod(actions).failed == 0
