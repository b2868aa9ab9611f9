"""Publish environments as Hugging Face Spaces, and use them from the Hub.

Each function builds ``HfApi(endpoint=...)`` with the endpoint read when it is called (the
``endpoint`` argument, else ``HF_ENDPOINT``), so LocalHub and other Hub-compatible servers work.
``huggingface_hub`` is imported on first use, so importing a client stays fast.
Errors of the Hub client come back as :class:`~openenv_hub.errors.HubError` subclasses with a
``hint``.

Every module here is private (``_push``, ``_urls``, ...): what callers use is exported below,
including what other packages build on: :class:`HubContext` (endpoint, token and ``HfApi`` for
one operation), :func:`hub_call`, :func:`translate` and :func:`hub_error` (the Hub client's
errors as :class:`~openenv_hub.errors.HubError`), :func:`version_key` and :func:`wait_for_space`.

Example::

    from openenv_hub.hub import install, push, versions

    result = push("envs/echo_env", "alice/echo_env", version="0.1.0")
    print(result.url, result.app_url, result.pip_install)
    [v.name for v in versions("alice/echo_env")]  # ['0.1.0']
    install("alice/echo_env", "0.1.0", yes=True)

Layer: services.
"""

from __future__ import annotations

from openenv_hub.hub._access import Account, account
from openenv_hub.hub._bundle import Bundle, stage_bundle
from openenv_hub.hub._card import ENVIRONMENT_TAGS, environment_tags
from openenv_hub.hub._client import HubContext, RepoId, parse_repo_id, resolve_endpoint
from openenv_hub.hub._connect import app_url
from openenv_hub.hub._datasets import (
    DATASET_PREFIX,
    DatasetRef,
    DatasetSource,
    download_dataset,
    parse_dataset_ref,
)
from openenv_hub.hub._diff import FileChanges
from openenv_hub.hub._download import SpaceSource, download_space
from openenv_hub.hub._environment_dataset import EnvironmentDataset, resolve_environment_dataset
from openenv_hub.hub._environment_file import (
    ENVIRONMENT_FILE,
    SPEC_VERSION,
    DatasetLocation,
    EnvironmentDeclaration,
    EnvironmentFile,
    OpenEnvFramework,
    parse_environment_file,
)
from openenv_hub.hub._errors import hub_call, hub_error, translate
from openenv_hub.hub._fork import ForkResult, fork
from openenv_hub.hub._ignore import FileSelection, Skipped, select_files, stage_files
from openenv_hub.hub._install import TRUST_ENV, InstallResult, ensure_trusted, install, parse_spec
from openenv_hub.hub._installed import ensure_installed, find_installed
from openenv_hub.hub._jobs import TERMINAL_STAGES, JobsClient, JobState, job_label
from openenv_hub.hub._plan import PushPlan
from openenv_hub.hub._pull import pull
from openenv_hub.hub._push import PushResult, push
from openenv_hub.hub._push_dataset import DatasetPushResult, push_dataset
from openenv_hub.hub._quality import (
    QUALITY_END,
    QUALITY_START,
    add_scorecard,
    folder_digest,
    read_scorecard,
    scorecard_section,
)
from openenv_hub.hub._secrets import HUB_TOKEN_VARIABLES, MissingSecret
from openenv_hub.hub._target import PushTarget, SpaceLink, push_target, read_link
from openenv_hub.hub._urls import SpaceUrls
from openenv_hub.hub._versions import Version, version_key, versions
from openenv_hub.hub._wait import SpaceState, wait_for_space

__all__ = [
    "DATASET_PREFIX",
    "ENVIRONMENT_FILE",
    "ENVIRONMENT_TAGS",
    "HUB_TOKEN_VARIABLES",
    "QUALITY_END",
    "QUALITY_START",
    "SPEC_VERSION",
    "TERMINAL_STAGES",
    "TRUST_ENV",
    "Account",
    "Bundle",
    "DatasetLocation",
    "DatasetPushResult",
    "DatasetRef",
    "DatasetSource",
    "EnvironmentDataset",
    "EnvironmentDeclaration",
    "EnvironmentFile",
    "FileChanges",
    "FileSelection",
    "ForkResult",
    "HubContext",
    "InstallResult",
    "JobState",
    "JobsClient",
    "MissingSecret",
    "OpenEnvFramework",
    "PushPlan",
    "PushResult",
    "PushTarget",
    "RepoId",
    "Skipped",
    "SpaceLink",
    "SpaceSource",
    "SpaceState",
    "SpaceUrls",
    "Version",
    "account",
    "add_scorecard",
    "app_url",
    "download_dataset",
    "download_space",
    "ensure_installed",
    "ensure_trusted",
    "environment_tags",
    "find_installed",
    "folder_digest",
    "fork",
    "hub_call",
    "hub_error",
    "install",
    "job_label",
    "parse_dataset_ref",
    "parse_environment_file",
    "parse_repo_id",
    "parse_spec",
    "pull",
    "push",
    "push_dataset",
    "push_target",
    "read_link",
    "read_scorecard",
    "resolve_endpoint",
    "resolve_environment_dataset",
    "scorecard_section",
    "select_files",
    "stage_bundle",
    "stage_files",
    "translate",
    "version_key",
    "versions",
    "wait_for_space",
]
