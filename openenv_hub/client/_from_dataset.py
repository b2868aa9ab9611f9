"""``from_hub("hf://datasets/NS/NAME[/ENV_ID][@REVISION]")``: the environment a Hub dataset
declares, started through the registry of runtimes, with the dataset attached to the client.

Where the server comes from is the dataset's ``environment.yaml`` (see
:mod:`openenv_hub.hub`): its own folder, started like a folder (``local`` by default, or
``uv``, ``docker``, ...); a Space, started like ``from_hub`` starts Spaces (``space`` by
default); or an image (``docker`` by default). The dataset is downloaded at the commit its
revision names, and its folder or image runs only with the user's consent for that commit.

Layer: client.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from openenv_hub.client._launch import ClientT, split_options

if TYPE_CHECKING:
    from openenv_hub.hub import EnvironmentDataset
    from openenv_hub.runtimes import Provider

__all__ = ["client_from_dataset", "start_dataset_environment"]


def client_from_dataset(
    client_class: type[ClientT],
    ref: str,
    runtime: str | None,
    options: dict[str, Any],
    token: str | None,
    endpoint: str | None,
    trust_remote_code: bool,
) -> ClientT:
    """``client_class`` connected to a server of the environment ``ref`` declares, started now
    (stopped if the client cannot be made), with ``client.dataset`` set."""
    from openenv_hub.hub import resolve_environment_dataset

    client_options, runtime_options = split_options(options)
    found = resolve_environment_dataset(
        ref, endpoint=endpoint, token=token, trust_remote_code=trust_remote_code
    )
    provider = start_dataset_environment(
        found, runtime, runtime_options, token=token, endpoint=endpoint, trust=trust_remote_code
    )
    try:
        client = client_class(provider.base_url, provider=provider, **client_options)
    except BaseException:
        provider.stop()
        raise
    client.dataset = found
    return client


def start_dataset_environment(
    found: EnvironmentDataset,
    runtime: str | None,
    options: dict[str, Any],
    *,
    token: str | None = None,
    endpoint: str | None = None,
    trust: bool = False,
) -> Provider:
    """Start the server ``found`` declares with ``runtime`` (default: ``local`` for its own
    folder, ``space`` for a Space, ``docker`` for an image)."""
    from openenv_hub.runtimes import SpaceRef, starter

    framework = found.openenv
    what = f"from_hub({found.reference!r}"
    if found.folder is not None:
        chosen = runtime or "local"
        start = starter(chosen, "folder", found.folder, options, what=f"{what}, {chosen})")
    elif framework.image:
        chosen = runtime or "docker"
        start = starter(chosen, "image", framework.image, options, what=f"{what}, {chosen})")
    else:
        assert framework.space_id is not None  # the declaration has one of the three
        chosen = runtime or "space"
        space = SpaceRef(framework.space_id, None, token, endpoint, trust)
        start = starter(chosen, "space", space, options, what=f"{what}, {chosen})")
    return start()
