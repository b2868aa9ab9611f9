"""The base of the tree, and the errors of configuration, commands and local lookups."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any


class OpenEnvError(Exception):
    """Base class of every error raised by openenv-hub.

    ``message`` is what went wrong; ``hint`` (empty when there is nothing to add) says what to do
    next. The CLI prints both.
    """

    hint: str = ""

    def __init__(self, message: str = "", *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        if hint is not None:
            self.hint = hint


class DependencyNotInstalledError(OpenEnvError, ImportError):
    """An optional dependency is missing. The message says exactly what to install: the
    ``extra`` of ``distribution`` (openenv-hub's own by default, or an environment's)."""

    def __init__(
        self,
        package: str,
        extra: str,
        *,
        feature: str,
        distribution: str = "openenv-hub",
        hint: str | None = None,
    ) -> None:
        self.package = package
        self.extra = extra
        self.distribution = distribution
        super().__init__(
            f"{feature} needs the '{package}' package, which is not installed. "
            f'Install it with: pip install "{distribution}[{extra}]"',
            hint=hint,
        )


class ConfigurationError(OpenEnvError, ValueError):
    """An option, or a combination of options, that cannot work."""


class ManifestError(ConfigurationError):
    """``openenv.yaml`` is missing, is not YAML, or does not match the manifest model.

    Attributes: ``path`` (the file), ``field`` and ``line`` (1-based) when known, ``hint``.
    """

    def __init__(
        self,
        message: str,
        *,
        path: Path | None = None,
        field: str | None = None,
        line: int | None = None,
        hint: str = "",
    ) -> None:
        self.path, self.field, self.line, self.hint = path, field, line, hint
        where = path.name if path is not None else "openenv.yaml"
        if line is not None:
            where += f", line {line}"
        super().__init__(f"{where}: {message}")


class CommandError(OpenEnvError):
    """A known failure of a command: printed as 'Error: message' and 'Hint: hint', exit 1."""

    def __init__(self, message: str, *, hint: str = "") -> None:
        super().__init__(message)
        self.hint = hint


class DockerError(OpenEnvError):
    """No Docker engine, or a build or a container failed. ``hint`` says what to do.

    The library raises it (:mod:`openenv_hub.docker`, the runtimes, ``validate``); the CLI
    prints it as it prints every :class:`OpenEnvError`, message and hint.
    """


class PackagingError(OpenEnvError):
    """A wheel of openenv-hub could not be built."""


class ConcurrencyConfigurationError(ConfigurationError):
    def __init__(self, environment_name: str, max_concurrent_envs: int) -> None:
        self.environment_name = environment_name
        self.max_concurrent_envs = max_concurrent_envs
        super().__init__(
            f"Environment '{environment_name}' sets SUPPORTS_CONCURRENT_SESSIONS = False, so it "
            f"cannot run with max_concurrent_envs={max_concurrent_envs}. Use 1, or make the "
            "environment safe to run in several sessions at once and remove the flag."
        )


class EnvironmentValidationError(ConfigurationError):
    """An environment failed the checks that must pass before it is published.

    ``results`` holds every check (:class:`~openenv_hub.validation.CheckResult`), passed or not.
    """

    def __init__(self, path: str, results: Sequence[Any]) -> None:
        self.path = path
        self.results = list(results)
        failed = [r for r in self.results if not r.ok]
        lines = [f"  {r.name}: {r.message}" for r in failed]
        super().__init__(
            f"{path} failed {len(failed)} of {len(self.results)} checks, so it was not "
            "published:\n" + "\n".join(lines)
        )
        hints = [r.hint for r in failed if r.hint]
        self.hint = hints[0] if hints else f"Run 'openenv validate {path}' for details."


class InvalidVersionError(ConfigurationError):
    """A version that cannot be a git tag."""

    def __init__(self, version: str) -> None:
        self.version = version
        self.hint = "Use a version like 0.1.0 (letters, digits, '.', '-', '_' and '+')."
        super().__init__(f"{version!r} cannot be a version tag.")


class DestinationNotEmptyError(ConfigurationError):
    """A download would mix its files with files already in a folder."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.hint = "Choose a new or empty folder, or remove this one first."
        super().__init__(f"{path} already exists and is not empty; nothing was written.")


class EnvironmentNotFoundError(OpenEnvError, LookupError):
    """No installed environment has this name (entry point group ``openenv.environments``)."""

    def __init__(self, name: str, *, installed: Sequence[str], suggestions: Sequence[str]) -> None:
        self.name = name
        self.installed = list(installed)
        self.suggestions = list(suggestions)
        close = f" Did you mean {' or '.join(repr(s) for s in suggestions)}?" if suggestions else ""
        super().__init__(f"No installed environment is named {name!r}.{close}")
        known = ", ".join(self.installed) if self.installed else "none"
        self.hint = f"Installed environments: {known}. Install one with 'openenv install NS/NAME'."


class RemoteCodeNotTrustedError(OpenEnvError, PermissionError):
    """Running code from the Hub (a Space's, a dataset's) needs the user's consent, which was
    not given. ``kind`` names what holds the code."""

    def __init__(self, repo_id: str, *, reason: str, kind: str = "Space") -> None:
        self.repo_id = repo_id
        self.kind = kind
        self.hint = (
            f"Read the {kind}'s code first; then pass --yes (yes=True / trust_remote_code=True "
            "in Python) or set OPENENV_TRUST_REMOTE_CODE=1."
        )
        doing = "installing" if kind == "Space" else "running"
        super().__init__(f"Not {doing} {repo_id}: {reason}")


class JudgeError(OpenEnvError):
    """An LLM judge could not grade: unreachable, a bad reply, or no score in its answer."""

    def __init__(self, message: str, *, url: str | None = None, hint: str = "") -> None:
        super().__init__(message)
        self.url = url
        self.hint = hint
