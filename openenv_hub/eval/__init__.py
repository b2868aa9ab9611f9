"""Evaluating models on environments: tasksets, rollouts at scale, pass@k, rescoring.

``openenv eval ENV --model NAME --base-url URL`` (or ``--policy module:function``) plays each
task K times through an :class:`~openenv_hub.client.EnvPool`, writes one row per rollout to a
results folder as it ends, then a summary and a plot; ``openenv rescore RESULTS`` replays the
saved actions to recompute their rewards; ``openenv eval compare A B`` compares two runs.
Infrastructure errors (:class:`InfrastructureError`) are retried, and never scored. See
docs/eval.md.

Layer: client.
"""

from openenv_hub.eval.chat_model import ChatPolicy
from openenv_hub.eval.compare import Comparison, TaskDifference, compare_runs
from openenv_hub.eval.declared import DeclaredTasks, dataset_tasks, declared_tasks
from openenv_hub.eval.failures import ERROR_KINDS, Backoff, InfrastructureError
from openenv_hub.eval.generators import (
    TaskGenerator,
    generated_task,
    generated_tasks,
    load_generator,
)
from openenv_hub.eval.options import (
    RESERVED_SAMPLING,
    RunOptions,
    environment_record,
    parse_sampling_args,
)
from openenv_hub.eval.passk import pass_at_k, summarize, usage_totals
from openenv_hub.eval.plot import write_plot
from openenv_hub.eval.policies import (
    Completion,
    FunctionPolicy,
    Policy,
    assistant_message,
    load_function_policy,
)
from openenv_hub.eval.publish import RESULTS_TAG_PREFIX, dataset_card, push_results, results_tag
from openenv_hub.eval.rescore import Rescored, rescore_rows, rescored_rows
from openenv_hub.eval.results import ResultsFolder
from openenv_hub.eval.runner import (
    EvalPlan,
    check_environment,
    missing_pairs,
    rollout_seed,
    run_eval,
)
from openenv_hub.eval.sources import (
    DATASET_PREFIX,
    ServedEnv,
    declared_source,
    env_url,
    find_tasks,
    served_env,
)
from openenv_hub.eval.summary import RunPace, errors_over_limit, write_summary
from openenv_hub.eval.tasksets import (
    KEY_COLUMNS,
    Task,
    load_tasks,
    server_tasks,
    task_from_row,
    taskset_digest,
)
from openenv_hub.eval.toolset import (
    Toolset,
    environment_digest,
    environment_metadata,
    render_observation,
)

__all__ = [
    "DATASET_PREFIX",
    "ERROR_KINDS",
    "KEY_COLUMNS",
    "RESERVED_SAMPLING",
    "RESULTS_TAG_PREFIX",
    "Backoff",
    "ChatPolicy",
    "Comparison",
    "Completion",
    "DeclaredTasks",
    "EvalPlan",
    "FunctionPolicy",
    "InfrastructureError",
    "Policy",
    "Rescored",
    "ResultsFolder",
    "RunOptions",
    "RunPace",
    "ServedEnv",
    "Task",
    "TaskDifference",
    "TaskGenerator",
    "Toolset",
    "assistant_message",
    "check_environment",
    "compare_runs",
    "dataset_card",
    "dataset_tasks",
    "declared_source",
    "declared_tasks",
    "env_url",
    "environment_digest",
    "environment_metadata",
    "environment_record",
    "errors_over_limit",
    "find_tasks",
    "generated_task",
    "generated_tasks",
    "load_function_policy",
    "load_generator",
    "load_tasks",
    "missing_pairs",
    "parse_sampling_args",
    "pass_at_k",
    "push_results",
    "render_observation",
    "rescore_rows",
    "rescored_rows",
    "results_tag",
    "rollout_seed",
    "run_eval",
    "served_env",
    "server_tasks",
    "summarize",
    "task_from_row",
    "taskset_digest",
    "usage_totals",
    "write_plot",
    "write_summary",
]
