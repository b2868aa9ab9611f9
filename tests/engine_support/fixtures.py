"""Pytest fixtures of a real engine: the tiny chat model fine-tuned on
:mod:`engine_support.trajectories`, and vLLM serving it, one engine for the whole run (both
xdist processes share it; see :func:`engine_support.vllm_engine.shared_engine`).

Load with ``pytest_plugins = ["engine_support.fixtures"]`` in a conftest.py.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path

import pytest

from engine_support import tiny_chat_model
from engine_support.trajectories import SPEC
from engine_support.vllm_engine import Engine, cache_root, file_lock, shared_engine

EXAMPLE_MODEL = tiny_chat_model.EXAMPLES / "tiny_model.py"

#: A test that starts the engine waits for the model's fine-tuning and the engine's start.
ENGINE_TIMEOUT_S = 900


def model_digest(spec: dict[str, object]) -> str:
    """What the fine-tuned model depends on: the spec, the code that makes it, the versions of
    torch and transformers."""
    parts = [json.dumps(spec, sort_keys=True)]
    parts += [Path(tiny_chat_model.__file__).read_text(), EXAMPLE_MODEL.read_text()]
    parts += [metadata.version("torch"), metadata.version("transformers")]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


def fine_tuned_model(spec: dict[str, object]) -> Path:
    """The model of ``spec``, fine-tuned on the spot the first time (in a child process: the
    test process never loads torch for it), then kept in the cache under its digest."""
    root = cache_root() / "tiny-chat-models"
    root.mkdir(parents=True, exist_ok=True)
    folder = root / model_digest(spec)
    with file_lock(root / f"{folder.name}.lock"):
        if (folder / "fine_tune.json").exists():
            return folder
        spec_file = root / f"{folder.name}.spec.json"
        spec_file.write_text(json.dumps(spec))
        script = str(Path(tiny_chat_model.__file__))
        done = subprocess.run(
            [sys.executable, script, str(spec_file), str(folder)],
            capture_output=True,
            text=True,
            timeout=ENGINE_TIMEOUT_S,
            check=False,
        )
        if done.returncode != 0:
            raise RuntimeError(f"fine-tuning the tiny model failed:\n{done.stderr[-3000:]}")
    return folder


@pytest.fixture(scope="session")
def tiny_chat_model_folder() -> Path:
    """The tiny chat model fine-tuned on the fixed conversations (a folder vLLM serves)."""
    return fine_tuned_model(SPEC)


@pytest.fixture(scope="session")
def vllm(tiny_chat_model_folder: Path) -> Iterator[Engine]:
    """vLLM serving the fine-tuned tiny model on 127.0.0.1, shared by the run's processes."""
    run_id = os.environ.get("PYTEST_XDIST_TESTRUNUID") or f"pid{os.getpid()}"
    try:
        engine, me = shared_engine(tiny_chat_model_folder, run_id)
    except RuntimeError as error:
        pytest.fail(str(error), pytrace=False)
    yield engine
    me.unlink(missing_ok=True)
