"""The reward cannot be forged and the hidden tests cannot be read: each test is one attack by
the agent's own code, run through the WebSocket client against the real server.

Grading happens in a sandbox of its own, where a judge that never runs the agent's code
questions a candidate process that re-runs the session's cells (``coding_env/server/judge.py``).
"""

from __future__ import annotations

from typing import Any

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


def test_a_forged_grade_changes_nothing(local_target: Target) -> None:
    with local_target.client().sync() as env:
        env.reset(task_id="HumanEval/0")
        forged = env.step(CodeAction(code=FORGED_GRADE))
        assert (forged.reward, forged.observation.tests_passed, forged.done) == (0.0, 0, False)
        wrong = env.step(CodeAction(code=WRONG + FORGED_GRADE))
        assert wrong.reward == 3 / 7 and wrong.observation.tests_passed == 3, wrong


def test_a_spy_in_the_session_never_sees_the_hidden_tests(local_target: Target) -> None:
    hidden = _hidden_statements("HumanEval/0")
    with local_target.client().sync() as env:
        env.reset(task_id="HumanEval/0")
        planted = env.step(CodeAction(code=SPY))
        assert planted.observation.exit_code == 0, planted.observation
        graded = env.step(CodeAction(code=WRONG))  # a grading that runs the hidden tests
        assert graded.observation.tests_passed == 3
        searched = env.step(CodeAction(code=SEARCH)).observation
    hits, captured = eval(searched.result)
    assert hits == [], hits
    assert captured, "the spy saw the session's own requests"
    seen = "\n".join(captured)
    assert "'op': 'grade'" not in seen and "check(" not in seen
    assert not any(statement in seen for statement in hidden)


def test_forged_counts_written_to_every_descriptor_change_nothing(local_target: Target) -> None:
    """Replies forged on every open descriptor, in the session and again in the grader (which
    re-runs the cell): the session's channel, the grader's candidate and judge."""
    with local_target.client().sync() as env:
        env.reset(task_id="HumanEval/0")
        forged = env.step(CodeAction(code=FORGED_COUNTS))
        assert (forged.reward, forged.observation.tests_passed) == (0.0, 0), forged
        wrong = env.step(CodeAction(code=WRONG))
        assert wrong.reward == 3 / 7, wrong
        assert env.step(CodeAction(code="6 * 7")).observation.result == "42"


def test_an_object_equal_to_everything_passes_no_test(local_target: Target) -> None:
    """The judge compares plain data it rebuilt itself: an object that claims equality with
    everything is not plain data, and an int subclass arrives as the int it is."""
    with local_target.client().sync() as env:
        env.reset(task_id="HumanEval/0")
        anything = env.step(CodeAction(code=EQUAL_TO_EVERYTHING))
        assert (anything.reward, anything.observation.tests_passed) == (0.0, 0), anything
        true_int = env.step(CodeAction(code=TRUE_INT))
        assert true_int.observation.tests_passed == 3, true_int  # 0 == False: as False does


def test_builtins_patched_by_the_candidate_do_not_reach_the_tests(local_target: Target) -> None:
    """HumanEval/2's tests use abs(); the candidate's abs is not the one they call."""
    with local_target.client().sync() as env:
        env.reset(task_id="HumanEval/2")
        patched: Any = env.step(CodeAction(code=PATCHED_BUILTINS))
        # 0 == 0.5 fails; the two abs() tests would pass with the candidate's abs
        assert (patched.reward, patched.observation.tests_passed) == (0.0, 0), patched


def test_the_tests_see_the_candidates_module_names(local_target: Target) -> None:
    """HumanEval/38's tests call encode_cyclic, defined by the prompt, from the candidate."""
    task = TaskSet.humaneval().get("HumanEval/38")
    with local_target.client().sync() as env:
        env.reset(task_id="HumanEval/38")
        solved = env.step(CodeAction(code=task.prompt + task.canonical_solution))
        assert (solved.reward, solved.done) == (1.0, True), solved
