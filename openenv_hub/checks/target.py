"""What a local validation looks at: an environment folder and its manifest.

Layer: model.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from openenv_hub.model.manifest import Manifest, ManifestError, load_manifest

__all__ = ["EnvTarget"]


@dataclass
class EnvTarget:
    """An environment folder. ``manifest`` is ``None`` when ``openenv.yaml`` is broken."""

    path: Path
    manifest: Manifest | None = None
    manifest_error: ManifestError | None = None
    notes: dict[str, str] = field(default_factory=dict)

    @classmethod
    def load(cls, path: Path) -> EnvTarget:
        try:
            return cls(path=path, manifest=load_manifest(path))
        except ManifestError as exc:
            return cls(path=path, manifest_error=exc)

    @property
    def name(self) -> str:
        return self.manifest.name if self.manifest else self.path.resolve().name

    @property
    def package_dir(self) -> Path:
        """``NAME/`` (openenv-hub layout), or the folder itself (OpenEnv layout)."""
        nested = self.path / self.name
        return nested if nested.is_dir() else self.path

    @property
    def package_missing(self) -> bool:
        """The manifest names a package that is neither ``NAME/`` nor the folder itself (no
        ``__init__.py`` or ``server/`` at its top): a renamed ``name:``, or the wrong folder."""
        if self.manifest is None or not self.manifest.is_environment:
            return False
        if (self.path / self.name).is_dir():
            return False
        return not ((self.path / "__init__.py").is_file() or (self.path / "server").is_dir())

    def package_candidates(self) -> list[str]:
        """Sub-folders that look like an environment's package (``__init__.py`` and
        ``server/``), for a "did you mean"."""
        return sorted(
            child.name
            for child in self.path.iterdir()
            if (child / "__init__.py").is_file() and (child / "server").is_dir()
        )
