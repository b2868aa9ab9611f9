"""``environment.yaml``: the declaration at the root of a Hub dataset that makes it an environment
(OpenEnv's RFC 006, "Hugging Face RL Environment Datasets", and the Hub's "Environment
Datasets" page).

What is followed from the RFC: ``spec_version`` (``hf-rl-env-0.1``, or the Hub page's
``hf-env-0.1``), a non-empty list of ``environments``, each with an ``id`` and ``frameworks``,
and the optional ``title``, ``description``, ``config_name``, ``splits``, ``dataset``,
``runtime`` and ``reward`` (kept as written; ``splits`` and ``dataset.path`` are used). The
``openenv`` framework names where the environment's server comes from, in one of:

- ``space_id: NS/NAME``: a Space (run as ``from_hub`` runs Spaces);
- ``image: REF``: a container image (run by the Docker runtime);
- ``manifest: openenv.yaml``, alone: the environment folder is in the dataset itself, where
  ``manifest`` is. This reading of ``manifest`` without one of the others is this toolkit's
  own (the RFC asks for exactly one of ``space_id``, ``image`` or ``package``); it is what
  ``openenv push --dataset`` writes.

``package`` is read and refused with a message (installing a package a dataset names is not
supported). ``min_version`` is kept and not enforced: it names a version of OpenEnv's own
package, which this toolkit is not. Unknown fields are kept, as the RFC expects more.

Example::

    spec_version: hf-rl-env-0.1
    environments:
      - id: word_game
        title: Word Game
        splits: [test]
        dataset: {path: tasks}
        frameworks:
          openenv: {manifest: openenv.yaml}

Layer: services.
"""

from __future__ import annotations

from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from openenv_hub.errors import ConfigurationError

__all__ = [
    "ENVIRONMENT_FILE",
    "SPEC_VERSION",
    "DatasetLocation",
    "EnvironmentDeclaration",
    "EnvironmentFile",
    "OpenEnvFramework",
    "parse_environment_file",
]

ENVIRONMENT_FILE = "environment.yaml"
#: The version written; the Hub's page spells it ``hf-env-0.1``, which is read too.
SPEC_VERSION = "hf-rl-env-0.1"
_SPEC_VERSIONS = (SPEC_VERSION, "hf-env-0.1")
_ID = r"^[A-Za-z0-9][\w.-]*$"
#: A relative path whose parts do not start with a dot (so never ``..``).
_RELATIVE = r"^[\w-][\w.-]*(/[\w-][\w.-]*)*$"


class OpenEnvFramework(BaseModel):
    """The ``openenv`` entry of an environment's ``frameworks``: where its server comes from."""

    model_config = ConfigDict(extra="allow")

    min_version: str | None = None
    space_id: str | None = Field(None, pattern=r"^[\w.-]+/[\w.-]+$")
    image: str | None = None
    package: str | None = None
    manifest: str = Field("openenv.yaml", pattern=_RELATIVE)
    secrets: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _one_source(self) -> OpenEnvFramework:
        given = [key for key in ("space_id", "image", "package") if getattr(self, key)]
        if len(given) > 1:
            raise ValueError(f"give one of space_id, image and package, not {' and '.join(given)}")
        if self.package:
            raise ValueError(
                "package is not supported here: publish the environment folder in the dataset "
                "(manifest: openenv.yaml), or name a space_id or an image"
            )
        if not self.manifest.endswith((".yaml", ".yml")):
            raise ValueError(f"manifest must name a .yaml file, not {self.manifest!r}")
        return self

    @property
    def runs_dataset_code(self) -> bool:
        """Whether the server is the dataset's own folder (its code runs here)."""
        return not (self.space_id or self.image)

    @property
    def folder(self) -> str:
        """The environment folder's path in the dataset (``""``: its root)."""
        return self.manifest.rpartition("/")[0]


class DatasetLocation(BaseModel):
    """Where an environment's task rows are in the dataset (``path``: a folder of JSON Lines
    files named by split, as ``openenv eval --tasks`` reads them)."""

    model_config = ConfigDict(extra="allow")

    path: str | None = Field(None, pattern=_RELATIVE)


class EnvironmentDeclaration(BaseModel):
    """One environment a dataset declares."""

    model_config = ConfigDict(extra="allow")

    id: str = Field(..., pattern=_ID)
    title: str | None = None
    description: str | None = None
    config_name: str | None = None
    splits: list[str] | None = None
    dataset: DatasetLocation | None = None
    runtime: dict[str, Any] | None = None
    reward: Any = None
    frameworks: dict[str, dict[str, Any] | None] = Field(..., min_length=1)

    @model_validator(mode="after")
    def _openenv_entry(self) -> EnvironmentDeclaration:
        self.openenv  # noqa: B018 - validates the entry now, so a bad one fails at parse time
        return self

    @property
    def openenv(self) -> OpenEnvFramework | None:
        """The ``openenv`` framework entry, or None when the environment declares none."""
        if "openenv" not in self.frameworks:
            return None
        return OpenEnvFramework.model_validate(self.frameworks["openenv"] or {})


class EnvironmentFile(BaseModel):
    """A dataset's ``environment.yaml``."""

    model_config = ConfigDict(extra="allow")

    spec_version: str
    environments: list[EnvironmentDeclaration] = Field(..., min_length=1)

    @model_validator(mode="after")
    def _known_and_unique(self) -> EnvironmentFile:
        if self.spec_version not in _SPEC_VERSIONS:
            raise ValueError(
                f"spec_version {self.spec_version!r} is not one this reads "
                f"({' or '.join(_SPEC_VERSIONS)})"
            )
        ids = [env.id for env in self.environments]
        doubled = sorted({i for i in ids if ids.count(i) > 1})
        if doubled:
            raise ValueError(f"two environments have the id {doubled[0]!r}")
        return self

    def environment(self, environment_id: str | None, *, where: str) -> EnvironmentDeclaration:
        """The environment ``environment_id`` (None: the only one, or the one OpenEnv runs).

        Raises:
            ConfigurationError: No such environment, or several and none named.
        """
        ids = [env.id for env in self.environments]
        if environment_id is not None:
            for env in self.environments:
                if env.id == environment_id:
                    return env
            raise ConfigurationError(
                f"{where} declares no environment {environment_id!r}.",
                hint=f"It declares {', '.join(ids)}: write {where}/ID with one of them.",
            )
        runnable = [env for env in self.environments if env.openenv is not None]
        if len(runnable) == 1:
            return runnable[0]
        raise ConfigurationError(
            f"{where} declares {len(runnable) or 'no'} environments OpenEnv runs "
            f"({', '.join(ids)}).",
            hint=f"Name one: {where}/ID." if runnable else "Add frameworks: {openenv: ...}.",
        )

    def dump(self) -> str:
        data = self.model_dump(mode="json", exclude_none=True, exclude_defaults=False)
        return yaml.safe_dump(data, sort_keys=False, allow_unicode=True)


def parse_environment_file(text: str, *, where: str) -> EnvironmentFile:
    """``environment.yaml`` of ``where`` (a dataset reference, for messages), validated.

    Raises:
        ConfigurationError: It is not YAML, or not a declaration this reads (the message says
            which field).
    """
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigurationError(f"{ENVIRONMENT_FILE} of {where} is not YAML: {exc}") from None
    if not isinstance(data, dict):
        raise ConfigurationError(f"{ENVIRONMENT_FILE} of {where} is not a mapping.")
    try:
        return EnvironmentFile.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(part) for part in first["loc"]) or "(top)"
        said = first["msg"]
        if first["type"] == "string_pattern_mismatch" and field.endswith(("manifest", "path")):
            said = f"{first['input']!r} is not a path inside the dataset (relative, no '..')"
        raise ConfigurationError(
            f"{ENVIRONMENT_FILE} of {where}: {field}: {said}",
            hint="See docs/importing.md for the fields it holds.",
        ) from None
