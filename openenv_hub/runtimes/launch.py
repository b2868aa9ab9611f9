"""From a client class method's arguments to a provider: what ``from_docker_image``,
``from_folder`` and ``from_hub`` start, with which options.

Options a provider does not know are refused with the list of those it does; client options
(``message_timeout_s``, ...) go to the client. ``env_vars`` is accepted as another name for
``env``, as OpenEnv's providers call it.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from openenv_hub.client._launch import ClientLauncher, split_options
from openenv_hub.errors import ConfigurationError

if TYPE_CHECKING:
    from openenv_hub.client.env_client import EnvClient
    from openenv_hub.runtimes.base import Provider

__all__ = ["FOLDER_RUNTIMES", "docker_image_launcher", "folder_launcher", "start_folder"]

ClientT = TypeVar("ClientT", bound="EnvClient[Any, Any, Any]")
FolderRuntime = Literal["local", "uv", "docker"]
FOLDER_RUNTIMES: tuple[str, ...] = ("local", "uv", "docker")

_DOCKER_OPTIONS = frozenset(
    {
        "port",
        "env",
        "secrets",
        "name",
        "network",
        "container_port",
        "command",
        "pull",
        "startup_timeout_s",
    }
)
_FOLDER_OPTIONS = {
    "local": frozenset({"port", "env", "python", "startup_timeout_s"}),
    "uv": frozenset({"port", "env", "python", "startup_timeout_s"}),
    "docker": _DOCKER_OPTIONS | {"tag", "base_image", "build_args"},
}


def checked(options: dict[str, Any], allowed: frozenset[str], what: str) -> dict[str, Any]:
    """``options`` (``env_vars`` renamed ``env``) if ``allowed`` has them all."""
    options = dict(options)
    if "env_vars" in options:
        options["env"] = {**(options.pop("env_vars") or {}), **(options.get("env") or {})}
    unknown = sorted(set(options) - allowed)
    if unknown:
        raise ConfigurationError(
            f"{what} does not take {', '.join(unknown)}; it takes {', '.join(sorted(allowed))} "
            "and the client's options (message_timeout_s, connect_timeout_s, ...)."
        )
    return options


def docker_image_launcher(
    client_class: type[ClientT], image: str, options: dict[str, Any]
) -> ClientLauncher[ClientT]:
    """A launcher that runs ``image`` with :class:`~openenv_hub.runtimes.docker.DockerProvider`."""
    client_options, provider_options = split_options(options)
    provider_options = checked(provider_options, _DOCKER_OPTIONS, "from_docker_image")

    def start() -> Provider:
        from openenv_hub.runtimes.docker import DockerProvider

        return DockerProvider.start(image, **provider_options)

    return ClientLauncher(client_class, start, client_options)


def folder_launcher(
    client_class: type[ClientT], path: str | Path, runtime: str, options: dict[str, Any]
) -> ClientLauncher[ClientT]:
    """A launcher that serves the environment folder ``path`` with ``runtime``."""
    client_options, provider_options = split_options(options)
    start = folder_starter(path, runtime, provider_options)
    return ClientLauncher(client_class, start, client_options)


def folder_starter(
    path: str | Path, runtime: str, options: dict[str, Any]
) -> Callable[[], Provider]:
    """A function that starts the folder's server with ``runtime`` (options checked now)."""
    if runtime not in _FOLDER_OPTIONS:
        raise ConfigurationError(
            f"Unknown runtime {runtime!r} for a folder; use one of {', '.join(FOLDER_RUNTIMES)}."
        )
    folder = Path(path)
    if not (folder / "openenv.yaml").is_file():
        raise ConfigurationError(
            f"{folder} has no openenv.yaml: not an environment folder "
            "(create one with 'openenv init NAME')."
        )
    options = checked(options, _FOLDER_OPTIONS[runtime], f"from_folder(runtime={runtime!r})")
    return lambda: start_folder(folder, runtime, **options)


def start_folder(path: Path, runtime: str, **options: Any) -> Provider:
    """Start the environment folder ``path`` with ``runtime`` (``local``, ``uv`` or ``docker``)."""
    if runtime == "uv":
        from openenv_hub.runtimes.uv import UvProvider

        return UvProvider.from_folder(path, **options)
    if runtime == "docker":
        return _build_and_run(path, **options)
    from openenv_hub.manifest import load_manifest
    from openenv_hub.runtimes.local import LocalProcessProvider

    manifest = load_manifest(path)
    variables = {key: str(value) for key, value in manifest.variables.items()}
    return LocalProcessProvider.start(
        manifest.app_path,
        env_dir=path.resolve(),
        python=options.get("python"),
        port=options.get("port"),
        env={**variables, **(options.get("env") or {})},
        startup_timeout_s=options.get("startup_timeout_s", 30.0),
    )


def _build_and_run(
    path: Path,
    *,
    tag: str | None = None,
    base_image: str | None = None,
    build_args: tuple[str, ...] | list[str] = (),
    **run_options: Any,
) -> Provider:
    import os

    from openenv_hub.docker import build_image, default_tag
    from openenv_hub.manifest import load_manifest
    from openenv_hub.runtimes.docker import DockerProvider

    tag = tag or default_tag(load_manifest(path).name)
    base = base_image or os.environ.get("OPENENV_BASE_IMAGE")
    args = list(build_args) or os.environ.get("OPENENV_BUILD_ARGS", "").split()
    build_image(path, tag, base_image=base, build_args=args, quiet=True)
    return DockerProvider.start(tag, pull="never", **run_options)
