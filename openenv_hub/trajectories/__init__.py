"""Recorded episodes: actions, observations, rewards, breakdowns and timings, to JSON Lines or
Parquet, and to the Hugging Face Hub as a dataset.

Record from the client with :func:`record_episodes` (what ``openenv record`` runs), or from the
server with ``create_app(..., trajectories="episodes.jsonl")``. Each row is a
:class:`StepRecord`; load a file or a pushed dataset back with ``datasets.load_dataset``.

Layer: client.
"""

from openenv_hub.trajectories.files import FORMATS, TrajectoryWriter, read_records
from openenv_hub.trajectories.hub import dataset_card, push_trajectories, read_hub_records
from openenv_hub.trajectories.recorder import (
    EnvironmentInfo,
    EpisodeSummary,
    RecordingSummary,
    StepError,
    environment_info,
    record_episodes,
)
from openenv_hub.trajectories.records import COLUMNS, EpisodeBuffer, StepRecord
from openenv_hub.trajectories.server import ServerRecorder, server_recorder

__all__ = [
    "COLUMNS",
    "FORMATS",
    "EnvironmentInfo",
    "EpisodeBuffer",
    "EpisodeSummary",
    "RecordingSummary",
    "ServerRecorder",
    "StepError",
    "StepRecord",
    "TrajectoryWriter",
    "dataset_card",
    "environment_info",
    "push_trajectories",
    "read_hub_records",
    "read_records",
    "record_episodes",
    "server_recorder",
]
