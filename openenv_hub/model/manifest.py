"""``openenv.yaml`` as a pydantic model: load, validate, dump, JSON schema.

Example:
    >>> manifest = Manifest(name="my_env")
    >>> manifest.app_path
    'my_env.server.app:app'

Errors name the field, its line in the file and what was expected::

    openenv.yaml, line 4: unknown field 'prot'. Did you mean 'port'?

OpenEnv's own manifests load too: ``type`` and ``runtime`` are accepted, ``app:
server.app:app`` is kept as written (it imports from the environment folder), and the legacy
``action`` / ``observation`` class-name strings (no ``module:``) are accepted.

Layer: model.
"""

from __future__ import annotations

import difflib
import json
import keyword
import re
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from openenv_hub.errors import ManifestError
from openenv_hub.model.manifest_sections import Quality, QualityCost, QualityOracle, Taskset

__all__ = [
    "MANIFEST_FILE",
    "Manifest",
    "ManifestError",
    "Quality",
    "QualityCost",
    "QualityOracle",
    "ResourceAmounts",
    "Resources",
    "Taskset",
    "load_manifest",
    "manifest_schema",
    "parse_manifest",
]

MANIFEST_FILE = "openenv.yaml"
_IMPORT_PATH = re.compile(r"^[A-Za-z_][\w.]*(:[A-Za-z_][\w.]*)?$")
_ENV_VAR = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_CPU = r"^([0-9]+m|[0-9]+(\.[0-9]+)?)$"
_MEMORY = r"^[0-9]+(\.[0-9]+)?(Ki|Mi|Gi|Ti|k|M|G|T)?$"


class ResourceAmounts(BaseModel):
    """An amount of CPU and memory, in Kubernetes' units."""

    model_config = ConfigDict(extra="forbid")

    cpu: str | None = Field(None, pattern=_CPU, description="CPU: '500m', '1', '2.5'.")
    memory: str | None = Field(None, pattern=_MEMORY, description="Memory: '512Mi', '2Gi'.")


class Resources(BaseModel):
    """What one server needs (``requests``) and may use at most (``limits``)."""

    model_config = ConfigDict(extra="forbid")

    requests: ResourceAmounts | None = Field(None, description="Reserved for each server.")
    limits: ResourceAmounts | None = Field(None, description="The most each server may use.")


class Manifest(BaseModel):
    """The ``openenv.yaml`` of an environment."""

    model_config = ConfigDict(extra="forbid", title="openenv.yaml")

    spec_version: int = Field(1, ge=1, description="Version of this manifest format.")
    kind: Literal["environment", "app"] = Field(
        "environment",
        description="'environment' (the default), or 'app': a Space that is not an environment "
        "(a catalog, a dashboard), which openenv push publishes without the environment checks "
        "and without the 'openenv' tag.",
    )
    name: str = Field(
        ..., description="Python package name of the environment (snake_case identifier)."
    )
    version: str = Field("0.1.0", description="Version of the environment.")
    description: str = Field("", description="One line saying what the environment does.")
    author: str | None = Field(None, description="Author or organisation.")
    license: str | None = Field(None, description="SPDX license identifier.")
    tags: list[str] = Field(default_factory=list, description="Hub tags, e.g. [openenv].")
    action: str | None = Field(
        None, description="Action class as 'module:Class' (a bare class name is accepted)."
    )
    observation: str | None = Field(
        None, description="Observation class as 'module:Class' (a bare class name is accepted)."
    )
    client: str | None = Field(None, description="Client class as 'module:Class'.")
    app: str | None = Field(
        None, description="ASGI app as 'module:attribute'. Default: '<name>.server.app:app'."
    )
    port: int = Field(8000, ge=1, le=65535, description="Port the server listens on.")
    max_concurrent_envs: int | None = Field(
        None, ge=1, description="Sessions the server runs at once."
    )
    variables: dict[str, str | int | float | bool] = Field(
        default_factory=dict, description="Environment variables (name: default value)."
    )
    secrets: list[str] = Field(
        default_factory=list, description="Names of secrets the Space needs (never values)."
    )
    hardware: str | None = Field(None, description="Space hardware, e.g. cpu-basic.")
    network: bool = Field(
        False,
        description="Whether the server reaches out to the network. Sandbox runtimes (daytona) "
        "give it none unless this is true.",
    )
    resources: Resources | None = Field(
        None,
        description="CPU and memory per server, e.g. {requests: {cpu: 500m, memory: 512Mi}} "
        "(Kubernetes deployments).",
    )
    exclude: list[str] = Field(
        default_factory=list,
        description="More files that openenv push leaves out, as .gitignore patterns.",
    )
    taskset: Taskset | None = Field(
        None,
        description="Where the environment's tasks are, e.g. {source: tasks} or "
        "{generator: 'my_env.tasks:make_task', size: 1000}.",
    )
    quality: Quality | None = Field(
        None,
        description="What openenv validate --level quality plays: an oracle, tasks, thresholds "
        "(docs/quality.md).",
    )
    type: str | None = Field(None, description="OpenEnv compatibility; 'space'.")
    runtime: str | None = Field(None, description="OpenEnv compatibility; 'fastapi'.")
    validation: dict[str, Any] | None = Field(
        None, description="OpenEnv compatibility: its validation policy block, kept as is."
    )

    @field_validator("name")
    @classmethod
    def _identifier(cls, value: str) -> str:
        if not value.isidentifier():
            raise ValueError(f"'{value}' is not a Python identifier; try '{suggest_name(value)}'")
        return value

    @field_validator("action", "observation", "client", "app")
    @classmethod
    def _import_path(cls, value: str | None) -> str | None:
        if value is not None and not _IMPORT_PATH.match(value):
            raise ValueError(f"'{value}' is not an import path like 'package.module:Name'")
        return value

    @field_validator("secrets", mode="before")
    @classmethod
    def _names_only(cls, value: Any) -> Any:
        if isinstance(value, dict):
            raise ValueError("list secret names only; never write secret values in openenv.yaml")
        return value

    @field_validator("variables", "secrets")
    @classmethod
    def _env_names(cls, value: Any) -> Any:
        for key in value:
            if not _ENV_VAR.match(key):
                raise ValueError(f"'{key}' is not a valid environment variable name")
        return value

    @model_validator(mode="after")
    def _threshold_above_the_bottom(self) -> Manifest:
        threshold = self.quality.pass_threshold if self.quality else None
        declared = (self.validation or {}).get("reward_range")
        if threshold is None or not isinstance(declared, list | tuple) or len(declared) != 2:
            return self
        bottom = declared[0]
        if isinstance(bottom, int | float) and threshold <= bottom:
            raise ValueError(
                f"quality.pass_threshold {threshold:g} is at or below the bottom of "
                f"validation.reward_range ({bottom:g}): every return would solve a task; set it "
                "to the return only a solution reaches, or leave it out to use the range's top"
            )
        return self

    @property
    def app_path(self) -> str:
        """The ASGI app to serve, as an import string."""
        return self.app or f"{self.name}.server.app:app"

    @property
    def is_environment(self) -> bool:
        """False for an ``app`` Space, which serves no environment."""
        return self.kind == "environment"

    @property
    def package(self) -> str:
        return self.name

    @property
    def oracle_policy(self) -> str | None:
        """The policy that solves the tasks (``quality.oracle.policy``), if one is named."""
        oracle = self.quality.oracle if self.quality else None
        return oracle.policy if oracle else None

    def dump(self) -> str:
        """The manifest as YAML, without fields left at their defaults."""
        data = self.model_dump(exclude_defaults=True)
        data = {"spec_version": self.spec_version, **data}
        return yaml.safe_dump(data, sort_keys=False, allow_unicode=True)


def suggest_name(value: str) -> str:
    """A valid package name close to ``value`` (``my-env`` -> ``my_env``, ``MyEnv`` -> ``my_env``)."""
    name = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", value.strip())
    name = re.sub(r"\W+", "_", name).strip("_").lower() or "my_env"
    if name[0].isdigit():
        name = f"env_{name}"
    return f"{name}_env" if keyword.iskeyword(name) else name


def manifest_schema() -> dict[str, Any]:
    """The JSON schema published as ``docs/manifest.schema.json``."""
    schema = Manifest.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    return schema


def manifest_schema_text() -> str:
    return json.dumps(manifest_schema(), indent=2, ensure_ascii=False) + "\n"


def load_manifest(env_dir: Path | str) -> Manifest:
    """Read ``openenv.yaml`` from an environment folder (or the file itself)."""
    path = Path(env_dir)
    if path.is_dir():
        path = path / MANIFEST_FILE
    if not path.is_file():
        raise ManifestError(
            f"not found in {path.parent}",
            path=path,
            hint="Create one with 'openenv init NAME', or run the command in an environment folder.",
        )
    return parse_manifest(path.read_text(encoding="utf-8"), path=path)


def parse_manifest(text: str, *, path: Path | None = None) -> Manifest:
    """Parse manifest text; errors carry the line of the offending field."""
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        data = yaml.safe_load(text)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else None
        raise ManifestError(
            f"invalid YAML: {exc.problem or exc}",
            path=path,
            line=line,
            hint="Check indentation and quoting.",
        ) from None
    if not isinstance(data, dict):
        raise ManifestError(
            "expected a mapping of fields (name: ..., port: ...)",
            path=path,
            hint="See docs/manifest.schema.json for the fields.",
        )
    try:
        return Manifest.model_validate(data)
    except ValidationError as exc:
        raise _explain(exc, _key_lines(node), path) from None


#: The fields of the manifest's nested sections, for a "did you mean" on a misspelt one.
_NESTED_FIELDS = {
    "taskset": list(Taskset.model_fields),
    "resources": list(Resources.model_fields),
    "quality": [*Quality.model_fields, *QualityOracle.model_fields, *QualityCost.model_fields],
}


def _key_lines(node: yaml.Node | None) -> dict[str, int]:
    if not isinstance(node, yaml.MappingNode):
        return {}
    return {str(key.value): key.start_mark.line + 1 for key, _ in node.value}


def _explain(exc: ValidationError, lines: dict[str, int], path: Path | None) -> ManifestError:
    error = exc.errors()[0]
    field = str(error["loc"][0]) if error["loc"] else None
    line = lines.get(field) if field else None
    if error["type"] == "extra_forbidden" and field is not None:
        unknown = str(error["loc"][-1])
        known = (
            _NESTED_FIELDS.get(field, []) if len(error["loc"]) > 1 else list(Manifest.model_fields)
        )
        close = difflib.get_close_matches(unknown, known, n=1)
        guess = f" Did you mean '{close[0]}'?" if close else ""
        hint = f"Rename '{unknown}' to '{close[0]}'." if close else ""
        hint += " The fields are listed in docs/manifest.schema.json."
        where = ".".join(str(part) for part in error["loc"])
        return ManifestError(
            f"unknown field '{where}'.{guess}", path=path, field=field, line=line, hint=hint.strip()
        )
    if error["type"] == "missing":
        return ManifestError(
            f"missing required field '{field}'", path=path, field=field, hint=f"Add '{field}: ...'."
        )
    where = ".".join(str(part) for part in error["loc"])
    message = str(error["msg"]).removeprefix("Value error, ")
    if field != "secrets":  # never echo what might be a secret value
        message += f" (got {error.get('input')!r})"
    expected = _expected(field)
    return ManifestError(
        f"field '{where}': {message}" + (f". Expected: {expected}" if expected else ""),
        path=path,
        field=field,
        line=line,
        hint="See docs/manifest.schema.json for every field.",
    )


def _expected(field: str | None) -> str:
    info = Manifest.model_fields.get(field or "")
    text = (info.description or "") if info is not None else ""
    return text[:1].lower() + text[1:]
