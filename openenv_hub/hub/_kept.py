"""What ``install`` keeps: the toolkit as it is installed, and every editable install.

A Space's package depends on ``openenv-hub`` (often pinned to the wheel it bundles), and pip
would replace a development checkout of the toolkit (``pip install -e .``) with that wheel: the
checkout's edits would stop taking effect. So when the interpreter has openenv-hub, or any
package installed editable, the Space's package is installed alone (``--no-deps``), then its
other requirements, with every kept package pinned to its installed version (a constraints
file). What the Space asked for of a kept package is reported beside it.

A Space whose own package is installed editable is not installed over it at all.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "TOOLKIT",
    "KeptPackage",
    "canonical",
    "constraints_file",
    "kept_packages",
    "split_requirements",
]

TOOLKIT = "openenv-hub"


def canonical(name: str) -> str:
    """A distribution name as pip compares them (PEP 503)."""
    return re.sub(r"[-_.]+", "-", name).lower()


@dataclass(frozen=True)
class KeptPackage:
    """An installed distribution an install leaves as it is, and why."""

    name: str
    version: str
    editable: bool
    location: str = ""

    def describe(self) -> str:
        """``openenv-hub 0.1.0 (editable, from /src/openenv-hub)``."""
        how = f"editable, from {self.location}" if self.editable else "as installed"
        return f"{self.name} {self.version} ({how})"


def kept_packages(distributions: list[dict[str, Any]]) -> list[KeptPackage]:
    """The toolkit however installed, and every editable install, of ``distributions``
    (as :func:`~openenv_hub.discovery.installed_distributions` lists them)."""
    kept = {}
    for dist in distributions:
        name = str(dist.get("name") or "")
        if name and (dist.get("editable") or canonical(name) == TOOLKIT):
            location = str(dist.get("location") or "")
            kept[canonical(name)] = KeptPackage(
                name, str(dist.get("version")), bool(dist.get("editable")), location
            )
    return sorted(kept.values(), key=lambda package: canonical(package.name))


def split_requirements(
    requires: list[str], kept: list[KeptPackage]
) -> tuple[list[str], list[tuple[KeptPackage, str]]]:
    """``requires`` (``Requires-Dist`` lines) without optional extras, split into those to
    install and, for each kept package, what was asked of it."""
    by_name = {canonical(package.name): package for package in kept}
    install, asked = [], []
    for line in requires:
        if re.search(r"""\bextra\s*==""", line):
            continue
        name = canonical(re.split(r"[\s<>=!~;\[@(]", line.strip(), maxsplit=1)[0])
        if name in by_name:
            asked.append((by_name[name], line.strip()))
        else:
            install.append(line.strip())
    return install, asked


@contextmanager
def constraints_file(kept: list[KeptPackage]) -> Iterator[Path]:
    """A pip constraints file pinning each kept package to its installed version."""
    with tempfile.TemporaryDirectory(prefix="openenv-install-") as tmp:
        path = Path(tmp) / "constraints.txt"
        lines = [f"{package.name}=={package.version}" for package in kept]
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        os.chmod(path, 0o600)
        yield path
