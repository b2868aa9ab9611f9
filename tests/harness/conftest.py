"""Fixtures of the harness tests: the harnesses as scripts/test.sh installs them in the
checkout, and vLLM serving the tiny model fine-tuned on mini-swe-agent's conversations
(tests/harness/harness_model.py), with a context long enough for Claude Code's and Codex's
first requests (one engine for the run, shared by its test processes)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from engine_support.fixtures import fine_tuned_model
from engine_support.vllm_engine import Engine, shared_engine
from harness_model import SOLVE_TASK, SPEC
from harness_support import HIDDEN_MARKER, LONG_CONTEXT

from openenv_hub.capture import CaptureProxy


@pytest.fixture(scope="session")
def harness_model_folder() -> Path:
    return fine_tuned_model(SPEC)


@pytest.fixture(scope="session")
def harness_engine(harness_model_folder: Path) -> Iterator[Engine]:
    run_id = os.environ.get("PYTEST_XDIST_TESTRUNUID") or f"pid{os.getpid()}"
    try:
        engine, me = shared_engine(harness_model_folder, run_id, LONG_CONTEXT)
    except RuntimeError as error:
        pytest.fail(str(error), pytrace=False)
    yield engine
    me.unlink(missing_ok=True)


@pytest.fixture(scope="module")
def harness_proxy(harness_engine: Engine, harness_model_folder: Path) -> Iterator[CaptureProxy]:
    """A capture proxy in front of the engine: greedy decoding, at most 256 tokens a call."""
    proxy = CaptureProxy(
        engine_url=harness_engine.base_url,
        model=harness_engine.model,
        tokenizer=harness_model_folder,
        sampling={"temperature": 0.0},
        max_tokens_cap=256,
    ).start()
    yield proxy
    proxy.stop()


@pytest.fixture
def task_root(tmp_path: Path) -> Path:
    """One task, ``write-hello``: its instruction and a hidden test that checks hello.txt."""
    task = tmp_path / "tasks" / "write-hello"
    (task / "tests").mkdir(parents=True)
    (task / "instruction.md").write_text(SOLVE_TASK + "\n")
    (task / "tests" / "test.sh").write_text(
        f"#!/bin/bash\n# {HIDDEN_MARKER}\ngrep -qx hello /workspace/hello.txt\n"
    )
    return task.parent
