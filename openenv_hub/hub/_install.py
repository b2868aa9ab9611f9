"""``install``: ``pip install git+{endpoint}/spaces/NS/NAME@REV`` into an interpreter.

Installing a Space runs its code (its build backend, then whatever imports it), so it needs the
user's consent: ``yes=True``, ``OPENENV_TRUST_REMOTE_CODE=1``, or a "yes" typed at a terminal.
Without a terminal and without consent it refuses. The revision is resolved to a commit first,
consent is asked for that commit, and pip installs ``@<commit>``: a tag moved in between
cannot bring in code nobody agreed to.

An installed openenv-hub, and every package installed editable, are kept as they are
(:mod:`~openenv_hub.hub._kept`): the Space's package is then installed without its
dependencies, and its other requirements with those packages pinned.

A private Space's token reaches git and pip through their environment
(:mod:`~openenv_hub.hub._credentials`), never through a URL or an argument that ``ps`` shows;
every line of pip's output also passes through :func:`~openenv_hub.hub._urls.redact`.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from openenv_hub.errors import InstallError, RemoteCodeNotTrustedError
from openenv_hub.hub._client import HubContext, parse_repo_id
from openenv_hub.hub._credentials import credentials_env
from openenv_hub.hub._errors import hub_call
from openenv_hub.hub._kept import (
    KeptPackage,
    canonical,
    constraints_file,
    kept_packages,
    split_requirements,
)
from openenv_hub.hub._reads import find_space
from openenv_hub.hub._urls import SpaceUrls, redact, strip_credentials
from openenv_hub.support.settings import TRUST_REMOTE_CODE_VARIABLE, environment, trusts_remote_code

__all__ = ["TRUST_ENV", "InstallResult", "ensure_trusted", "install", "parse_spec"]

TRUST_ENV = TRUST_REMOTE_CODE_VARIABLE
_ELSEWHERE = {"--target", "-t", "--prefix", "--root", "--user"}
_NETWORK_SIGNS = (
    "could not resolve host",
    "failed to connect",
    "connection refused",
    "unable to access",
    "connection reset",
    "timed out",
    "empty reply from server",
)


@dataclass(frozen=True)
class InstallResult:
    """What was installed: the Space, the revision asked for, the commit pip installed, and
    pip's command (which names that commit). ``kept`` lists the installed packages the Space
    asks for that were left as they are (openenv-hub, editable installs), each with what the
    Space asked."""

    repo_id: str
    revision: str | None
    commit: str | None
    command: list[str]
    private: bool = False
    output: list[str] = field(default_factory=list)
    kept: list[tuple[KeptPackage, str]] = field(default_factory=list)


def parse_spec(spec: str) -> tuple[str, str | None]:
    """``NS/NAME@REV`` -> ``("NS/NAME", "REV")``; ``NS/NAME`` -> ``("NS/NAME", None)``."""
    repo_id, _, revision = spec.partition("@")
    return repo_id, revision or None


def install(
    repo_id: str,
    revision: str | None = None,
    *,
    upgrade: bool = False,
    yes: bool = False,
    token: str | None = None,
    endpoint: str | None = None,
    python: str | Path | None = None,
    pip_args: Sequence[str] = (),
    confirm: Callable[[str], bool] | None = None,
    on_output: Callable[[str], None] | None = None,
) -> InstallResult:
    """Install the environment package of the Space ``repo_id`` at ``revision``.

    Args:
        repo_id: ``namespace/name``.
        revision: A version tag, branch or commit; default the Space's main branch.
        upgrade: Pass ``--upgrade`` to pip (reinstall even if a version is installed).
        yes: Trust the Space's code without asking.
        token: Hub token (private Spaces); default ``HF_TOKEN`` or the saved login.
        endpoint: The Hub; default ``HF_ENDPOINT`` or https://huggingface.co.
        python: The interpreter to install into; default the running one.
        pip_args: More arguments for ``pip install``.
        confirm: Asks the user a yes/no question (default: ``input()`` at a terminal).
        on_output: Called with each line pip prints (credentials removed).

    Raises:
        RemoteCodeNotTrustedError: No consent (and no terminal to ask at).
        SpaceNotFoundError, RevisionNotFoundError, HubConnectionError: Checked before pip runs.
        InstallError: pip failed (the message has the end of its output).
    """
    rid = str(parse_repo_id(repo_id))
    ctx = HubContext.create(endpoint=endpoint, token=token)
    info = find_space(ctx, rid, revision)
    urls = SpaceUrls(ctx.endpoint, rid)
    commit = info.sha
    secret = ctx.token if info.private else None
    pinned = urls.pip_requirement(commit or revision)
    asked = f"pip install {urls.pip_requirement(revision)}"
    if commit and commit != revision:
        asked += f"\n  {('at ' + revision + ', ') if revision else ''}that is commit {commit}"
    ensure_trusted(rid, asked, yes=yes, confirm=confirm)
    interpreter = str(python or sys.executable)
    head = [interpreter, "-m", "pip", "install", "--disable-pip-version-check"]
    options = [*(["--upgrade"] if upgrade else []), *pip_args]
    kept = [] if _elsewhere(options) else kept_packages(_distributions(python))
    _refuse_over_editable(ctx, rid, commit, kept)
    asked_of_kept: list[tuple[KeptPackage, str]] = []
    with credentials_env(ctx.endpoint, secret) as env:
        pip = partial(
            _pip_install, head, requirement=pinned, git_url=urls.git, commit=commit,
            secret=secret, env=env, on_output=on_output,
            error=lambda tail: _install_error(rid, revision, ctx.endpoint, tail),
        )  # fmt: skip
        if not kept:
            output = pip(options)
        else:
            output = pip(["--no-deps", *options])
            output += _requirements_keeping(kept, asked_of_kept, pip, urls.git, commit, python)
    return InstallResult(
        rid, revision, commit, [*head, *options, pinned], bool(info.private), output,
        asked_of_kept,
    )  # fmt: skip


def _requirements_keeping(
    kept: list[KeptPackage],
    asked: list[tuple[KeptPackage, str]],
    pip: Callable[..., list[str]],
    git_url: str,
    commit: str | None,
    python: str | Path | None,
) -> list[str]:
    """Install the requirements of the Space's package (installed alone just before) with the
    kept packages pinned; note in ``asked`` what the Space asked of each kept one."""
    wanted = strip_credentials(git_url)
    requires: list[str] = next(
        (
            dist["requires"]
            for dist in _distributions(python)
            if strip_credentials(dist["url"]) == wanted and dist["commit"] == commit
        ),
        [],
    )
    install, asked_now = split_requirements(requires, kept)
    asked.extend(asked_now)
    if not install:
        return []
    with constraints_file(kept) as constraints:
        return pip(["-c", str(constraints)], requirement=None, extra=install)


def _refuse_over_editable(
    ctx: HubContext, repo_id: str, commit: str | None, kept: list[KeptPackage]
) -> None:
    """Refuse when the Space's own package is installed editable (a checkout of yours)."""
    editable = {canonical(package.name): package for package in kept if package.editable}
    if not editable:
        return
    name = _space_package_name(ctx, repo_id, commit)
    package = editable.get(canonical(name or ""))
    if package is None:
        return
    raise InstallError(
        f"{package.describe()} is installed here; installing {repo_id} would replace it. "
        "Nothing was installed.",
        repo_id=repo_id,
        hint=f"Use your checkout as it is, or 'pip uninstall {package.name}' first to install "
        "the Space's.",
    )


def _space_package_name(ctx: HubContext, repo_id: str, commit: str | None) -> str | None:
    """``[project] name`` of the Space's ``pyproject.toml`` at ``commit`` (None if unreadable)."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    from openenv_hub.errors import HubError

    try:
        with hub_call(ctx, "read pyproject.toml", repo_id=repo_id):
            path = ctx.api.hf_hub_download(
                repo_id, "pyproject.toml", repo_type="space", revision=commit
            )
        name = tomllib.loads(Path(path).read_text(encoding="utf-8"))["project"]["name"]
    except (HubError, OSError, KeyError, TypeError, ValueError):
        return None
    return str(name)


def _distributions(python: str | Path | None) -> list[dict[str, Any]]:
    from openenv_hub.discovery import installed_distributions

    return installed_distributions(python=python)


def _elsewhere(options: list[str]) -> bool:
    """pip installs into a folder of its own (``--target``, ``--user``, ...)."""
    return any(option.split("=")[0] in _ELSEWHERE for option in options)


def _pip_install(
    head: list[str],
    options: list[str],
    *,
    requirement: str | None,
    git_url: str,
    commit: str | None,
    secret: str | None,
    env: dict[str, str],
    on_output: Callable[[str], None] | None,
    error: Callable[[str], Exception],
    extra: Sequence[str] = (),
) -> list[str]:
    """``pip install`` of the Space's ``requirement`` (and ``extra`` ones); then, if pip kept
    a same-version copy from elsewhere (it does not reinstall a git requirement whose version
    is already installed), reinstall this one."""
    pip = partial(run_pip, secret=secret, env=env, on_output=on_output, error=error)
    output = pip([*head, *options, *([requirement] if requirement else []), *extra])
    if requirement is None or _elsewhere(options):
        return output  # not in the interpreter's own site-packages: nothing to compare
    python = head[0]
    if not _installed_from(git_url, commit, python):
        reinstall = [*head, "--force-reinstall", "--no-deps", *options, requirement]
        output += pip(reinstall)
    return output


def _installed_from(git_url: str, commit: str | None, python: str) -> bool:
    from openenv_hub.discovery import installed_sources

    wanted = strip_credentials(git_url)
    return any(
        strip_credentials(str(source["url"])) == wanted and source["commit"] == commit
        for source in installed_sources(python=python).values()
    )


def ensure_trusted(
    repo_id: str,
    what: str,
    *,
    yes: bool,
    confirm: Callable[[str], bool] | None = None,
    kind: str = "Space",
) -> None:
    """Return if the user trusts the code of ``repo_id`` (a ``kind``: Space, dataset); raise
    :class:`RemoteCodeNotTrustedError`."""
    if yes or trusts_remote_code():
        return
    if not sys.stdin.isatty():
        raise RemoteCodeNotTrustedError(
            repo_id,
            reason=f"it runs the {kind}'s code, and there is no terminal to confirm that.",
            kind=kind,
        )
    ask = confirm or _ask
    if not ask(f"{what}\nThis runs code from {repo_id} on this machine. Continue?"):
        raise RemoteCodeNotTrustedError(repo_id, reason="not confirmed.", kind=kind)


def _ask(question: str) -> bool:
    answer = input(f"{question} [y/N] ")
    return answer.strip().lower() in ("y", "yes")


def run_pip(
    command: list[str],
    *,
    secret: str | None,
    env: dict[str, str] | None = None,
    on_output: Callable[[str], None] | None,
    error: Callable[[str], Exception],
) -> list[str]:
    """Run pip, streaming its lines (credentials removed); raise ``error(tail)`` on failure."""
    env = {
        **(environment() if env is None else env),
        "GIT_TERMINAL_PROMPT": "0",
        "PIP_NO_INPUT": "1",
    }
    lines: list[str] = []
    with subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env
    ) as process:
        assert process.stdout is not None
        for raw in process.stdout:
            line = redact(raw.rstrip("\n"), secret)
            lines.append(line)
            if on_output is not None:
                on_output(line)
    if process.returncode != 0:
        raise error("\n".join(lines[-25:]))
    return lines


def _install_error(repo_id: str, revision: str | None, endpoint: str, tail: str) -> InstallError:
    network = any(sign in tail.lower() for sign in _NETWORK_SIGNS)
    hint = (
        f"The Space's git repository at {endpoint} could not be reached: check your network "
        "connection, then run the command again."
        if network
        else "Read pip's output above; the Space's pyproject.toml must make it installable."
    )
    at = f"@{revision}" if revision else ""
    return InstallError(
        f"pip could not install {repo_id}{at}:\n{tail}",
        repo_id=repo_id,
        revision=revision,
        hint=hint,
    )
