"""Evaluating models on environments: tasksets, rollouts at scale, pass@k, rescoring.

``openenv eval ENV --model NAME --base-url URL`` (or ``--policy module:function``) plays each
task K times through an :class:`~openenv_hub.client.EnvPool`, writes one row per rollout to a
results folder as it ends, then a summary and a plot; ``openenv rescore RESULTS`` replays the
saved actions to recompute their rewards. See docs/eval.md.

Layer: client.
"""

from openenv_hub.eval.declared import DeclaredTasks, dataset_tasks, declared_tasks
from openenv_hub.eval.generators import (
    TaskGenerator,
    generated_task,
    generated_tasks,
    load_generator,
)
from openenv_hub.eval.passk import pass_at_k, summarize
from openenv_hub.eval.plot import write_plot
from openenv_hub.eval.policies import ChatPolicy, Policy, assistant_message, load_function_policy
from openenv_hub.eval.publish import RESULTS_TAG_PREFIX, dataset_card, push_results, results_tag
from openenv_hub.eval.rescore import Rescored, rescore_rows
from openenv_hub.eval.results import ResultsFolder
from openenv_hub.eval.runner import EvalPlan, missing_pairs, rollout_seed, run_eval
from openenv_hub.eval.tasksets import KEY_COLUMNS, Task, load_tasks, server_tasks, task_from_row
from openenv_hub.eval.toolset import Toolset, environment_metadata, render_observation

__all__ = [
    "KEY_COLUMNS",
    "RESULTS_TAG_PREFIX",
    "ChatPolicy",
    "DeclaredTasks",
    "EvalPlan",
    "Policy",
    "Rescored",
    "ResultsFolder",
    "Task",
    "TaskGenerator",
    "Toolset",
    "assistant_message",
    "dataset_card",
    "dataset_tasks",
    "declared_tasks",
    "environment_metadata",
    "generated_task",
    "generated_tasks",
    "load_function_policy",
    "load_generator",
    "load_tasks",
    "missing_pairs",
    "pass_at_k",
    "push_results",
    "render_observation",
    "rescore_rows",
    "results_tag",
    "rollout_seed",
    "run_eval",
    "server_tasks",
    "summarize",
    "task_from_row",
    "write_plot",
]
