"""What the quality checks are asked to hold an environment to: the manifest's ``quality:``
section (its defaults when there is none), with the functions and files it names loaded.

The oracle, the secrets and the extra non-solutions are the environment author's code, imported
here from the environment folder (first on ``sys.path``), never sent to the server: the agent
cannot reach them. A name that does not load is reported by the check that needed it, with the
reason, not raised.

Layer: client.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from openenv_hub.errors import ConfigurationError
from openenv_hub.eval import Policy, Task, load_function_policy
from openenv_hub.model.manifest import Manifest, Quality
from openenv_hub.support.folder_imports import import_from_folder

__all__ = ["QualitySpec", "Solutions", "load_function", "task_row"]

#: ``{task key: the actions of its solution}``, from a recorded-solutions file.
Solutions = dict[str, list[dict[str, Any]]]


def task_row(task: Task) -> dict[str, Any]:
    """A task as the author's functions receive it: ``key``, ``split``, ``prompt``, ``reset``."""
    return {"key": task.key, "split": task.split, "prompt": task.prompt, "reset": dict(task.reset)}


@dataclass
class QualitySpec:
    """The quality settings of one environment, and what they name, loaded.

    Attributes:
        quality: The manifest's ``quality:`` section (defaults when it has none).
        name: The environment's name ("" when unknown, for a URL alone).
        version: Its version.
        root: The environment folder (None when only a URL is known).
        manifest: Its manifest, when known.
        volatile: Observation fields that differ between two identical runs (timings), as the
            observation class declares them (``replay_ignores``); left out of comparisons.
    """

    quality: Quality = field(default_factory=lambda: Quality())
    name: str = ""
    version: str = ""
    root: Path | None = None
    manifest: Manifest | None = None
    volatile: frozenset[str] = frozenset()
    _loaded: dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def of(cls, manifest: Manifest | None, root: Path | None = None) -> QualitySpec:
        """The spec of ``manifest`` (its folder ``root``, whose code the oracle may import)."""
        if manifest is None:
            return cls()
        spec = cls(
            quality=manifest.quality or Quality(),
            name=manifest.name,
            version=manifest.version,
            root=root.resolve() if root is not None else None,
            manifest=manifest,
        )
        spec.volatile = spec._volatile()
        return spec

    @property
    def declared_range(self) -> tuple[float, float] | None:
        """The reward range an OpenEnv manifest declares (``validation: reward_range``)."""
        declared = (self.manifest.validation or {}) if self.manifest else {}
        value = declared.get("reward_range")
        if isinstance(value, list | tuple) and len(value) == 2:
            low, high = (float("-inf") if v is None else float(v) for v in value)
            return (low, high)
        return None

    def oracle_policy(self) -> Policy | None:
        """The oracle's policy, when the manifest names one (ConfigurationError if it does not
        load)."""
        oracle = self.quality.oracle
        if oracle is None or oracle.policy is None:
            return None
        policy: Policy = self._once("policy", lambda: self._policy(str(oracle.policy)))
        return policy

    def solutions(self) -> Solutions | None:
        """The recorded solutions, when the manifest names a file (ConfigurationError if it
        cannot be read)."""
        oracle = self.quality.oracle
        if oracle is None or oracle.solutions is None:
            return None
        found: Solutions = self._once(
            "solutions", lambda: self._read_solutions(str(oracle.solutions))
        )
        return found

    def secrets_of(self, task: Task) -> list[str]:
        """What the manifest's ``secrets`` function says the agent must never read of ``task``."""
        oracle = self.quality.oracle
        if oracle is None or oracle.secrets is None:
            return []
        function = self._once("secrets", lambda: load_function(str(oracle.secrets), self.root))
        found = function(task_row(task))
        if not isinstance(found, list | tuple) or not all(isinstance(s, str) for s in found):
            raise ConfigurationError(f"{oracle.secrets} returned {found!r}, not a list of strings.")
        return list(found)

    def degenerate_of(self, task: Task) -> list[tuple[str, list[dict[str, Any]], str]]:
        """The environment's own non-solutions of ``task``, as ``(name, actions, note)`` (the
        note, "" when none, is shown with the non-solution's return)."""
        path = self.quality.degenerate
        if path is None:
            return []
        function = self._once("degenerate", lambda: load_function(path, self.root))
        found = function(task_row(task))
        try:
            return [
                (str(row["name"]), [dict(a) for a in row["actions"]], str(row.get("note") or ""))
                for row in found
            ]
        except (AttributeError, KeyError, TypeError, ValueError):
            raise ConfigurationError(
                f"{path} returned {str(found)[:200]}, not a list of {{name, actions}}.",
                hint="Return [{'name': 'returns None', 'actions': [{...}]}, ...].",
            ) from None

    @property
    def oracle_kind(self) -> str:
        oracle = self.quality.oracle
        if oracle is None:
            return "none"
        return f"policy {oracle.policy}" if oracle.policy else f"solutions {oracle.solutions}"

    # -- loading ---------------------------------------------------------------------------

    def _once(self, key: str, load: Callable[[], Any]) -> Any:
        if key not in self._loaded:
            self._loaded[key] = load()
        return self._loaded[key]

    def _policy(self, path: str) -> Policy:
        return load_function_policy(path, root=self.root)

    def _read_solutions(self, name: str) -> Solutions:
        if self.root is None:
            raise ConfigurationError(
                f"The recorded solutions {name} are a file of the environment folder.",
                hint="Validate the folder, or pass --manifest FOLDER with the URL.",
            )
        path = (self.root / name).resolve()
        if not path.is_relative_to(self.root) or not path.is_file():
            raise ConfigurationError(
                f"No recorded solutions at {name} in {self.root}.",
                hint="quality.oracle.solutions names a JSON Lines file inside the folder.",
            )
        solutions: Solutions = {}
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                solutions[str(row["key"])] = [dict(action) for action in row["actions"]]
            except (ValueError, KeyError, TypeError) as exc:
                raise ConfigurationError(
                    f"{path}:{number} is not a solution ({type(exc).__name__}: {exc}).",
                    hint='Each line is {"key": "TASK KEY", "actions": [{...}, ...]}.',
                ) from None
        return solutions

    def _volatile(self) -> frozenset[str]:
        path = self.manifest.observation if self.manifest else None
        if not path or ":" not in path:
            return frozenset()
        try:
            cls = load_function(path, self.root)
        except ConfigurationError:
            return frozenset()
        return frozenset(getattr(cls, "replay_ignores", ()) or ())


def load_function(path: str, root: Path | None) -> Any:
    """The object ``module:name`` names, imported from the folder ``root``.

    Raises:
        ConfigurationError: It does not import, or has no such name.
    """
    module_name, _, attribute = path.partition(":")
    try:
        module = import_from_folder(module_name, root)
    except Exception as exc:
        raise ConfigurationError(
            f"{path} does not import: {type(exc).__name__}: {exc}",
            hint="Fix the module, or the name in openenv.yaml's quality section.",
        ) from exc
    found = getattr(module, attribute, None)
    if found is None:
        raise ConfigurationError(f"{module_name} has no {attribute!r} ({path}).")
    return found
