"""The reward cannot be forged and the hidden tests cannot be read: each test is one attack by
the agent's own code, run through the WebSocket client against the real server.

Grading happens in a sandbox of its own, where a judge that never runs the agent's code
questions a candidate process that re-runs the session's cells (``coding_env/server/judge.py``).
The attacks run against a server whose reward is the fraction of tests passed, so that a single
test passed that should not shows; the leak of that count is tested last.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
from coding_env import CodeAction
from coding_env.server.tasks import TaskSet
from coding_support import Target

WRONG = "def has_close_elements(numbers, threshold):\n    return False\n"  # passes 3 of 7

FORGED_GRADE = (
    "import __main__\n"
    '__main__.grade = lambda *a, **k: {"passed": 10**6, "total": 1, "timed_out": False}\n'
)

# Wraps every way a request reaches the session's interpreter (its channel's receive, any
# ``grade`` it would call, compile/exec audit events) and keeps what passes through.
SPY = """
import __main__, gc, sys
captured = []
def _audit(event, args):
    if event in ("exec", "compile"):
        captured.append(repr(args)[:20000])
sys.addaudithook(_audit)
for _obj in gc.get_objects():
    if type(_obj).__name__ == "Channel" and hasattr(_obj, "receive"):
        def _spying(original=_obj.receive):
            request = original()
            captured.append(repr(request))
            return request
        _obj.receive = _spying
def _spy_grade(*args, **kwargs):
    captured.append(repr((args, kwargs)))
    return {"passed": 0, "total": 7, "timed_out": False}
__main__.grade = _spy_grade
"""

# Searches the interpreter's memory for a value only the hidden tests hold (built here at run
# time, so that the search's own source does not contain it).
SEARCH = """
needle = "5.0," + " 2.2"
hits = []
for _obj in gc.get_objects():
    _items = _obj.values() if isinstance(_obj, dict) else _obj if isinstance(_obj, (list, tuple)) else ()
    for _item in list(_items):
        if isinstance(_item, str) and needle in _item and _item is not needle:
            hits.append(_item[:300])
hits, captured
"""

FORGED_COUNTS = """
import json, os
line = (json.dumps({"passed": 10**6, "total": 7, "ready": True, "value": True}) + "\\n").encode()
for fd in range(3, 64):
    try:
        os.write(fd, line * 4)
    except OSError:
        pass
"""

EQUAL_TO_EVERYTHING = """
class Anything:
    def __eq__(self, other):
        return True
    __hash__ = object.__hash__
    def __bool__(self):
        return True
def has_close_elements(numbers, threshold):
    return Anything()
"""

TRUE_INT = """
class TrueInt(int):
    def __eq__(self, other):
        return True
    __hash__ = int.__hash__
def has_close_elements(numbers, threshold):
    return TrueInt(0)
"""

PATCHED_BUILTINS = """
import builtins
builtins.abs = lambda x: 0
abs = lambda x: 0
def truncate_number(number):
    return 0.0
"""


def _hidden_statements(task_id: str) -> list[str]:
    request = TaskSet.humaneval().get(task_id).grading_request(1.0)
    return [s["source"] for s in request["statements"] if s["is_test"]]


def test_a_forged_grade_changes_nothing(fraction_target: Target) -> None:
    with fraction_target.client().sync() as env:
        env.reset(task_id="HumanEval/0")
        forged = env.step(CodeAction(code=FORGED_GRADE))
        assert (forged.reward, forged.observation.passed, forged.done) == (0.0, False, False)
        wrong = env.step(CodeAction(code=WRONG + FORGED_GRADE))
        assert (wrong.reward, wrong.observation.passed) == (3 / 7, False), wrong


def test_a_spy_in_the_session_never_sees_the_hidden_tests(fraction_target: Target) -> None:
    hidden = _hidden_statements("HumanEval/0")
    with fraction_target.client().sync() as env:
        env.reset(task_id="HumanEval/0")
        planted = env.step(CodeAction(code=SPY))
        assert planted.observation.exit_code == 0, planted.observation
        graded = env.step(CodeAction(code=WRONG))  # a grading that runs the hidden tests
        assert graded.reward == 3 / 7
        searched = env.step(CodeAction(code=SEARCH)).observation
    hits, captured = eval(searched.result)
    assert hits == [], hits
    assert captured, "the spy saw the session's own requests"
    seen = "\n".join(captured)
    assert "'op': 'grade'" not in seen and "check(" not in seen
    assert not any(statement in seen for statement in hidden)


def test_forged_counts_written_to_every_descriptor_change_nothing(
    fraction_target: Target,
) -> None:
    """Replies forged on every open descriptor, in the session and again in the grader (which
    re-runs the cell): the session's channel, the grader's candidate and judge."""
    with fraction_target.client().sync() as env:
        env.reset(task_id="HumanEval/0")
        forged = env.step(CodeAction(code=FORGED_COUNTS))
        assert (forged.reward, forged.observation.passed) == (0.0, False), forged
        wrong = env.step(CodeAction(code=WRONG))
        assert wrong.reward == 3 / 7, wrong
        assert env.step(CodeAction(code="6 * 7")).observation.result == "42"


def test_an_object_equal_to_everything_passes_no_test(fraction_target: Target) -> None:
    """The judge compares plain data it rebuilt itself: an object that claims equality with
    everything is not plain data, and an int subclass arrives as the int it is."""
    with fraction_target.client().sync() as env:
        env.reset(task_id="HumanEval/0")
        anything = env.step(CodeAction(code=EQUAL_TO_EVERYTHING))
        assert anything.reward == 0.0, anything
        true_int = env.step(CodeAction(code=TRUE_INT))
        assert true_int.reward == 3 / 7, true_int  # 0 == False: as False does


def test_builtins_patched_by_the_candidate_do_not_reach_the_tests(
    fraction_target: Target,
) -> None:
    """HumanEval/2's tests use abs(); the candidate's abs is not the one they call."""
    with fraction_target.client().sync() as env:
        env.reset(task_id="HumanEval/2")
        patched: Any = env.step(CodeAction(code=PATCHED_BUILTINS))
        # 0 == 0.5 fails; the two abs() tests would pass with the candidate's abs
        assert patched.reward == 0.0, patched


def test_the_tests_call_the_entry_point_by_its_name_too(fraction_target: Target) -> None:
    """HumanEval/33's tests call sort_third by name as well as ``candidate``: both are the
    candidate's (the prompt's helpers are the task's own: see test_adversarial.py)."""
    task = TaskSet.humaneval().get("HumanEval/33")
    with fraction_target.client().sync() as env:
        env.reset(task_id="HumanEval/33")
        solved = env.step(CodeAction(code=task.prompt + task.canonical_solution))
        assert (solved.reward, solved.done) == (1.0, True), solved


# Right for its first N calls, wrong after: what a grading says then tells the agent N's place
# among the hidden tests' calls, unless it says only whether all passed.
FIRST_N_CALLS = """
_calls = []
def has_close_elements(numbers, threshold):
    _calls.append(1)
    if len(_calls) > {n}:
        return None
    return any(abs(a - b) < threshold for i, a in enumerate(numbers) for b in numbers[i + 1:])
"""


def test_a_grading_does_not_tell_how_many_calls_were_answered(local_target: Target) -> None:
    """A candidate right only for its first N calls learned the sizes of the hidden tests from
    the count of tests passed. By default a grading says whether all passed, and nothing else
    that depends on the calls: N = 0, 2 and 5 of HumanEval/0's 7 look the same."""
    metadata = httpx.get(f"{local_target.base_url}/metadata", timeout=30).json()
    assert metadata["reward_range"] == [0.0, 1.0]
    seen = {}
    with local_target.client().sync() as env:
        env.reset(task_id="HumanEval/0")
        for n in (0, 2, 5, 7):
            result = env.step(CodeAction(code=FIRST_N_CALLS.format(n=n)))
            shown = result.observation.model_dump(exclude={"duration_s", "metadata"})
            assert "tests_passed" not in shown
            seen[n] = (result.reward, result.done, json.dumps(shown, sort_keys=True))
    assert seen[0] == seen[2] == seen[5], seen
    assert seen[0][:2] == (0.0, False) and seen[7][:2] == (1.0, True), seen
