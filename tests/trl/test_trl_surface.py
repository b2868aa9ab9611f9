"""openenv_hub.trl's public surface (complete, light to import, the trainer loaded when first
named), the sampling a trainer asks rollouts for, and the trainer's refusals of options that
cannot work with captured rollouts (checked before any model is loaded)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import openenv_hub.trl as trl_package
from openenv_hub.errors import ConfigurationError
from openenv_hub.trl import CapturedRollout, RolloutRequest

# TRL 1.16 calls transformers 5 by names it deprecates (gradient_checkpointing*)
pytestmark = pytest.mark.filterwarnings(
    "ignore:.*is deprecated and will be removed in v6:FutureWarning"
)


def test_all_names_every_public_class_and_function_of_the_package() -> None:
    for name in trl_package.__all__:
        assert getattr(trl_package, name) is not None
    public = {
        name
        for name, value in vars(trl_package).items()
        if not name.startswith("_")
        and getattr(value, "__module__", "").startswith("openenv_hub.trl")
    }
    assert public - set(trl_package.__all__) == set()
    from openenv_hub.trl.trainer import CaptureGRPOTrainer

    assert trl_package.CaptureGRPOTrainer is CaptureGRPOTrainer


def test_importing_the_package_loads_neither_trl_nor_torch() -> None:
    code = (
        "import sys; from openenv_hub.trl import CapturedRollout, RolloutRequest, rollout_batch; "
        "heavy = {'trl', 'torch', 'transformers'} & set(sys.modules); assert not heavy, heavy"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_a_missing_trl_is_named_with_its_extra(tmp_path: Path) -> None:
    (tmp_path / "trl").mkdir()  # a package named trl without GRPOTrainer stands in for none
    (tmp_path / "trl" / "__init__.py").write_text("raise ImportError('no trl here', name='trl')")
    code = (
        "import sys; sys.path.insert(0, sys.argv[1])\n"
        "from openenv_hub.errors import DependencyNotInstalledError\n"
        "try:\n    from openenv_hub.trl import CaptureGRPOTrainer\n"
        "except DependencyNotInstalledError as e:\n    print(e)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, check=True
    )
    assert "CaptureGRPOTrainer needs the 'trl' package" in done.stdout
    assert 'pip install "openenv-hub[trl]"' in done.stdout


def test_rollouts_are_asked_to_sample_as_the_trainer_scores() -> None:
    from trl import GRPOConfig

    from openenv_hub.trl.trainer import rollout_sampling, rollout_seed

    plain = GRPOConfig(output_dir="out", report_to="none", use_cpu=True, bf16=False)
    assert rollout_sampling(plain) == {"temperature": 1.0, "top_p": 1.0, "max_tokens": 512}
    tuned = GRPOConfig(
        output_dir="out", report_to="none", use_cpu=True, bf16=False, temperature=0.8,
        top_p=0.9, top_k=20, min_p=0.05, repetition_penalty=1.1, max_completion_length=64,
    )  # fmt: skip
    assert rollout_sampling(tuned) == {
        "temperature": 0.8, "top_p": 0.9, "max_tokens": 64, "top_k": 20, "min_p": 0.05,
        "repetition_penalty": 1.1,
    }  # fmt: skip
    seeds = {rollout_seed(0, step, index) for step in range(3) for index in range(8)}
    assert len(seeds) == 24 and all(0 <= s < 2**31 for s in seeds)
    assert rollout_seed(0, 1, 2) == rollout_seed(0, 1, 2) != rollout_seed(1, 1, 2)


def no_rollouts(request: RolloutRequest) -> CapturedRollout:
    raise AssertionError("never called")


MISTAKES: dict[str, tuple[dict[str, Any], str]] = {
    "use_vllm": ({"args": {"use_vllm": True}}, "set use_vllm=False"),
    "tools": ({"tools": [print]}, "does not take tools"),
    "rollout_func": ({"rollout_func": print}, "does not take rollout_func"),
    "on_untrainable": ({"on_untrainable": "ignore"}, 'must be "drop" or "raise"'),
    "concurrency": ({"max_concurrent_rollouts": 0}, "at least 1"),
}


@pytest.mark.parametrize("mistake", MISTAKES)
def test_options_that_cannot_work_are_refused_before_a_model_loads(mistake: str) -> None:
    from trl import GRPOConfig

    from openenv_hub.trl import CaptureGRPOTrainer

    options, words = MISTAKES[mistake]
    options = dict(options)
    if "args" in options:
        options["args"] = GRPOConfig(
            output_dir="out", report_to="none", use_cpu=True, bf16=False, **options["args"]
        )
    with pytest.raises(ConfigurationError, match=words):
        CaptureGRPOTrainer(model="no-such-model-folder", rollouts=no_rollouts, **options)
