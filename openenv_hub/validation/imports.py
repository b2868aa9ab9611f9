"""Import-level checks: the app, the classes and their schemas, run in a child process.

A child process keeps the environment's modules out of the caller's ``sys.modules`` (two
environments may both have a top-level ``server`` package). Run it by hand with
``python -m openenv_hub.validation.imports ENV_DIR``; it prints the results as JSON.

Layer: client.
"""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

from openenv_hub.checks.result import CheckResult, run_checks
from openenv_hub.checks.target import EnvTarget
from openenv_hub.validation.failure import describe_import_failure
from openenv_hub.validation.sample import sample_from_schema

__all__ = ["import_checks"]


def import_checks(target: EnvTarget, *, timeout_s: float = 120.0) -> list[CheckResult]:
    """Run the checks below in a fresh interpreter with the environment folder on sys.path."""
    command = [sys.executable, "-m", "openenv_hub.validation.imports", str(target.path.resolve())]
    done = subprocess.run(
        command, cwd=target.path, capture_output=True, text=True, timeout=timeout_s, check=False
    )
    try:
        rows = json.loads(done.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        detail = (done.stderr or done.stdout)[-1500:]
        return [
            CheckResult("app_import", False, f"the import probe crashed:\n{detail}", level="import")
        ]
    return [CheckResult(**row) for row in rows]


class _Loaded:
    """What the checks below share: the manifest, and what they imported."""

    def __init__(self, target: EnvTarget) -> None:
        self.target = target
        self.app: Any = None
        self.action_cls: Any = None
        self.observation_cls: Any = None
        self.schemas: dict[str, Any] = {}


def resolve(path: str, package: str) -> Any:
    """``module:Name``, or a bare class name looked up where OpenEnv keeps models."""
    if ":" in path:
        module, _, attr = path.partition(":")
        value: Any = importlib.import_module(module)
        for part in attr.split("."):
            value = getattr(value, part)
        return value
    for module in (f"{package}.models", f"{package}.client", "models", "client"):
        try:
            return getattr(importlib.import_module(module), path)
        except (ImportError, AttributeError):
            continue
    raise ImportError(f"class '{path}' not found in {package}.models or {package}.client")


def check_app_import(loaded: _Loaded) -> CheckResult:
    manifest = loaded.target.manifest
    assert manifest is not None
    try:
        loaded.app = resolve(manifest.app_path, manifest.name)
    except BaseException as exc:  # SystemExit too: an app that exits on import is broken
        return CheckResult(
            "app_import",
            False,
            f"'{manifest.app_path}' does not import: {describe_import_failure(exc)}",
            "Fix the import, or the 'app' field of openenv.yaml.",
        )
    if not callable(loaded.app):
        return CheckResult("app_import", False, f"'{manifest.app_path}' is not an ASGI app")
    return CheckResult("app_import", True, f"{manifest.app_path} imports")


def check_classes(loaded: _Loaded) -> CheckResult:
    manifest = loaded.target.manifest
    assert manifest is not None
    pool = getattr(getattr(loaded.app, "state", None), "sessions", None)
    found, problems = {}, []
    for field in ("action", "observation", "client"):
        path = getattr(manifest, field)
        if path is None:
            continue
        try:
            found[field] = resolve(path, manifest.name)
        except Exception as exc:
            problems.append(f"{field} '{path}': {type(exc).__name__}: {exc}")
    loaded.action_cls = found.get("action") or getattr(pool, "action_cls", None)
    loaded.observation_cls = found.get("observation")
    if problems:
        return CheckResult(
            "classes", False, "; ".join(problems), "Fix the class paths in openenv.yaml."
        )
    if loaded.action_cls is None:
        return CheckResult(
            "classes", False, "no action class", "Set 'action: module:Class' in openenv.yaml."
        )
    names = ", ".join(f"{k} {v.__name__}" for k, v in found.items()) or "from the app"
    return CheckResult("classes", True, names)


def check_schemas(loaded: _Loaded) -> CheckResult:
    if loaded.action_cls is None:
        return CheckResult.skip("schemas", "no action class", level="import")
    for name, cls in (("action", loaded.action_cls), ("observation", loaded.observation_cls)):
        if cls is not None:
            loaded.schemas[name] = cls.model_json_schema()
    return CheckResult("schemas", True, f"JSON schemas of {', '.join(loaded.schemas)}")


def check_sample_action(loaded: _Loaded) -> CheckResult:
    schema = loaded.schemas.get("action")
    if schema is None:
        return CheckResult.skip("sample_action", "no action schema", level="import")
    sample = sample_from_schema(schema)
    loaded.action_cls.model_validate(sample)
    return CheckResult("sample_action", True, f"built {json.dumps(sample)[:80]} from the schema")


def _main(env_dir: str) -> None:
    target = EnvTarget.load(Path(env_dir))
    sys.path.insert(0, env_dir)
    if target.manifest is None:
        results = [CheckResult.skip("app_import", "openenv.yaml is invalid", level="import")]
    else:
        checks = [check_app_import, check_classes, check_schemas, check_sample_action]
        loaded = _Loaded(target)
        results = []
        for check in checks:
            results += run_checks([check], loaded, level="import")
            if not results[-1].ok:
                break
    print(json.dumps([asdict(r) for r in results]))


if __name__ == "__main__":
    _main(sys.argv[1])
