"""CaptureGRPOTrainer against the real engine: one GRPO step on the CPU whose rollouts are
multi-turn conversations (tool calls, scripted tool results, user turns) made through the
capture proxy to vLLM, trained on by TRL's GRPOTrainer with the very model folder vLLM serves.

The trainer is instrumented where TRL computes its loss (``_compute_loss``): the batch it
receives there is compared, token by token, with what the capture recorded. One rollout of the
step goes through a relay that strips the engine's ids, so its capture is graded fatal: it
must be left out, visibly. A second trainer, told to refuse such rollouts, must stop before
training anything."""

from __future__ import annotations

import logging
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from engine_support.fixtures import ENGINE_TIMEOUT_S
from engine_support.vllm_engine import Engine
from serving import ServerThread

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "capture"))

from scripted_harness import ScriptedHarness
from test_engine_faults import stripping_relay

from openenv_hub.capture import CaptureProxy, TrainingSequence
from openenv_hub.errors import UntrainableRolloutError
from openenv_hub.trl import CapturedRollout, RolloutRequest

pytestmark = [
    pytest.mark.slow,
    pytest.mark.timeout(ENGINE_TIMEOUT_S),
    # TRL 1.16 calls transformers 5 by names it deprecates (gradient_checkpointing*)
    pytest.mark.filterwarnings("ignore:.*is deprecated and will be removed in v6:FutureWarning"),
]

PROMPT = "Which files are here?"  # the model calls ls, reads the result, answers; then a user turn
CALLS = 3
GENERATIONS = 4
FAULTY = 1  # this rollout's engine replies lose their ids on the way


class ScriptedRollouts:
    """A rollout source: each rollout a scripted chat harness making CALLS model calls through
    a capture session, its tool calls answered with scripted results. The reward is a toy one
    (fewer sampled tokens, more reward), there to make advantages that are not zero."""

    def __init__(self, proxy: CaptureProxy, faulty: CaptureProxy) -> None:
        self.proxy, self.faulty = proxy, faulty
        self.made: list[tuple[RolloutRequest, CapturedRollout]] = []
        self._lock = threading.Lock()

    def __call__(self, request: RolloutRequest) -> CapturedRollout:
        proxy = self.faulty if request.index == FAULTY else self.proxy
        session = proxy.open_session()
        try:
            harness = ScriptedHarness(proxy.url, session.key, "chat", stream=False,
                                      seed=request.seed, sampling=request.sampling)  # fmt: skip
            harness.run(request.prompt_text, CALLS)
        finally:
            proxy.close_session(session)
        sampled = sum(len(call.sampled_ids) for call in session.calls)
        rollout = CapturedRollout.from_session(session, reward=-sampled / 100)
        with self._lock:
            self.made.append((request, rollout))
        return rollout


@dataclass
class Row:
    """One row of the batch TRL computed its loss on, padding removed."""

    ids: list[int]
    mask: list[int]  # the loss mask TRL applied: completion_mask * tool_mask, 0 over the prompt
    sampling_logprobs: list[float]  # what TRL holds as the sampler's logprobs (0.0 on the prompt)
    trainer_logprobs: list[float] = field(default_factory=list)  # TRL's own, before the step


def rows_of(batch: dict[str, Any]) -> list[Row]:
    rows = []
    trainer_logprobs = batch.get("old_per_token_logps")  # only where TRL's correction runs
    for i in range(batch["prompt_ids"].shape[0]):
        in_prompt = batch["prompt_mask"][i].bool()
        in_completion = batch["completion_mask"][i].bool()
        prompt = batch["prompt_ids"][i][in_prompt].tolist()
        loss_mask = batch["completion_mask"][i] * batch["tool_mask"][i]
        before = [0] * len(prompt)
        rows.append(
            Row(
                ids=prompt + batch["completion_ids"][i][in_completion].tolist(),
                mask=before + loss_mask[in_completion].tolist(),
                sampling_logprobs=[0.0] * len(prompt)
                + batch["sampling_per_token_logps"][i][in_completion].tolist(),
                trainer_logprobs=[]
                if trainer_logprobs is None
                else [0.0] * len(prompt) + trainer_logprobs[i][in_completion].tolist(),
            )
        )
    return rows


def sampled_positions(rollout: CapturedRollout, sequence: TrainingSequence) -> dict[int, float]:
    """Where each call's sampled tokens sit in ``sequence``, with the engine's logprob, from
    the call records themselves (a call's prompt is everything before its sampled tokens)."""
    calls = {call.index: call for call in rollout.calls}
    positions = {}
    for index in sequence.calls:
        call = calls[index]
        start = len(call.prompt_ids)
        assert sequence.input_ids[start : start + len(call.sampled_ids)] == call.sampled_ids
        for offset, logprob in enumerate(call.logprobs):
            positions[start + offset] = logprob
    return positions


@dataclass
class Training:
    trainer: Any
    source: ScriptedRollouts
    batch: dict[str, Any]
    rows: list[Row]
    warnings: list[str]
    changed: bool


def make_trainer(folder: Path, source: ScriptedRollouts, output: Path, **options: Any) -> Any:
    from datasets import Dataset
    from trl import GRPOConfig

    from openenv_hub.trl import CaptureGRPOTrainer

    class Instrumented(CaptureGRPOTrainer):  # type: ignore[misc, valid-type]
        """Keeps a copy of each batch TRL computes its loss on."""

        loss_batches: list[dict[str, Any]]

        def _compute_loss(self, model: Any, inputs: dict[str, Any]) -> Any:
            kept = {k: v.detach().clone() if hasattr(v, "detach") else v for k, v in inputs.items()}
            self.loss_batches.append(kept)
            return super()._compute_loss(model, inputs)

    args = GRPOConfig(
        output_dir=str(output), max_steps=1, per_device_train_batch_size=GENERATIONS,
        num_generations=GENERATIONS, max_completion_length=40, learning_rate=1e-2,
        logging_steps=1, report_to="none", save_strategy="no", seed=0, use_cpu=True, bf16=False,
    )  # fmt: skip
    dataset = Dataset.from_dict({"prompt": [PROMPT] * 8, "task": ["ls"] * 8})
    trainer = Instrumented(
        model=str(folder), rollouts=source, args=args, train_dataset=dataset, **options
    )
    trainer.loss_batches = []
    return trainer


def parameters(trainer: Any) -> list[Any]:
    return [p.detach().clone() for p in trainer.model.parameters()]


@pytest.fixture(scope="module")
def proxies(vllm: Engine, tiny_chat_model_folder: Path) -> Iterator[tuple[Any, Any]]:
    relay = ServerThread(stripping_relay(vllm))  # type: ignore[arg-type]
    relay.start()
    options = {"model": vllm.model, "tokenizer": tiny_chat_model_folder}
    proxy = CaptureProxy(engine_url=vllm.base_url, **options).start()
    faulty = CaptureProxy(engine_url=f"{relay.url}/v1", **options).start()
    try:
        yield proxy, faulty
    finally:
        proxy.stop()
        faulty.stop()
        relay.stop()


@pytest.fixture(scope="module")
def training(
    proxies: tuple[Any, Any], tiny_chat_model_folder: Path, tmp_path_factory: Any
) -> Training:
    source = ScriptedRollouts(*proxies)
    trainer = make_trainer(tiny_chat_model_folder, source, tmp_path_factory.mktemp("grpo"))
    warned: list[str] = []
    handler = logging.Handler()
    handler.emit = lambda record: warned.append(record.getMessage())  # type: ignore[method-assign]
    logger = logging.getLogger("openenv_hub.trl.trainer")
    logger.addHandler(handler)
    before = parameters(trainer)
    try:
        trainer.train()
    finally:
        logger.removeHandler(handler)
    after = parameters(trainer)
    changed = any(not a.equal(b) for a, b in zip(before, after, strict=True))
    [batch] = trainer.loss_batches  # one step, one batch of GENERATIONS rows
    return Training(trainer, source, batch, rows_of(batch), warned, changed)


def test_the_loss_mask_covers_exactly_the_sampled_tokens(training: Training) -> None:
    good = [(q, r) for q, r in training.source.made if q.index != FAULTY]
    assert len(good) == GENERATIONS - 1
    interleaved = 0
    for _, rollout in good:
        assert rollout.report.ok and len(rollout.calls) == CALLS
        [sequence] = rollout.sequences
        [row] = [row for row in training.rows if row.ids == sequence.input_ids]
        sampled = sampled_positions(rollout, sequence)
        expected = [1 if position in sampled else 0 for position in range(len(row.ids))]
        differ = [p for p, (a, b) in enumerate(zip(row.mask, expected, strict=True)) if a != b]
        assert differ == [], f"{rollout.name}: the trainer's mask differs at positions {differ}"
        assert row.mask == sequence.loss_mask
        # Multi-turn: the completion holds tokens the model did not sample (a tool's result,
        # a user turn) between tokens it did, and those are out of the loss.
        first, last = row.mask.index(1), len(row.mask) - 1 - row.mask[::-1].index(1)
        interleaved += 0 in row.mask[first:last]
    assert interleaved == len(good)
    assert any(call.reply.get("tool_calls") for _, r in good for call in r.calls)
    assert training.changed  # the step trained on them


def test_the_trainer_receives_the_engines_logprobs(training: Training) -> None:
    import torch

    assert "importance_sampling_ratio" in training.batch, "TRL's correction did not run"
    worst = 0.0
    for request, rollout in training.source.made:
        if request.index == FAULTY:
            continue
        [sequence] = rollout.sequences
        [row] = [row for row in training.rows if row.ids == sequence.input_ids]
        for position, logprob in sampled_positions(rollout, sequence).items():
            engine = torch.tensor(logprob, dtype=torch.float32).item()
            assert row.sampling_logprobs[position] == engine  # the recorded value, as is
            worst = max(worst, abs(row.trainer_logprobs[position] - engine))
    # The trainer scores the same tokens with the same model folder: they agree, and TRL's
    # importance-sampling correction ran on the engine's logprobs.
    print(f"largest difference between the engine's and the trainer's logprobs: {worst:.2e}")
    assert worst < 1e-3
    [logged] = [e for e in training.trainer.state.log_history if "loss" in e]
    assert logged["sampling/sampling_logp_difference/max"] < 1e-3
    assert logged["sampling/importance_sampling_ratio/min"] > 0.99


def test_a_rollout_graded_fatal_is_left_out_visibly(training: Training) -> None:
    [(request, rollout)] = [(q, r) for q, r in training.source.made if q.index == FAULTY]
    assert rollout.report.codes("fatal") and set(rollout.report.codes("fatal")) == {"no_token_ids"}
    [left_out] = training.trainer.untrainable
    assert (left_out.index, left_out.name, left_out.code) == (FAULTY, rollout.name, "no_token_ids")
    assert any(rollout.name in w and "not trained on" in w for w in training.warnings)
    [logged] = [e for e in training.trainer.state.log_history if "loss" in e]
    assert logged["capture/untrainable_ratio"] == 1 / GENERATIONS
    # In the batch its row is a filler that adds nothing to the loss.
    empty = [row for row in training.rows if sum(row.mask) == 0]
    assert len(empty) == 1 and len(empty[0].ids) == 2
    assert request.row == {"task": "ls"}  # the dataset's other columns reached the source


def test_a_trainer_told_to_refuse_stops_before_training(
    proxies: tuple[Any, Any], tiny_chat_model_folder: Path, tmp_path: Path
) -> None:
    source = ScriptedRollouts(*proxies)
    trainer = make_trainer(tiny_chat_model_folder, source, tmp_path, on_untrainable="raise")
    before = parameters(trainer)
    with pytest.raises(UntrainableRolloutError) as raised:
        trainer.train()
    [refused] = raised.value.rollouts
    assert (refused.index, refused.code) == (FAULTY, "no_token_ids")
    assert f"rollout {FAULTY} (" in str(raised.value) and "graded fatal" in str(raised.value)
    assert trainer.loss_batches == []
    assert all(a.equal(b) for a, b in zip(before, parameters(trainer), strict=True))
