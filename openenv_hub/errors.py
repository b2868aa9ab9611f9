"""Every exception openenv-hub raises, in one tree.

```
OpenEnvError
├── DependencyNotInstalledError          an optional extra is missing; the message is the pip line
├── ConfigurationError                   an option or a manifest does not make sense
│   ├── ConcurrencyConfigurationError    more than one session for an env that cannot run them
│   ├── ManifestError                    openenv.yaml is missing or invalid  (.path, .field, .line)
│   ├── EnvironmentValidationError       push refused: checks failed  (.results)
│   ├── InvalidVersionError              a version that cannot be a git tag  (.version)
│   └── DestinationNotEmptyError         pull into a folder that has files  (.path)
├── CommandError                       a known failure of a CLI command  (.hint)
│   └── DockerError                      no Docker engine, or a build or container failed
├── PackagingError                       a wheel of openenv-hub or a Space bundle could not be made
├── EnvironmentNotFoundError             no installed environment by that name  (.name, .suggestions)
├── RemoteCodeNotTrustedError            installing from the Hub was not confirmed  (.repo_id)
├── JudgeError                           an LLM judge could not grade  (.url, .hint)
├── HubError                             a Hugging Face Hub operation failed  (.repo_id, .hint)
│   ├── InvalidRepoIdError               not 'namespace/name'
│   ├── HubAuthenticationError           no token, or the Hub rejected it
│   ├── HubPermissionError               the token may not write there
│   ├── SpaceNotFoundError               no such Space, or a private one the token cannot see
│   ├── SpaceNotRunningError             the Space's app is not serving  (.stage)
│   ├── RevisionNotServedError           the Space's app runs another commit  (.revision)
│   ├── RevisionNotFoundError            no such version, branch or commit  (.revision)
│   ├── VersionExistsError               the version tag is taken  (.version)
│   ├── HubConflictError                 the target exists, or the Space changed meanwhile
│   ├── HubConnectionError               the Hub could not be reached, or failed  (.endpoint)
│   ├── PushIncompleteError              a push stopped half-way; says what the Space holds  (.stage)
│   └── InstallError                     pip could not install the environment  (.revision)
├── ServerReplyError                     the server answered with an error frame  (.code)
│   ├── SessionCapacityError             CAPACITY_REACHED  (.active_sessions, .max_sessions)
│   ├── EnvironmentFactoryError          FACTORY_ERROR     (.factory_name)
│   ├── InvalidMessageError              INVALID_JSON, UNKNOWN_TYPE
│   ├── ActionValidationError            VALIDATION_ERROR  (.errors)
│   ├── EnvironmentExecutionError        EXECUTION_ERROR   (the environment raised)
│   ├── ToolCallError                    a tool call failed (.tool_name, .error_type)
│   └── SessionError                     SESSION_ERROR     (.session_id)
│       ├── SessionNotFoundError         no such session on the server
│       ├── SessionClosedError           the session closed before the call could run
│       └── SessionLostError             the connection dropped and took an episode with it
└── TransportError                       the connection itself failed  (.url)
    ├── ConnectError                     could not open the connection
    │   └── ServerStartError             a provider's server did not start  (.runtime, .command, .logs)
    │       └── ImageNotFoundError       no such Docker image on this engine  (.image)
    ├── EnvTimeoutError                  no reply in time; the socket was discarded (.timeout_s)
    └── MessageTooLargeError             a frame exceeded a size limit
```

:class:`ServerReplyError` subclasses carry their codes on every transport (``code``,
``reason``, ``http_status``, ``jsonrpc_code``, ``title``): the server's adapters read them there,
and :func:`error_from_wire` is the one place that turns a wire error back into its class;
``openenv_hub.hub._errors.hub_error`` is the one place that turns a Hub client error into one.
Errors with a ``hint`` say what to do next; the CLI prints it under the message.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

__all__ = [
    "ActionValidationError",
    "CommandError",
    "ConcurrencyConfigurationError",
    "ConfigurationError",
    "ConnectError",
    "DependencyNotInstalledError",
    "DestinationNotEmptyError",
    "DockerError",
    "EnvTimeoutError",
    "EnvironmentExecutionError",
    "EnvironmentFactoryError",
    "EnvironmentNotFoundError",
    "EnvironmentValidationError",
    "HubAuthenticationError",
    "HubConflictError",
    "HubConnectionError",
    "HubError",
    "HubPermissionError",
    "ImageNotFoundError",
    "InstallError",
    "InvalidMessageError",
    "InvalidRepoIdError",
    "InvalidVersionError",
    "JudgeError",
    "ManifestError",
    "MessageTooLargeError",
    "OpenEnvError",
    "PackagingError",
    "PushIncompleteError",
    "RemoteCodeNotTrustedError",
    "RevisionNotFoundError",
    "RevisionNotServedError",
    "ServerReplyError",
    "ServerStartError",
    "SessionCapacityError",
    "SessionClosedError",
    "SessionError",
    "SessionLostError",
    "SessionNotFoundError",
    "SpaceNotFoundError",
    "SpaceNotRunningError",
    "ToolCallError",
    "TransportError",
    "VersionExistsError",
    "error_from_wire",
]


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
    """An optional dependency is missing. The message says exactly what to install."""

    def __init__(self, package: str, extra: str, *, feature: str) -> None:
        self.package = package
        self.extra = extra
        super().__init__(
            f"{feature} needs the '{package}' package, which is not installed. "
            f'Install it with: pip install "openenv-hub[{extra}]"'
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


class DockerError(CommandError):
    """No Docker engine, or a build or a container failed. ``hint`` says what to do."""


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
    """Installing code from the Hub needs the user's consent, which was not given."""

    def __init__(self, repo_id: str, *, reason: str) -> None:
        self.repo_id = repo_id
        self.hint = (
            "Read the Space's code first; then pass --yes (yes=True / trust_remote_code=True in "
            "Python) or set OPENENV_TRUST_REMOTE_CODE=1."
        )
        super().__init__(f"Not installing {repo_id}: {reason}")


class JudgeError(OpenEnvError):
    """An LLM judge could not grade: unreachable, a bad reply, or no score in its answer."""

    def __init__(self, message: str, *, url: str | None = None, hint: str = "") -> None:
        super().__init__(message)
        self.url = url
        self.hint = hint


class HubError(OpenEnvError):
    """A Hugging Face Hub operation failed. ``hint`` says what to do about it."""

    def __init__(self, message: str, *, repo_id: str | None = None, hint: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.repo_id = repo_id
        self.hint = hint


class InvalidRepoIdError(HubError, ValueError):
    """A repo id that is not ``namespace/name``."""


class HubAuthenticationError(HubError):
    """No token was found, or the Hub did not accept it."""


class HubPermissionError(HubError, PermissionError):
    """The token may not write to this namespace or Space."""


class SpaceNotFoundError(HubError, LookupError):
    """The Space does not exist, or it is private and the token cannot see it."""


class SpaceNotRunningError(HubError):
    """The Space exists, but its app is not serving (it failed, or was paused or stopped)."""

    def __init__(self, repo_id: str, stage: str, *, hint: str = "") -> None:
        self.stage = stage
        super().__init__(
            f"Space {repo_id} is not running (stage {stage}).", repo_id=repo_id, hint=hint
        )


class RevisionNotFoundError(HubError, LookupError):
    """The Space has no such version (tag), branch or commit."""

    def __init__(
        self, message: str, *, repo_id: str | None = None, revision: str, hint: str = ""
    ) -> None:
        self.revision = revision
        super().__init__(message, repo_id=repo_id, hint=hint)


class RevisionNotServedError(HubError):
    """A running Space serves its latest commit only; an older revision must run locally."""

    def __init__(self, repo_id: str, revision: str, running: str) -> None:
        self.revision = revision
        super().__init__(
            f"Space {repo_id} runs its latest commit ({running[:7]}), not {revision}.",
            repo_id=repo_id,
            hint="Run that version on this machine: from_hub(..., revision=..., runtime='uv') "
            "(or runtime='docker', or local=True).",
        )


class VersionExistsError(HubError):
    """The version tag exists already; pushing it again needs ``force``."""

    def __init__(self, repo_id: str, version: str) -> None:
        self.version = version
        super().__init__(
            f"Version {version} of {repo_id} exists already; nothing was uploaded.",
            repo_id=repo_id,
            hint="Bump the version (e.g. in openenv.yaml and --version), or move the tag "
            "with --force.",
        )


class HubConflictError(HubError):
    """The target exists already, or the Space changed while we worked on it."""


class HubConnectionError(HubError, ConnectionError):
    """The Hub could not be reached, or it failed to answer."""

    def __init__(
        self, message: str, *, endpoint: str, repo_id: str | None = None, hint: str = ""
    ) -> None:
        self.endpoint = endpoint
        super().__init__(message, repo_id=repo_id, hint=hint)


class PushIncompleteError(HubError):
    """A push stopped half-way. The message says what the Space holds now; ``cause`` why."""

    def __init__(self, message: str, *, repo_id: str, stage: str, cause: HubError) -> None:
        self.stage = stage
        self.cause = cause
        super().__init__(
            message,
            repo_id=repo_id,
            hint="Run the same command again: push uploads what is missing and removes what "
            "was deleted." + (f" ({cause.hint})" if cause.hint else ""),
        )


class InstallError(HubError):
    """``pip install`` of an environment from the Hub failed."""

    def __init__(
        self, message: str, *, repo_id: str, revision: str | None = None, hint: str = ""
    ) -> None:
        self.revision = revision
        super().__init__(message, repo_id=repo_id, hint=hint)


class ServerReplyError(OpenEnvError):
    """The server answered a request with an error.

    Each subclass declares, once, how it travels on every transport: ``code`` (OpenEnv's wire
    code, in ``{"type": "error"}`` frames and HTTP bodies), ``reason`` (sent beside the code by
    classes that share one, so the client can rebuild the exact class), ``http_status``,
    ``jsonrpc_code`` and ``title`` (a short summary for people, used by the web UI).
    """

    code: str = "SERVER_ERROR"
    other_codes: ClassVar[tuple[str, ...]] = ()  # further wire codes that mean this class
    reason: ClassVar[str | None] = None
    http_status: ClassVar[int] = 500
    jsonrpc_code: ClassVar[int] = -32603
    title: ClassVar[str] = "The server reported an error"

    def __init__(
        self,
        message: str,
        *,
        code: str | None = None,
        data: dict[str, Any] | None = None,
        hint: str | None = None,
    ) -> None:
        super().__init__(message, hint=hint)
        if code is not None:
            self.code = code
        self.data = dict(data or {})

    def wire_data(self) -> dict[str, Any]:
        """``code``, ``reason`` (if any) and the structured data, as every transport sends them."""
        data: dict[str, Any] = {"code": self.code, **self.data}
        if self.reason is not None:
            data["reason"] = self.reason
        return data

    @classmethod
    def from_wire(cls, message: str, data: dict[str, Any]) -> ServerReplyError:
        """Rebuild the error from the data of an error frame (``code`` included)."""
        extras = {k: v for k, v in data.items() if k not in ("code", "message", "reason")}
        return cls(message, code=str(data.get("code", cls.code)), data=extras)


class SessionCapacityError(ServerReplyError):
    """Every session slot is taken (``max_sessions``), for sessions and stateless calls alike."""

    code = "CAPACITY_REACHED"
    http_status = 503
    jsonrpc_code = -32000
    title = "The server is at capacity"

    def __init__(self, active_sessions: int, max_sessions: int, *, message: str | None = None):
        self.active_sessions = active_sessions
        self.max_sessions = max_sessions
        super().__init__(
            message
            or (
                f"Server at capacity: {active_sessions}/{max_sessions} sessions active. "
                "Cannot accept new connections."
            ),
            data={"active_sessions": active_sessions, "max_sessions": max_sessions},
            hint="Close a session you no longer use, or retry shortly.",
        )

    @classmethod
    def from_wire(cls, message: str, data: dict[str, Any]) -> ServerReplyError:
        return cls(
            _int(data.get("active_sessions")), _int(data.get("max_sessions")), message=message
        )


class EnvironmentFactoryError(ServerReplyError):
    """The environment's factory (its class or function) raised while creating a session."""

    code = "FACTORY_ERROR"
    jsonrpc_code = -32000
    title = "The environment could not be created"

    def __init__(self, factory_name: str, *, message: str | None = None) -> None:
        self.factory_name = factory_name
        super().__init__(
            message or f"Environment factory '{factory_name}' failed to create instance.",
            data={"factory_name": factory_name},
        )

    @classmethod
    def from_wire(cls, message: str, data: dict[str, Any]) -> ServerReplyError:
        return cls(str(data.get("factory_name", "?")), message=message)


class InvalidMessageError(ServerReplyError):
    """A frame was not JSON, or its ``type`` is unknown (codes INVALID_JSON, UNKNOWN_TYPE)."""

    code = "INVALID_JSON"
    other_codes = ("UNKNOWN_TYPE",)
    http_status = 400
    jsonrpc_code = -32700
    title = "The message could not be read"


class ActionValidationError(ServerReplyError):
    """A message or an action failed validation. ``errors`` is pydantic's error list."""

    code = "VALIDATION_ERROR"
    http_status = 422
    jsonrpc_code = -32602
    title = "Invalid input"

    @property
    def errors(self) -> list[dict[str, Any]]:
        return list(self.data.get("errors", []))


class EnvironmentExecutionError(ServerReplyError):
    """The environment raised inside ``reset``, ``step`` or ``state``."""

    code = "EXECUTION_ERROR"
    title = "The environment raised an error"


class ToolCallError(ServerReplyError):
    """An MCP tool call failed: unknown tool, bad arguments, or the tool raised."""

    code = "TOOL_ERROR"
    title = "The tool call failed"

    def __init__(self, tool_name: str, error_type: str, message: str) -> None:
        self.tool_name = tool_name
        self.error_type = error_type
        super().__init__(
            f"Tool '{tool_name}' failed ({error_type}): {message}",
            data={"tool_name": tool_name, "error_type": error_type},
        )

    @classmethod
    def from_wire(cls, message: str, data: dict[str, Any]) -> ServerReplyError:
        error = cls(str(data.get("tool_name", "?")), str(data.get("error_type", "?")), "")
        error.message = message
        error.args = (message,)
        return error


class SessionError(ServerReplyError):
    """The session cannot serve the request (code SESSION_ERROR)."""

    code = "SESSION_ERROR"
    http_status = 409
    jsonrpc_code = -32600
    title = "The session ended"

    def __init__(self, message: str, *, session_id: str | None = None, **kwargs: Any) -> None:
        self.session_id = session_id
        super().__init__(message, **kwargs)

    @classmethod
    def from_wire(cls, message: str, data: dict[str, Any]) -> ServerReplyError:
        extras = {k: v for k, v in data.items() if k not in ("code", "message", "reason")}
        session_id = extras.pop("session_id", None)
        return cls(message, session_id=session_id, data=extras)


class SessionNotFoundError(SessionError):
    """No session with this id on the server (it was closed, reaped, or never existed)."""

    reason = "session_not_found"
    http_status = 404
    jsonrpc_code = -32602

    def __init__(self, session_id: str) -> None:
        super().__init__(
            f"Unknown session_id: {session_id}",
            session_id=session_id,
            data={"session_id": session_id},
        )

    @classmethod
    def from_wire(cls, message: str, data: dict[str, Any]) -> ServerReplyError:
        return cls(str(data.get("session_id", "?")))


class SessionClosedError(SessionError):
    """The session was closed (by its client, the reaper or a shutdown) before the call ran."""

    reason = "session_closed"
    http_status = 410


class SessionLostError(SessionError):
    """The connection closed while an episode was in progress; the episode is gone.

    The client has already reconnected: call ``reset()`` to start a new episode.
    """

    reason = "session_lost"


class TransportError(OpenEnvError, ConnectionError):
    """The connection to the server failed."""

    def __init__(self, message: str, *, url: str | None = None) -> None:
        super().__init__(message)
        self.url = url


class ConnectError(TransportError):
    """The connection could not be opened. When the server refused the handshake, ``status_code``
    and ``body`` are what it answered (e.g. why a Space's app is not serving)."""

    def __init__(
        self,
        message: str,
        *,
        url: str | None = None,
        status_code: int | None = None,
        body: str = "",
    ) -> None:
        super().__init__(message, url=url)
        self.status_code = status_code
        self.body = body


class ServerStartError(ConnectError):
    """A provider started a server that never answered ``/health``, or could not start it.

    The message names the runtime, what it ran (secrets shown by name only) and the last lines
    of the server's log; ``hint`` says what to try next.
    """

    def __init__(
        self,
        message: str,
        *,
        runtime: str,
        command: str = "",
        logs: str = "",
        url: str | None = None,
        hint: str = "",
    ) -> None:
        self.runtime, self.command, self.logs, self.hint = runtime, command, logs, hint
        text = f"[{runtime}] {message}"
        if command:
            text += f"\nRan: {command}"
        if logs.strip():
            text += f"\nLast lines of its log:\n{logs.rstrip()}"
        super().__init__(text, url=url)


class ImageNotFoundError(ServerStartError):
    """The Docker image is not on the engine and could not be pulled."""

    def __init__(self, image: str, *, detail: str = "") -> None:
        self.image = image
        super().__init__(
            f"The image {image!r} is not on this Docker engine"
            + (f" and could not be pulled ({detail})." if detail else "."),
            runtime="docker",
            hint=f"Build it from an environment folder with 'openenv build PATH --tag {image}', "
            f"or pull it with 'docker pull {image}'.",
        )


class EnvTimeoutError(TransportError, TimeoutError):
    """No reply arrived in time. The socket was closed so a late reply can never be misread."""

    def __init__(self, message: str, *, url: str | None = None, timeout_s: float) -> None:
        super().__init__(message, url=url)
        self.timeout_s = timeout_s


class MessageTooLargeError(TransportError):
    pass


def _int(value: Any) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0


def _reply_classes() -> list[type[ServerReplyError]]:
    """Every :class:`ServerReplyError` class of this module, parents before children."""
    found, pending = [], [ServerReplyError]
    while pending:
        cls = pending.pop(0)
        if cls.__module__ == __name__:
            found.append(cls)
            pending.extend(cls.__subclasses__())
    return found


def error_from_wire(data: dict[str, Any]) -> ServerReplyError:
    """Build the exception for the ``data`` of a ``{"type": "error"}`` frame (or an HTTP error
    body, or JSON-RPC error data): the class whose ``code`` and ``reason`` match, else the most
    general class with that code."""
    code = str(data.get("code", "SERVER_ERROR"))
    reason = data.get("reason")
    message = str(data.get("message", data.get("detail", "unknown server error")))
    candidates = [c for c in _reply_classes() if code == c.code or code in c.other_codes]
    exact = [c for c in candidates if reason is not None and c.reason == reason]
    general = [c for c in candidates if c.reason is None]
    cls = (exact or general or [ServerReplyError])[0]
    return cls.from_wire(message, {**data, "code": code})
