"""Checks that read the files of an environment folder without running anything.

A folder whose manifest says ``kind: app`` is a Space that is not an environment: it gets
:data:`APP_STATIC_CHECKS` (manifest, README card, Dockerfile), and its card must *not* carry the
tags of :data:`ENVIRONMENT_TAGS` (``openenv``, ``rl-environment``), which catalogs read as "this
is an environment".

Layer: model.
"""

from __future__ import annotations

import fnmatch
import json
import re
import sys
from pathlib import Path
from typing import Any

import yaml

from openenv_hub.checks.result import Check, CheckResult, run_checks
from openenv_hub.checks.target import EnvTarget

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

__all__ = [
    "APP_STATIC_CHECKS",
    "ENVIRONMENT_TAGS",
    "STATIC_CHECKS",
    "check_folder",
    "read_front_matter",
    "static_checks",
]

SPACE_COLORS = {"red", "yellow", "green", "blue", "indigo", "purple", "pink", "gray"}
_HUB_DEPS = {"openenv-hub", "openenv-core"}


def check_manifest(target: EnvTarget) -> CheckResult:
    if target.manifest is None:
        error = target.manifest_error
        message, folder = str(error), str(target.path.resolve())
        if folder not in message:
            message += f" (in {folder})"
        return CheckResult("manifest", False, message, getattr(error, "hint", ""))
    m = target.manifest
    if not m.is_environment:
        return CheckResult("manifest", True, f"{m.name} {m.version}, an app Space on port {m.port}")
    return CheckResult("manifest", True, f"{m.name} {m.version}, app {m.app_path}, port {m.port}")


def check_layout(target: EnvTarget) -> CheckResult:
    if target.manifest is None:
        return CheckResult.skip("layout", _MANIFEST_FIRST)
    if target.package_missing:
        return _missing_package(target)
    pkg = target.package_dir
    wanted = [pkg / "__init__.py", pkg / "client.py", pkg / "models.py", pkg / "server" / "app.py"]
    wanted += [target.path / name for name in ("README.md", "pyproject.toml")]
    missing = [p.relative_to(target.path).as_posix() for p in wanted if not p.is_file()]
    if missing:  # (a missing Dockerfile is the dockerfile check's to report)
        return CheckResult(
            "layout",
            False,
            f"missing {', '.join(missing)} in {target.path.resolve()}",
            "Compare with a fresh 'openenv init NAME' for the expected files.",
        )
    return CheckResult("layout", True, f"package {pkg.relative_to(target.path.parent)}/ complete")


_MANIFEST_FIRST = "openenv.yaml has an error (see the manifest check); fix it first"


def _missing_package(target: EnvTarget) -> CheckResult:
    """One failure for a manifest whose ``name`` has no package folder (and a guess)."""
    where = target.path.resolve() / target.name
    found = target.package_candidates()
    guess = f" The package here is {found[0]}/: did you mean 'name: {found[0]}'?" if found else ""
    return CheckResult(
        "layout",
        False,
        f"openenv.yaml names the package '{target.name}', but {where} is not a folder.{guess}",
        "Make 'name' in openenv.yaml the name of the package folder (and of its imports).",
    )


def check_space_card(target: EnvTarget) -> CheckResult:
    readme = target.path / "README.md"
    if not readme.is_file():
        return CheckResult(
            "space_card",
            False,
            f"{readme.resolve()} not found",
            "Add a README.md with a Space card.",
        )
    try:
        card = read_front_matter(readme.read_text(encoding="utf-8"))
    except ValueError as exc:
        return CheckResult("space_card", False, f"README.md: {exc}", _CARD_HINT)
    environment = target.manifest is None or target.manifest.is_environment
    port = target.manifest.port if target.manifest else None
    problems = _card_problems(card, port, environment=environment)
    if problems:
        hint = _CARD_HINT if environment else _APP_CARD_HINT
        return CheckResult(
            "space_card", False, "README.md front matter: " + "; ".join(problems), hint
        )
    tagged = "tagged openenv" if environment else "not tagged openenv (an app)"
    return CheckResult("space_card", True, f"sdk docker, app_port {card['app_port']}, {tagged}")


_CARD_HINT = (
    "Start README.md with '---', 'sdk: docker', 'app_port: 8000', 'tags: [openenv]', '---'."
)
_APP_CARD_HINT = (
    "Start README.md with '---', 'sdk: docker', 'app_port: <the manifest's port>', '---', and "
    "leave out the 'openenv' and 'rl-environment' tags: catalogs list Spaces tagged with them "
    "as environments."
)
#: The tags of an environment's card: OpenEnv's, and the Hub's filter of RL environments.
#: Catalogs list the Spaces that carry them; ``openenv push`` adds both to an environment's card.
ENVIRONMENT_TAGS = ("openenv", "rl-environment")


def read_front_matter(text: str) -> dict[str, Any]:
    """The YAML front matter of a README (between the first two ``---`` lines)."""
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---":
        raise ValueError("no front matter (the file must start with a '---' line)")
    try:
        end = next(i for i, line in enumerate(lines[1:], 1) if line.strip() == "---")
    except StopIteration:
        raise ValueError("front matter is not closed by a '---' line") from None
    try:
        data = yaml.safe_load("\n".join(lines[1:end]))
    except yaml.YAMLError as exc:
        raise ValueError(f"front matter is not valid YAML: {exc}") from None
    if not isinstance(data, dict):
        raise ValueError("front matter is not a mapping")
    return data


def _card_problems(card: dict[str, Any], port: int | None, *, environment: bool) -> list[str]:
    problems = []
    if card.get("sdk") != "docker":
        problems.append(f"sdk is {card.get('sdk')!r}, expected 'docker'")
    if port is not None and card.get("app_port") != port:
        problems.append(
            f"app_port is {card.get('app_port')!r}, expected {port} (the manifest's port)"
        )
    problems += _tag_problems(card, environment=environment)
    for key in ("colorFrom", "colorTo"):
        if key in card and card[key] not in SPACE_COLORS:
            problems.append(f"{key} {card[key]!r} is not one of {', '.join(sorted(SPACE_COLORS))}")
    return problems


def _tag_problems(card: dict[str, Any], *, environment: bool) -> list[str]:
    tags = card.get("tags") or []
    tags = tags if isinstance(tags, list) else []
    if environment and "openenv" not in tags:
        return ["tags do not include 'openenv'"]
    carried = [tag for tag in ENVIRONMENT_TAGS if tag in tags]
    if not environment and carried:
        listed = " and ".join(repr(tag) for tag in carried)
        return [f"tags include {listed}, but this Space is an app (kind: app), not an environment"]
    return []


def check_app_files(target: EnvTarget) -> CheckResult:
    missing = [name for name in ("README.md",) if not (target.path / name).is_file()]
    if not _dockerfile(target):
        missing.append("Dockerfile")
    if missing:
        return CheckResult(
            "app_files",
            False,
            f"missing {', '.join(missing)} in {target.path.resolve()}",
            "An app Space needs a README.md with a Space card and a Dockerfile.",
        )
    return CheckResult("app_files", True, "README.md and Dockerfile")


def check_pyproject(target: EnvTarget) -> CheckResult:
    path = target.path / "pyproject.toml"
    if not path.is_file():
        return CheckResult(
            "pyproject", False, f"{path.resolve()} not found", "Copy it from 'openenv init'."
        )
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        return CheckResult("pyproject", False, f"pyproject.toml is not valid TOML: {exc}")
    project, tool = data.get("project", {}), data.get("tool", {})
    known = target.manifest is not None and not target.package_missing
    problems = _pyproject_problems(project, tool, target.name if known else None)
    if problems:
        return CheckResult(
            "pyproject", False, "; ".join(problems), "See the pyproject.toml of 'openenv init'."
        )
    checked = (
        "package, server script, openenv-hub" if known else "openenv-hub (no package to check)"
    )
    return CheckResult("pyproject", True, f"{data['project']['name']}: {checked}")


def _pyproject_problems(
    project: dict[str, Any], tool: dict[str, Any], name: str | None
) -> list[str]:
    """What is wrong in ``pyproject.toml``; the package and its script only when ``name`` (the
    manifest's, with a folder of that name) is known."""
    problems = []
    if not project.get("name"):
        problems.append("[project] has no name")
    deps = {_requirement_name(d) for d in project.get("dependencies", [])}
    if not _HUB_DEPS & deps:
        problems.append("dependencies do not include openenv-hub")
    if name is None:
        return problems
    patterns = _package_patterns(tool.get("setuptools", {}).get("packages"))
    if patterns and not any(fnmatch.fnmatch(name, p) for p in patterns):
        problems.append(f"setuptools does not package '{name}' (include: {patterns})")
    scripts = project.get("scripts", {})
    if not any(
        str(v).startswith(f"{name}.server") or str(v).startswith("server.")
        for v in scripts.values()
    ):
        problems.append(
            f"[project.scripts] has no server script (e.g. {name.replace('_', '-')}-server)"
        )
    return problems


def _requirement_name(requirement: str) -> str:
    return re.split(r"[\s<>=!~;\[@]", requirement, maxsplit=1)[0].lower().replace("_", "-")


def _package_patterns(packages: Any) -> list[str] | None:
    if isinstance(packages, list):
        return packages
    if isinstance(packages, dict) and isinstance(packages.get("find"), dict):
        include = packages["find"].get("include")
        return include if isinstance(include, list) else None
    return None


def check_dockerfile(target: EnvTarget) -> CheckResult:
    path = _dockerfile(target)
    if path is None:
        return CheckResult(
            "dockerfile",
            False,
            f"no Dockerfile in {target.path.resolve()} (nor in server/)",
            "Copy it from 'openenv init'.",
        )
    lines = [line.strip() for line in _joined_lines(path.read_text(encoding="utf-8"))]
    port = target.manifest.port if target.manifest else None
    problems = _dockerfile_problems(lines, port)
    if problems:
        hints = _dockerfile_hints(problems, lines, port)
        return CheckResult("dockerfile", False, "; ".join(problems), " ".join(hints))
    return CheckResult("dockerfile", True, "ARG BASE_IMAGE, port, exec-form CMD")


_BASE_IMAGE_HINT = "Begin with 'ARG BASE_IMAGE=python:3.11-slim' and 'FROM ${BASE_IMAGE}'."
_CMD_HINT = 'End with an exec-form CMD ["..."].'


def _dockerfile_hints(problems: list[str], lines: list[str], port: int | None) -> list[str]:
    """What to do about each kind of problem found, once each."""
    hints = []
    if any("BASE_IMAGE" in problem for problem in problems):
        hints.append(_BASE_IMAGE_HINT)
    if any("EXPOSEd" in problem for problem in problems):
        served = sorted(
            {m for line in lines for m in re.findall(r"\b(?:EXPOSE|PORT=)\s*(\d+)", line)}
        )
        elsewhere = f" ({', '.join(served)} now)" if served else ""
        hints.append(
            f"Make openenv.yaml and the Dockerfile agree on the port: 'ENV PORT={port}' and "
            f"'EXPOSE {port}' in the Dockerfile, or set 'port:' in openenv.yaml to the port "
            f"the Dockerfile serves{elsewhere}."
        )
    if any("CMD" in problem for problem in problems):
        hints.append(_CMD_HINT)
    return hints


def _dockerfile_problems(lines: list[str], port: int | None) -> list[str]:
    problems = []
    first_from = next((i for i, line in enumerate(lines) if line.upper().startswith("FROM ")), None)
    arg = next(
        (i for i, line in enumerate(lines) if re.match(r"ARG\s+BASE_IMAGE\b", line, re.I)), None
    )
    if arg is None or first_from is None or arg > first_from:
        problems.append("no 'ARG BASE_IMAGE' before the first FROM")
    elif "BASE_IMAGE" not in lines[first_from]:
        problems.append("the first FROM does not use ${BASE_IMAGE}")
    if port is not None and not any(
        re.search(rf"\b(EXPOSE|PORT=)\s*{port}\b", line) for line in lines
    ):
        problems.append(f"port {port} (the manifest's) is neither EXPOSEd nor the default PORT")
    cmds = [line for line in lines if line.upper().startswith("CMD ")]
    if not cmds:
        problems.append("no CMD")
    elif not _exec_form(cmds[-1][4:]):
        problems.append(
            "CMD is in shell form; use the exec form CMD [\"...\"] so 'docker stop' is quick"
        )
    return problems


def _exec_form(value: str) -> bool:
    try:
        parsed = json.loads(value)
    except ValueError:
        return False
    return isinstance(parsed, list) and all(isinstance(part, str) for part in parsed)


def _joined_lines(text: str) -> list[str]:
    joined, current = [], ""
    for raw in text.splitlines():
        line = raw.rstrip()
        if line.lstrip().startswith("#") and not current:
            continue
        if line.endswith("\\"):
            current += line[:-1] + " "
            continue
        joined.append(current + line)
        current = ""
    return joined


def _dockerfile(target: EnvTarget) -> Path | None:
    for candidate in (target.path / "Dockerfile", target.path / "server" / "Dockerfile"):
        if candidate.is_file():
            return candidate
    return None


STATIC_CHECKS: list[Check[EnvTarget]] = [
    check_manifest,
    check_layout,
    check_space_card,
    check_pyproject,
    check_dockerfile,
]

APP_STATIC_CHECKS: list[Check[EnvTarget]] = [
    check_manifest,
    check_app_files,
    check_space_card,
    check_dockerfile,
]


def static_checks(target: EnvTarget) -> list[Check[EnvTarget]]:
    """The static checks of ``target``: an environment's, or an app Space's."""
    if target.manifest is not None and not target.manifest.is_environment:
        return APP_STATIC_CHECKS
    return STATIC_CHECKS


def check_folder(path: Path) -> list[CheckResult]:
    """The results of the static checks of the folder ``path`` (the ``static`` level of
    ``openenv validate``, which push runs on what it uploads)."""
    target = EnvTarget.load(path)
    return run_checks(static_checks(target), target, level="static")
