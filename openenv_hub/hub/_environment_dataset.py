"""A Hub dataset that declares an environment (``environment.yaml`` at its root), resolved at one
commit: its files on this machine, the declaration chosen, and its task rows.

Nothing of the dataset runs here. Where its declaration says that the environment's server is
the dataset's own folder (or an image it names), :func:`resolve_environment_dataset` asks the
user's consent to run it, for the exact commit it downloaded, before it returns: the caller
runs what it returns and nothing else.

Layer: services.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from openenv_hub.errors import ConfigurationError
from openenv_hub.hub._datasets import DatasetRef, download_dataset, parse_dataset_ref
from openenv_hub.hub._environment_file import (
    ENVIRONMENT_FILE,
    EnvironmentDeclaration,
    OpenEnvFramework,
    parse_environment_file,
)
from openenv_hub.hub._install import ensure_trusted

__all__ = ["EnvironmentDataset", "resolve_environment_dataset"]


@dataclass(frozen=True)
class EnvironmentDataset:
    """A dataset's environment at one commit, with its files in ``path``.

    Attributes:
        ref: The reference it was resolved from (``hf://datasets/NS/NAME[/ID][@REV]``).
        commit: The commit its files are at.
        path: The dataset's files.
        declaration: The environment chosen from its ``environment.yaml``.
    """

    ref: DatasetRef
    commit: str
    path: Path
    declaration: EnvironmentDeclaration

    @property
    def openenv(self) -> OpenEnvFramework:
        framework = self.declaration.openenv
        assert framework is not None  # resolve_environment_dataset chose one that has it
        return framework

    @property
    def reference(self) -> str:
        """``hf://datasets/NS/NAME/ID@COMMIT``: this environment at this commit, exactly."""
        pinned = DatasetRef(self.ref.repo_id, self.declaration.id, self.commit)
        return str(pinned)

    @property
    def folder(self) -> Path | None:
        """The environment folder in the dataset (its ``openenv.yaml``), or None when the
        server comes from a Space or an image."""
        if not self.openenv.runs_dataset_code:
            return None
        return _inside(self.path, self.openenv.folder)

    @property
    def rows_folder(self) -> Path:
        """Where the task rows are: ``dataset.path``, else the folder's declared taskset (a
        folder of it), else the dataset's root."""
        location = self.declaration.dataset
        if location is not None and location.path:
            return _inside(self.path, location.path)
        folder = self.folder
        if folder is not None:
            from openenv_hub.model.manifest import load_manifest

            taskset = load_manifest(folder).taskset
            source = taskset.source if taskset is not None else None
            if source and "://" not in source:
                return _inside(folder, source)
        return self.path

    def rows(self, split: str | None = None) -> list[dict[str, Any]]:
        """The task rows (of ``split``; of every declared split when None), each with its
        ``split``: the rows of the ``.jsonl`` files under :attr:`rows_folder`, whose names
        give their split (``test.jsonl``, ``test-00000.jsonl``)."""
        wanted = {split} if split else set(self.declaration.splits or ())
        rows = []
        for file in sorted(self.rows_folder.rglob("*.jsonl")):
            name = file.stem.split("-")[0]
            if wanted and name not in wanted:
                continue
            for number, line in enumerate(file.read_text(encoding="utf-8").splitlines(), 1):
                if line.strip():
                    rows.append({**_row(line, file, number), "split": name})
        return rows


def resolve_environment_dataset(
    ref: str | DatasetRef,
    *,
    endpoint: str | None = None,
    token: str | None = None,
    trust_remote_code: bool = False,
    into: Path | None = None,
) -> EnvironmentDataset:
    """The environment ``ref`` names, its dataset's files at the commit ``ref``'s revision is
    at (downloaded once per commit). When its server is the dataset's own folder, or an image
    the dataset names, the user's consent to run it is asked for that commit first.

    Raises:
        ConfigurationError: The dataset has no ``environment.yaml``, it cannot be read, or it
            declares no environment of that id that OpenEnv runs.
        RemoteCodeNotTrustedError: Its code would run, and there is no consent.
        HubError: The dataset or revision does not exist, or the Hub did not answer.
    """
    parsed = parse_dataset_ref(ref) if isinstance(ref, str) else ref
    source = download_dataset(parsed, into=into, endpoint=endpoint, token=token)
    where = f"hf://datasets/{parsed.repo_id}"
    declared = source.path / ENVIRONMENT_FILE
    if not declared.is_file():
        raise ConfigurationError(
            f"The dataset {parsed.repo_id} has no {ENVIRONMENT_FILE} at its root: it declares "
            "no environment.",
            hint="Publish one with 'openenv push --dataset', or pass the dataset as a taskset "
            "(openenv eval ENV --tasks hf://datasets/NS/NAME).",
        )
    text = declared.read_text(encoding="utf-8")
    declaration = parse_environment_file(text, where=where).environment(
        parsed.environment_id, where=where
    )
    if declaration.openenv is None:
        raise ConfigurationError(
            f"The environment {declaration.id} of {where} declares no openenv framework "
            f"(it has {', '.join(declaration.frameworks)}).",
            hint="Add frameworks: {openenv: {space_id: NS/NAME}} (or image, or manifest).",
        )
    found = EnvironmentDataset(parsed, source.commit, source.path, declaration)
    _ask_consent(found, trust_remote_code)
    if found.folder is not None and not (found.folder / found.openenv.manifest).is_file():
        raise ConfigurationError(
            f"{where} names {found.openenv.manifest} as its environment, and it holds none.",
            hint="Push the environment folder with 'openenv push --dataset'.",
        )
    return found


def _ask_consent(found: EnvironmentDataset, trust_remote_code: bool) -> None:
    """Consent to run what the dataset names here: its folder, or its image (a Space's code
    is asked about by the runtime that runs it)."""
    framework, short = found.openenv, found.commit[:12]
    if framework.runs_dataset_code:
        what = f"Serve the environment {found.declaration.id} of {found.ref.repo_id} at {short}"
    elif framework.image:
        what = f"Run the image {framework.image} that {found.ref.repo_id} at {short} names"
    else:
        return
    ensure_trusted(found.ref.repo_id, what, yes=trust_remote_code, kind="dataset")


def _inside(root: Path, relative: str) -> Path:
    """``root / relative``, refused when it resolves outside ``root``."""
    path = (root / relative).resolve() if relative else root.resolve()
    if not path.is_relative_to(root.resolve()):
        raise ConfigurationError(f"{relative!r} points outside the dataset.")
    return path


def _row(line: str, file: Path, number: int) -> dict[str, Any]:
    try:
        row = json.loads(line)
    except json.JSONDecodeError as exc:
        raise ConfigurationError(f"{file.name}:{number} is not JSON: {exc}") from None
    if not isinstance(row, dict):
        raise ConfigurationError(f"{file.name}:{number} is not a JSON object.")
    return row
