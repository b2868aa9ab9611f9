"""The grader inside its sandbox: a judge that holds the tests, and the candidate it questions.

Run by ``worker.py`` in a sandbox started for one grading (standard library only). The judge is
a fresh interpreter that never runs the agent's code. It forks the candidate, which closes the
channel to the server, re-runs the session's cells in a fresh ``__main__`` (as the session ran
them, output discarded) and then answers questions about its names. The judge runs the task's
tests in its own namespace, where the candidate's functions are stand-ins that send their
arguments to the candidate and take back its return value as plain data: ``None``, booleans,
numbers, strings, bytes, and lists, tuples, dicts, sets and frozensets of those, rebuilt in the
judge (an instance of a subclass arrives as its base type; anything else fails the test). So
the tests see the candidate's module names, as HumanEval's harness lets them, but every
comparison is made by the judge on data it built itself: an object equal to everything, a
patched builtin, or a forged count written to a descriptor cannot pass a test, and the tests
never enter the candidate's process. The judge is not dumpable and the seccomp filter refuses
``ptrace`` and ``process_vm_*``, so the candidate cannot read or change its memory.

The names the task's prompt defines besides the entry point (its helpers, such as HumanEval/38's
``encode_cyclic``) are the prompt's own, run in the judge from the request's ``reference``: a
candidate that redefines them as the identity changes only its own code, never the tests'.
Names a test uses that are builtins stay the judge's builtins, whatever the candidate defines.
If the candidate process ends before the tests do (a crash, the CPU limit), no test passes.
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import ctypes
import json
import os
import signal
from collections.abc import Callable
from typing import Any

__all__ = ["grade"]

_MAX_MESSAGE_BYTES = 16 * 1024 * 1024
_PR_SET_DUMPABLE = 4


class CandidateError(Exception):
    """The candidate raised, returned something that is not plain data, or sent garbage."""


class CandidateGone(BaseException):
    """The candidate process ended; no test can pass any more."""


def prepare(
    close_channel: Callable[[], None], run_cells: Callable[[list[str]], dict[str, Any]]
) -> Candidate:
    """Fork the candidate before any request: it has the channel closed and no tests, and
    waits for the cells it is to run."""
    ctypes.CDLL(None).prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)
    to_candidate = os.pipe()
    from_candidate = os.pipe()
    pid = os.fork()
    if pid == 0:
        close_channel()
        os.close(to_candidate[1])
        os.close(from_candidate[0])
        _serve(to_candidate[0], from_candidate[1], run_cells)
    os.close(to_candidate[0])
    os.close(from_candidate[1])
    return Candidate(pid, to_candidate[1], from_candidate[0])


def grade(request: dict[str, Any], candidate: Candidate) -> dict[str, Any]:
    """Run the task's tests against the session's cells, re-run by the candidate."""
    try:
        candidate.ask_to_run(request.get("cells", []))
        return _judge(request, candidate)
    except CandidateGone:
        return {"passed": 0, "ended": candidate.ended()}
    finally:
        candidate.end()


def _judge(request: dict[str, Any], candidate: Candidate) -> dict[str, Any]:
    entry_point = request["entry_point"]
    if candidate.kind(entry_point) != "callable":
        return {"passed": 0, "missing": True}
    names: dict[str, Any] = {"__name__": "__main__", "__builtins__": builtins}
    try:
        exec(request.get("reference", ""), names)  # the task's own helpers: never the candidate's
    except Exception:
        return {"passed": 0, "task_error": True}
    for name in _names_used(request):
        if name in names:
            continue
        kind = candidate.kind(name)
        if kind == "callable":
            names[name] = candidate.stand_in(name)
        elif kind == "value":
            try:
                names[name] = candidate.value(name)
            except CandidateError:
                continue
    names[entry_point] = candidate.stand_in(entry_point)
    passed = 0
    try:
        exec(request.get("preamble", ""), names)
    except Exception:
        return {"passed": 0, "task_error": True}
    names[request.get("argument", "candidate")] = candidate.stand_in(entry_point)
    for statement in request["statements"]:
        try:
            exec(statement["source"], names)
        except CandidateGone:
            raise
        except BaseException:
            continue
        passed += bool(statement["is_test"])
    return {"passed": passed}


def _names_used(request: dict[str, Any]) -> list[str]:
    """Names the tests read that are not builtins, each asked of the candidate once."""
    sources = [request.get("preamble", "")] + [s["source"] for s in request["statements"]]
    used: dict[str, None] = {}
    for source in sources:
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                used[node.id] = None
    return [name for name in used if not hasattr(builtins, name)]


class Candidate:
    """The judge's end of the candidate process: questions out, plain data back."""

    def __init__(self, pid: int, write_fd: int, read_fd: int) -> None:
        self.pid, self._write_fd, self._read_fd = pid, write_fd, read_fd
        self._buffer = b""
        self._questions = 0
        self._status: int | None = None

    def ask_to_run(self, cells: list[str]) -> None:
        """Have the candidate run the cells; returns once it has."""
        self._ask({"op": "run", "cells": cells})

    def kind(self, name: str) -> str:
        return str(self._ask({"op": "kind", "name": name}).get("kind"))

    def value(self, name: str) -> Any:
        return self._result(self._ask({"op": "value", "name": name}))

    def stand_in(self, name: str) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            try:
                question = {"op": "call", "name": name, "args": encode(list(args))}
                question["kwargs"] = encode(kwargs)
            except (TypeError, ValueError, RecursionError) as exc:
                raise CandidateError(f"an argument cannot be sent: {exc}") from None
            return self._result(self._ask(question))

        call.__name__ = call.__qualname__ = name
        return call

    def _result(self, reply: dict[str, Any]) -> Any:
        if "value" not in reply:
            raise CandidateError(str(reply.get("raised") or reply.get("unencodable"))[:200])
        try:
            return decode(reply["value"])
        except (TypeError, ValueError, RecursionError, KeyError) as exc:
            raise CandidateError(f"not plain data: {exc}") from None

    def _ask(self, question: dict[str, Any]) -> dict[str, Any]:
        """Send a question; its answer, skipping lines the candidate's own code wrote."""
        self._questions += 1
        self.send({**question, "id": self._questions})
        while True:
            reply = self.receive()
            if reply.get("id") == self._questions:
                return reply

    def send(self, message: dict[str, Any]) -> None:
        try:
            _send(self._write_fd, message)
        except OSError:
            raise CandidateGone() from None

    def receive(self) -> dict[str, Any]:
        while b"\n" not in self._buffer:
            chunk = os.read(self._read_fd, 1 << 20)
            if not chunk:
                raise CandidateGone()
            self._buffer += chunk
            if len(self._buffer) > _MAX_MESSAGE_BYTES:
                raise CandidateGone()
        line, self._buffer = self._buffer.split(b"\n", 1)
        try:
            reply = json.loads(line)
        except (ValueError, RecursionError):
            raise CandidateError("the candidate sent a malformed reply") from None
        if not isinstance(reply, dict):
            raise CandidateError("the candidate sent a malformed reply")
        return reply

    def ended(self) -> str:
        """How the candidate ended: a signal's name (``SIGXCPU``: out of CPU time), or ``exit``."""
        if self._status is None:
            _, self._status = os.waitpid(self.pid, 0)
        if os.WIFSIGNALED(self._status):
            return signal.Signals(os.WTERMSIG(self._status)).name
        return "exit"

    def end(self) -> None:
        for fd in (self._write_fd, self._read_fd):
            with contextlib.suppress(OSError):
                os.close(fd)
        if self._status is None:
            with contextlib.suppress(OSError):
                os.kill(self.pid, signal.SIGKILL)
            self.ended()


def _serve(read_fd: int, write_fd: int, run_cells: Callable[[list[str]], dict[str, Any]]) -> None:
    """The candidate: run the cells it is sent, then answer the judge until it hangs up."""
    try:
        reader = os.fdopen(read_fd, "rb")
        first = reader.readline()
        if not first:
            return
        question = json.loads(first)
        names = run_cells(question["cells"])
        _send(write_fd, {"ready": True, "id": question["id"]})
        for line in reader:
            question = json.loads(line)
            _send(write_fd, {**_answer(names, question), "id": question["id"]})
    finally:
        os._exit(0)


def _answer(names: dict[str, Any], question: dict[str, Any]) -> dict[str, Any]:
    missing = object()
    found = names.get(question["name"], missing)
    if question["op"] == "kind":
        if found is missing:
            return {"kind": "missing"}
        return {"kind": "callable" if callable(found) else "value"}
    if question["op"] == "call":
        try:
            found = found(*decode(question["args"]), **decode(question["kwargs"]))
        except BaseException as exc:
            return {"raised": type(exc).__name__}
    try:
        return {"value": encode(found)}
    except (TypeError, ValueError, RecursionError) as exc:
        return {"unencodable": str(exc)[:200]}


def _send(fd: int, message: dict[str, Any]) -> None:
    data = memoryview(json.dumps(message).encode() + b"\n")
    while data:
        data = data[os.write(fd, data) :]


def encode(value: Any) -> Any:
    """Plain data as JSON; containers tagged (``{"l": [...]}`` a list, ``"t"`` a tuple, ...)."""
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, (bytes, bytearray)):
        return {"b": bytes(value).hex()}
    if isinstance(value, complex):
        return {"c": [value.real, value.imag]}
    if isinstance(value, dict):
        return {"d": [[encode(k), encode(v)] for k, v in value.items()]}
    for tag, kind in (("l", list), ("t", tuple), ("s", set), ("f", frozenset)):
        if isinstance(value, kind):
            return {tag: [encode(item) for item in value]}
    raise TypeError(f"a {type(value).__name__} is not plain data")


def decode(node: Any) -> Any:
    """The value :func:`encode` made, built from JSON's own types only."""
    if node is None or type(node) in (bool, int, float, str):
        return node
    if type(node) is not dict or len(node) != 1:
        raise ValueError(f"unexpected {type(node).__name__}")
    ((tag, body),) = node.items()
    if tag == "b" and type(body) is str:
        return bytes.fromhex(body)
    if type(body) is not list:
        raise ValueError(f"unexpected body of {tag!r}")
    if tag == "c":
        real, imag = body
        return complex(float(real), float(imag))
    if tag == "d":
        return {decode(key): decode(value) for key, value in body}
    kinds: dict[str, Callable[[Any], Any]] = {"l": list, "t": tuple, "s": set, "f": frozenset}
    return kinds[tag](decode(item) for item in body)
