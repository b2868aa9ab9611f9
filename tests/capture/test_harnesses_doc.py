"""docs/harnesses.md: the engine command is the tests' own, and the Python blocks run as
printed, in order, in one namespace, against vLLM serving the fine-tuned tiny model (the
engine's port and the model's folder are the test's)."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

import pytest
from doc_blocks import doc_block
from engine_support.fixtures import ENGINE_TIMEOUT_S
from engine_support.vllm_engine import Engine, engine_command

DOC = "docs/harnesses.md"
PYTHON_BLOCKS = [
    "harnesses-proxy",
    "harnesses-rollout",
    "harnesses-records",
    "harnesses-push",
    "harnesses-retokenise",
    "harnesses-stop",
]


def test_the_engine_is_started_as_the_tests_start_it() -> None:
    printed = shlex.split(doc_block(DOC, "harnesses-engine").code)
    assert printed == engine_command(Path("python"), "tiny-model", 8000)


@pytest.mark.slow
@pytest.mark.timeout(ENGINE_TIMEOUT_S)
def test_the_python_blocks_run_as_printed(
    vllm: Engine,
    tiny_chat_model_folder: Path,
    hub_env: Any,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    replacements = {
        "http://127.0.0.1:8000/v1": vllm.base_url,
        '"tiny-model"': repr(str(tiny_chat_model_folder)),
    }
    namespace: dict[str, Any] = {}
    try:
        for name in PYTHON_BLOCKS:
            code = doc_block(DOC, name).code
            for old, new in replacements.items():
                code = code.replace(old, new)
            exec(compile(code, f"{DOC}:{name}", "exec"), namespace)
    finally:
        if "proxy" in namespace:
            namespace["proxy"].stop()
    out = capsys.readouterr().out
    assert "True []" in out  # the first rollout's report: ok, no fatal grade
    call = namespace["call"]
    sampled, retokenised = call.sampled_ids, namespace["text_way"](namespace["session"], call)[1]
    assert sampled != retokenised
    assert f"sampled:      {sampled}" in out and f"re-tokenised: {retokenised}" in out
    assert "captured sequences: 1 | fatal grades: []" in out
    assert len(namespace["calls"]) == 4  # the first rollout, back from the Hub dataset
