"""The settings of one evaluation run, checked and recorded: who plays (a model at an
OpenAI-compatible API, or a Python function), the sampling, the plan, and the ``run.json`` a
results folder keeps so that a resume, a push or a rescore knows how the rows were made.

``openenv eval`` parses its options into :class:`RunOptions` and prints; this module decides.

Layer: client.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from importlib.metadata import version
from typing import TYPE_CHECKING, Any

from openenv_hub.errors import ConfigurationError
from openenv_hub.eval.chat_model import ChatPolicy
from openenv_hub.eval.failures import Backoff
from openenv_hub.eval.policies import load_function_policy
from openenv_hub.eval.runner import EvalPlan
from openenv_hub.eval.tasksets import Task, taskset_digest
from openenv_hub.eval.toolset import environment_digest, environment_metadata
from openenv_hub.shown_urls import shown

if TYPE_CHECKING:
    from openenv_hub.eval.policies import Policy
    from openenv_hub.eval.sources import ServedEnv

__all__ = ["RESERVED_SAMPLING", "RunOptions", "environment_record", "parse_sampling_args"]

SPACE_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*$")
#: What each request sets itself, so ``--sampling-args`` may not.
RESERVED_SAMPLING = frozenset({"model", "messages", "tools", "seed", "stream"})


def parse_sampling_args(text: str | None) -> dict[str, Any]:
    """More settings sent with each model request, from a JSON object (``--sampling-args``)."""
    if not text:
        return {}
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigurationError(
            f"--sampling-args is not JSON: {exc}",
            hint="""Give a JSON object, e.g. --sampling-args '{"top_k": 20, "stop": ["</answer>"]}'""",
        ) from None
    if not isinstance(value, dict):
        raise ConfigurationError(
            f"--sampling-args is {type(value).__name__} JSON, not an object.",
            hint="""Give a JSON object, e.g. --sampling-args '{"top_k": 20}'""",
        )
    reserved = sorted(set(value) & RESERVED_SAMPLING)
    if reserved:
        raise ConfigurationError(
            f"--sampling-args may not set {', '.join(reserved)}: each request sets them.",
            hint="The model is --model; the seed is derived from --seed for each rollout.",
        )
    return value


def environment_record(url: str, space: str | None) -> dict[str, Any]:
    """What the server at ``url`` says it is (its name, version, and a digest of its metadata
    and schemas), and its Space."""
    metadata = environment_metadata(url)
    return {
        "name": metadata.get("name"),
        "version": metadata.get("version"),
        "space": space,
        "manifest_digest": environment_digest(url),
    }


@dataclass(frozen=True)
class RunOptions:
    """What an evaluation run was asked to do (``openenv eval``'s options, by the same names).

    Exactly one of ``model`` (with ``base_url``) or ``policy`` (``module:function``) plays.
    """

    model: str | None = None
    base_url: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    policy: str | None = None
    tasks: str | None = None
    split: str | None = None
    limit: int | None = None
    rollouts_per_task: int = 1
    concurrency: int = 4
    max_turns: int = 8
    sampling: dict[str, Any] = field(default_factory=dict)
    seed: int = 0
    pass_threshold: float = 1.0
    max_retries: int = 4
    request_timeout_s: float = 120.0
    rollout_timeout_s: float | None = None
    keep_errors: bool = False
    space: str | None = None

    def check(self) -> None:
        """Raise :class:`~openenv_hub.errors.ConfigurationError` for options that cannot
        work together, before anything starts."""
        if self.space is not None and not SPACE_ID.match(self.space):
            raise ConfigurationError(
                f"--space {self.space!r} is not a Space id.",
                hint="Give it as NS/NAME, e.g. my-org/word-game.",
            )
        if (self.model is None) == (self.policy is None):
            raise ConfigurationError(
                "Choose one of --model (with --base-url) or --policy.",
                hint="e.g. --model Qwen/Qwen3-0.6B --base-url http://127.0.0.1:8000/v1",
            )
        if self.model is not None and self.base_url is None:
            raise ConfigurationError("--model needs --base-url (an OpenAI-compatible API).")

    @property
    def backoff(self) -> Backoff:
        return Backoff(max_retries=self.max_retries)

    def player(self) -> Policy:
        """The chat policy of ``model``, else the function ``policy`` names (loaded now)."""
        self.check()
        if self.model is not None and self.base_url is not None:
            return ChatPolicy(
                self.base_url,
                self.model,
                api_key_env=self.api_key_env,
                sampling=self.sampling,
                timeout_s=self.request_timeout_s,
                backoff=self.backoff,
            )
        return load_function_policy(str(self.policy), threads=self.concurrency)

    def plan(self, tasks: list[Task]) -> EvalPlan:
        """The rollouts to play: each task ``rollouts_per_task`` times."""
        return EvalPlan(
            tasks,
            self.rollouts_per_task,
            self.concurrency,
            self.max_turns,
            self.pass_threshold,
            self.seed,
            backoff=self.backoff,
            rollout_timeout_s=self.rollout_timeout_s,
            keep_errors=self.keep_errors,
        )

    def run_settings(
        self, served: ServedEnv, environment: dict[str, Any], tasks: list[Task], tasks_from: str
    ) -> dict[str, Any]:
        """What ``run.json`` records: the environment, who played, the tasks (``tasks_from``
        names their source) and every setting that changes a row, URLs without credentials."""
        return {
            "env": shown(served.pinned),
            "environment": environment,
            "model": self.model,
            "base_url": shown(self.base_url) if self.base_url else self.base_url,
            "policy": self.policy,
            "tasks": tasks_from,
            "split": self.split,
            "limit": self.limit,
            "taskset_digest": taskset_digest(tasks),
            "sampling": self.sampling if self.model is not None else {},
            "seed": self.seed,
            "rollouts_per_task": self.rollouts_per_task,
            "max_turns": self.max_turns,
            "pass_threshold": self.pass_threshold,
            "expected_rollouts": len(tasks) * self.rollouts_per_task,
            "max_retries": self.max_retries,
            "request_timeout_s": self.request_timeout_s,
            "rollout_timeout_s": self.rollout_timeout_s,
            "toolkit_version": version("openenv-hub"),
        }
