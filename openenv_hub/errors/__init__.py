"""Every exception openenv-hub raises, in one tree.

```
OpenEnvError
├── DependencyNotInstalledError          an optional extra is missing; the message is the pip line
├── ConfigurationError                   an option or a manifest does not make sense
│   ├── ConcurrencyConfigurationError    more than one session for an env that cannot run them
│   ├── ManifestError                    openenv.yaml is missing or invalid  (.path, .field, .line)
│   ├── EnvironmentValidationError       push refused: checks failed  (.results)
│   ├── InvalidVersionError              a version that cannot be a git tag  (.version)
│   ├── DestinationNotEmptyError         pull into a folder that has files  (.path)
│   ├── EpisodeRecordError               records that are not one replayable episode
│   └── ReplayRefusedError               a replay fork that could not be trusted  (.reason)
├── CommandError                         a known failure of a CLI command  (.hint)
├── DockerError                          no Docker engine, or a build or container failed  (.hint)
├── PackagingError                       a wheel of openenv-hub or a Space bundle could not be made
├── EnvironmentNotFoundError             no installed environment by that name  (.name, .suggestions)
├── RemoteCodeNotTrustedError            installing from the Hub was not confirmed  (.repo_id)
├── ReplayMismatchError                a replayed episode differs from its recording  (.step, .fields)
├── JudgeError                           an LLM judge could not grade  (.url, .hint)
├── UntrainableRolloutError              captured rollouts a trainer refused  (.rollouts)
├── HubError                             a Hugging Face Hub operation failed  (.repo_id, .hint)
│   ├── InvalidRepoIdError               not 'namespace/name'
│   ├── HubAuthenticationError           no token, or the Hub rejected it
│   ├── HubPermissionError               the token may not write there
│   ├── SpaceNotFoundError               no such Space, or a private one the token cannot see
│   ├── DatasetNotFoundError             no such dataset, or a private one the token cannot see
│   ├── SpaceNotRunningError             the Space's app is not serving  (.stage)
│   ├── RevisionNotServedError           the Space's app runs another commit  (.revision)
│   ├── RevisionNotFoundError            no such version, branch or commit  (.revision)
│   ├── VersionExistsError               the version tag is taken  (.version)
│   ├── HubConflictError                 the target exists, or the Space changed meanwhile
│   ├── HubConnectionError               the Hub could not be reached, or failed  (.endpoint)
│   ├── PushIncompleteError              a push stopped half-way; says what the Space holds  (.stage)
│   └── InstallError                     pip could not install the environment  (.revision)
├── PoolError                            EnvPool(on_error="raise"): slots failed  (.results, .failures)
├── SlotError                            one EnvPool slot failed; an item of results  (.slot, .url, .cause)
├── ClusterError                         no Ray cluster or Kubernetes API to talk to  (.address, .hint)
├── ServerReplyError                     the server answered with an error frame  (.code)
│   ├── SessionCapacityError             CAPACITY_REACHED  (.active_sessions, .max_sessions)
│   ├── EnvironmentFactoryError          FACTORY_ERROR     (.factory_name)
│   ├── InvalidMessageError              INVALID_JSON, UNKNOWN_TYPE
│   ├── ActionValidationError            VALIDATION_ERROR  (.errors)
│   ├── EnvironmentExecutionError        EXECUTION_ERROR   (the environment raised)
│   │   ├── ResetRequiredError           no episode in progress: call reset() first
│   │   └── ModelEngineError             the model engine an agent called failed mid-step
│   ├── ToolCallError                    TOOL_ERROR: a reply held a ToolError  (.tool_name, .error_type)
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
:func:`openenv_hub.hub.hub_error` is the one place that turns a Hub client error into one.
Errors with a ``hint`` say what to do next; the CLI prints it under the message.

Layer: core.
"""

from __future__ import annotations

from openenv_hub.errors._base import (
    CommandError,
    ConcurrencyConfigurationError,
    ConfigurationError,
    DependencyNotInstalledError,
    DestinationNotEmptyError,
    DockerError,
    EnvironmentNotFoundError,
    EnvironmentValidationError,
    InvalidVersionError,
    JudgeError,
    ManifestError,
    OpenEnvError,
    PackagingError,
    RemoteCodeNotTrustedError,
)
from openenv_hub.errors._hub import (
    DatasetNotFoundError,
    HubAuthenticationError,
    HubConflictError,
    HubConnectionError,
    HubError,
    HubPermissionError,
    InstallError,
    InvalidRepoIdError,
    PushIncompleteError,
    RevisionNotFoundError,
    RevisionNotServedError,
    SpaceNotFoundError,
    SpaceNotRunningError,
    VersionExistsError,
)
from openenv_hub.errors._pool import (
    ClusterError,
    PoolError,
    SlotError,
)
from openenv_hub.errors._replay import EpisodeRecordError, ReplayMismatchError, ReplayRefusedError
from openenv_hub.errors._training import UntrainableRolloutError
from openenv_hub.errors._transport import (
    ConnectError,
    EnvTimeoutError,
    ImageNotFoundError,
    MessageTooLargeError,
    ServerStartError,
    TransportError,
)
from openenv_hub.errors._wire import (
    ActionValidationError,
    EnvironmentExecutionError,
    EnvironmentFactoryError,
    InvalidMessageError,
    ModelEngineError,
    ResetRequiredError,
    ServerReplyError,
    SessionCapacityError,
    SessionClosedError,
    SessionError,
    SessionLostError,
    SessionNotFoundError,
    ToolCallError,
    error_from_wire,
)

__all__ = [
    "ActionValidationError",
    "ClusterError",
    "CommandError",
    "ConcurrencyConfigurationError",
    "ConfigurationError",
    "ConnectError",
    "DatasetNotFoundError",
    "DependencyNotInstalledError",
    "DestinationNotEmptyError",
    "DockerError",
    "EnvTimeoutError",
    "EnvironmentExecutionError",
    "EnvironmentFactoryError",
    "EnvironmentNotFoundError",
    "EnvironmentValidationError",
    "EpisodeRecordError",
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
    "ModelEngineError",
    "OpenEnvError",
    "PackagingError",
    "PoolError",
    "PushIncompleteError",
    "RemoteCodeNotTrustedError",
    "ReplayMismatchError",
    "ReplayRefusedError",
    "ResetRequiredError",
    "RevisionNotFoundError",
    "RevisionNotServedError",
    "ServerReplyError",
    "ServerStartError",
    "SessionCapacityError",
    "SessionClosedError",
    "SessionError",
    "SessionLostError",
    "SessionNotFoundError",
    "SlotError",
    "SpaceNotFoundError",
    "SpaceNotRunningError",
    "ToolCallError",
    "TransportError",
    "UntrainableRolloutError",
    "VersionExistsError",
    "error_from_wire",
]
