"""TRL's ``GRPOTrainer``, trained on captured agent rollouts.

:class:`CaptureGRPOTrainer` takes a :class:`~openenv_hub.trl.RolloutSource` instead of
generating completions itself. For each prompt of a step's batch (each repeated
``num_generations`` times, as TRL samples them) it asks the source for one rollout, and trains
on the rollout's captured token sequence (:mod:`openenv_hub.trl.completions`): the engine's
own token ids, the model's sampled tokens counted in the loss and nothing else (tool results,
user turns and template markers inside the completion are masked out through TRL's
``env_mask``), and the engine's own logprobs. No text is tokenised again.

What it does with the engine's logprobs. TRL corrects for the difference between the
sampler's logprobs and the trainer's (importance sampling, ``vllm_importance_sampling_*`` in
``GRPOConfig``, on by default) only when it drives vLLM itself (``use_vllm``). Here the
sampler is the engine behind the capture proxy, outside the trainer, so this class turns that
correction on after TRL's setup, feeding it the captured logprobs: each rollout's loss is
weighed by the ratio of the trainer's probability of its tokens to the engine's, within TRL's
clip bounds, and TRL logs how far the two were apart (``sampling/sampling_logp_difference/*``,
``sampling/importance_sampling_ratio/*``). That is also what keeps later steps sound: the
engine serves the weights it was started with (pushing the trained weights to it is the
engine's business, not done here), so the policy the rollouts came from and the policy being
trained drift apart step by step, and the correction accounts for it.

A rollout that cannot be trained on (:class:`~openenv_hub.trl.Untrainable`: a capture graded
fatal, no sampled token, several sequences, another temperature) is never trained on
silently: with ``on_untrainable="drop"`` (the default) it is logged as a warning, kept in
:attr:`CaptureGRPOTrainer.untrainable`, counted in the ``capture/untrainable_ratio`` metric,
and contributes nothing to the loss or to its group's baseline; with ``"raise"`` the step stops
with :class:`~openenv_hub.errors.UntrainableRolloutError` before anything is trained.

Needs the ``trl`` extra (``pip install "openenv-hub[trl]"``).

Layer: client.
"""

from __future__ import annotations

import hashlib
import logging
import warnings
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Literal, cast

from trl.trainer.grpo_config import GRPOConfig
from trl.trainer.grpo_trainer import GRPOTrainer

from openenv_hub.errors import ConfigurationError, UntrainableRolloutError
from openenv_hub.trl.completions import Untrainable, rollout_batch, rollout_reward
from openenv_hub.trl.rollouts import CapturedRollout, RolloutRequest, RolloutSource

__all__ = ["CaptureGRPOTrainer", "rollout_sampling"]

logger = logging.getLogger(__name__)

#: GRPOTrainer arguments that make it generate completions itself.
_GENERATING_ARGUMENTS = ("rollout_func", "tools", "environment_factory")


def rollout_sampling(args: GRPOConfig) -> dict[str, Any]:
    """The sampling parameters ``args`` asks for, in chat completions names (what a
    :class:`~openenv_hub.trl.RolloutRequest` carries): temperature, top-p and the most tokens
    one model call may sample, and top-k, min-p and the repetition penalty when set."""
    sampling: dict[str, Any] = {"temperature": args.temperature, "top_p": args.top_p}
    if args.max_completion_length:
        sampling["max_tokens"] = args.max_completion_length
    if args.top_k:
        sampling["top_k"] = args.top_k
    if args.min_p:
        sampling["min_p"] = args.min_p
    if args.repetition_penalty != 1.0:
        sampling["repetition_penalty"] = args.repetition_penalty
    return sampling


def rollout_seed(seed: int, step: int, index: int) -> int:
    """A seed for rollout ``index`` of step ``step`` of a run seeded ``seed`` (below 2**31)."""
    digest = hashlib.sha256(f"{seed}:{step}:{index}".encode()).digest()
    return int.from_bytes(digest[:4], "big") >> 1


class _EngineOutsideTheTrainer:
    """What TRL calls its vLLM backend, for the one call it makes on the rollout path: load
    the new weights before a step's rollouts. The engine here is outside the trainer and keeps
    the weights it serves; the importance-sampling correction accounts for the difference."""

    def sync_weights(self) -> None:
        return None


class CaptureGRPOTrainer(GRPOTrainer):
    """``GRPOTrainer`` whose completions are captured rollouts (see the module's docstring).

    Args:
        model: The policy: a model folder or Hub id, or a loaded model. It must be the model
            the engine serves (the same folder), or the logprobs compared are of two models.
        rollouts: Runs one rollout per request (:class:`~openenv_hub.trl.RolloutSource`).
        reward_funcs: TRL reward functions; default :func:`~openenv_hub.trl.rollout_reward`,
            the reward the source gave each rollout. Each gets the columns ``rollout_reward``
            and ``rollout_name`` besides the dataset's.
        args: The ``GRPOConfig``; ``use_vllm`` must be off (the engine is outside).
        on_untrainable: ``"drop"`` (log it and leave it out of the loss) or ``"raise"``.
        max_concurrent_rollouts: How many rollouts run at once (in threads).
        kwargs: Passed on to ``GRPOTrainer`` (``train_dataset``, ``processing_class``, ...);
            not ``rollout_func``, ``tools`` or ``environment_factory``.

    Attributes:
        untrainable: Every rollout left out so far, in the order met.
    """

    def __init__(
        self,
        model: Any,
        rollouts: RolloutSource,
        reward_funcs: Any = None,
        args: GRPOConfig | None = None,
        *,
        on_untrainable: Literal["drop", "raise"] = "drop",
        max_concurrent_rollouts: int = 1,
        **kwargs: Any,
    ) -> None:
        given = [name for name in _GENERATING_ARGUMENTS if kwargs.get(name) is not None]
        if given:
            raise ConfigurationError(
                f"CaptureGRPOTrainer takes its completions from `rollouts`; it does not take "
                f"{', '.join(given)} (use GRPOTrainer for those)"
            )
        if args is not None and args.use_vllm:
            raise ConfigurationError(
                "CaptureGRPOTrainer's rollouts are sampled by the engine behind the capture "
                "proxy: set use_vllm=False (the captured logprobs feed TRL's correction)"
            )
        if on_untrainable not in ("drop", "raise"):
            raise ConfigurationError(
                f'on_untrainable must be "drop" or "raise", not {on_untrainable!r}'
            )
        if max_concurrent_rollouts < 1:
            raise ConfigurationError("max_concurrent_rollouts must be at least 1")
        self.rollout_source = rollouts
        self.on_untrainable = on_untrainable
        self.max_concurrent_rollouts = max_concurrent_rollouts
        self.untrainable: list[Untrainable] = []
        self._rows: list[dict[str, Any]] = []
        with warnings.catch_warnings():
            # TRL warns that `rollout_func` is experimental; this class is what uses it, and
            # its tests are what notice when TRL changes it.
            warnings.filterwarnings("ignore", "You are using 'rollout_func'", UserWarning)
            super().__init__(
                model,
                [rollout_reward] if reward_funcs is None else reward_funcs,
                args,
                rollout_func=self._rollout_func,
                **kwargs,
            )
        if self.vllm_importance_sampling_correction:
            self._correct_with_captured_logprobs()

    def _correct_with_captured_logprobs(self) -> None:
        """Turn on TRL's importance-sampling correction with the captured logprobs: TRL runs
        it where ``use_vllm`` is set, and on the rollout path that flag does nothing else but
        ask its vLLM backend for new weights (see :class:`_EngineOutsideTheTrainer`)."""
        if self.loss_type == "vespo" and self.vllm_importance_sampling_mode not in (
            "token_truncate",
            "token_mask",
        ):
            raise ConfigurationError(
                "The vespo loss needs vllm_importance_sampling_mode 'token_truncate' or "
                f"'token_mask', not {self.vllm_importance_sampling_mode!r}"
            )
        self.use_vllm = True
        self.vllm_generation = _EngineOutsideTheTrainer()  # type: ignore[assignment]
        self._last_loaded_step = -1

    def _generate_and_score_completions(self, inputs: list[dict[str, Any]]) -> dict[str, Any]:
        self._rows = [dict(row) for row in inputs]  # the columns each rollout is asked with
        output: dict[str, Any] = super()._generate_and_score_completions(inputs)
        return output

    def _rollout_func(self, prompts: list[Any], trainer: Any) -> dict[str, list[Any]]:
        """TRL's ``rollout_func``: one rollout per prompt, as TRL's completions."""
        rollouts = self._run(self._requests(prompts))
        batch, left_out = rollout_batch(
            rollouts, temperature=self.temperature, filler_id=self._filler_id()
        )
        self._account(left_out, len(rollouts))
        return batch

    def _requests(self, prompts: list[Any]) -> list[RolloutRequest]:
        step = self.state.global_step
        sampling = rollout_sampling(cast(GRPOConfig, self.args))
        rows = self._rows if len(self._rows) == len(prompts) else [{} for _ in prompts]
        return [
            RolloutRequest(
                prompt=prompt,
                row={k: v for k, v in row.items() if k != "prompt"},
                sampling=dict(sampling),
                seed=rollout_seed(self.args.seed, step, index),
                index=index,
                step=step,
            )
            for index, (prompt, row) in enumerate(zip(prompts, rows, strict=True))
        ]

    def _run(self, requests: list[RolloutRequest]) -> list[CapturedRollout]:
        workers = min(self.max_concurrent_rollouts, len(requests))
        if workers <= 1:
            return [self._run_one(request) for request in requests]
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="rollout") as pool:
            return list(pool.map(self._run_one, requests))

    def _run_one(self, request: RolloutRequest) -> CapturedRollout:
        try:
            rollout = self.rollout_source(request)
        except Exception:
            logger.error(
                "Rollout %d of step %d (prompt %r) failed; the step stops",
                request.index,
                request.step,
                request.prompt_text[:80],
            )
            raise
        if not isinstance(rollout, CapturedRollout):
            raise ConfigurationError(
                f"The rollout source returned {type(rollout).__name__} for rollout "
                f"{request.index}; it must return a CapturedRollout "
                "(CapturedRollout.from_session(session, reward=...))"
            )
        return rollout

    def _filler_id(self) -> int:
        """The token that fills a left-out rollout's place (masked out of everything)."""
        pad = self._tokenizer.pad_token_id
        return int(pad if pad is not None else self.eos_token_ids[0])

    def _account(self, left_out: list[Untrainable], total: int) -> None:
        for item in left_out:
            logger.warning(
                "Rollout %d (%s) is not trained on: %s", item.index, item.name, item.reason
            )
        if left_out and self.on_untrainable == "raise":
            raise UntrainableRolloutError(left_out)
        self.untrainable.extend(left_out)
        self._log_metric("capture/untrainable_ratio", len(left_out) / max(total, 1))
