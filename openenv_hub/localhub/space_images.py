"""Building a Space's image for LocalHub, from its files at a commit, with no network at all.

A Space's ``RUN`` steps are its author's code. On an engine without a bridge network a build
given the host's network reaches every service on the machine's loopback (LocalHub's own routes,
other Spaces' apps, anything else listening there), so builds run with ``network_mode="none"``
on every engine.

Packages reach a build through a wheelhouse given to LocalHub (``space_wheelhouse``): a folder
of wheels, copied once into an image made from the build's ``BASE_IMAGE``, at
:data:`WHEELS_IN_IMAGE`, with ``PIP_NO_INDEX=1`` and ``PIP_FIND_LINKS`` pointing there. That
image is then the ``BASE_IMAGE`` of every Space build, so a Dockerfile that starts
``FROM ${BASE_IMAGE}`` (as the templates' do) installs from it. A build that needs a package
the wheelhouse lacks fails, and its error message says where packages come from.

Layer: runtimes.
"""

from __future__ import annotations

import hashlib
import io
import shutil
import tarfile
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from openenv_hub.docker.engine import DockerClient

__all__ = [
    "WHEELS_IN_IMAGE",
    "BuildFailed",
    "build_space_image",
    "wheelhouse_base_image",
    "wheelhouse_tag",
]

WHEELS_IN_IMAGE = "/opt/localhub/wheels"
DEFAULT_BASE_IMAGE = "python:3.11-slim"  # the templates' default, when no BASE_IMAGE is given
_WHEELHOUSE_DOCKERFILE = f"""\
ARG BASE_IMAGE
FROM ${{BASE_IMAGE}}
COPY wheels {WHEELS_IN_IMAGE}
ENV PIP_NO_INDEX=1 PIP_FIND_LINKS={WHEELS_IN_IMAGE}
"""
_NO_PACKAGE = (
    "Could not find a version",
    "No matching distribution",
    "Temporary failure in name resolution",
    "Failed to establish a new connection",
    "Could not resolve host",
)


class BuildFailed(Exception):
    """The image could not be built; the message says why (the build log has the rest)."""


def build_space_image(
    client: DockerClient,
    archive: bytes,
    tag: str,
    build_args: Mapping[str, str],
    log: Callable[[str], None],
    *,
    wheelhouse: Path | None,
) -> None:
    """Build ``archive`` (a ``git archive`` tar of the Space) into ``tag``, with no network.

    Raises:
        BuildFailed: No Dockerfile, or a step failed (the message names it and what to do).
    """
    args = dict(build_args)
    if wheelhouse is not None:
        base = args.get("BASE_IMAGE", DEFAULT_BASE_IMAGE)
        args["BASE_IMAGE"] = wheelhouse_base_image(client, base, wheelhouse)
    with tempfile.TemporaryDirectory(prefix="localhub-build-") as tmp:
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            _extract(tar, tmp)
        if not (Path(tmp) / "Dockerfile").is_file():
            raise BuildFailed("No Dockerfile at the root of the Space.")
        lines: list[str] = []

        def keep(line: str) -> None:
            lines.append(line)
            log(line)

        try:
            _build(client, tmp, tag, args, keep)
        except BuildFailed as failed:
            raise BuildFailed(f"{failed}{_where_packages_come_from(lines, wheelhouse)}") from None


def wheelhouse_tag(base: str, wheels: list[Path]) -> str:
    """The tag of ``base`` plus ``wheels``: it changes with any wheel's content (a development
    wheel is rebuilt under the same name, often with the same size)."""
    digest = hashlib.sha256(base.encode())
    for wheel in wheels:
        digest.update(f"\0{wheel.name}\0".encode())
        with open(wheel, "rb") as file:
            while chunk := file.read(1 << 20):
                digest.update(chunk)
    return f"localhub-wheelhouse:{digest.hexdigest()[:24]}"


def wheelhouse_base_image(client: DockerClient, base: str, wheelhouse: Path) -> str:
    """The image ``base`` plus the wheels of ``wheelhouse`` (made once per base and wheels).

    Raises:
        BuildFailed: The wheelhouse is not a folder of wheels, or the image cannot be made.
    """
    wheels = sorted(wheelhouse.glob("*.whl")) if wheelhouse.is_dir() else []
    if not wheels:
        raise BuildFailed(f"The Space wheelhouse {wheelhouse} holds no wheels (*.whl).")
    tag = wheelhouse_tag(base, wheels)
    if client.images.list(name=tag):
        return tag
    with tempfile.TemporaryDirectory(prefix="localhub-wheelhouse-") as tmp:
        (Path(tmp) / "Dockerfile").write_text(_WHEELHOUSE_DOCKERFILE)
        (Path(tmp) / "wheels").mkdir()
        for wheel in wheels:
            shutil.copy2(wheel, Path(tmp) / "wheels" / wheel.name)
        _build(client, tmp, tag, {"BASE_IMAGE": base}, lambda _: None)
    return tag


def _build(
    client: DockerClient,
    context: str,
    tag: str,
    build_args: Mapping[str, str],
    log: Callable[[str], None],
) -> None:
    """``docker build`` with no network; each output line goes to ``log``."""
    stream: Any = client.api.build(
        path=context, tag=tag, buildargs=dict(build_args), network_mode="none",
        rm=True, forcerm=True, decode=True,
    )  # fmt: skip
    for chunk in stream:
        for line in str(chunk.get("stream", "")).splitlines():
            log(line)
        if "error" in chunk:
            error = str(chunk["error"]).strip()
            log(error)
            raise BuildFailed(f"Build failed: {error}")


def _where_packages_come_from(lines: list[str], wheelhouse: Path | None) -> str:
    """A hint for a build that could not get a package, else ``""``."""
    if not any(marker in line for line in lines for marker in _NO_PACKAGE):
        return ""
    source = (
        f"from LocalHub's wheelhouse ({wheelhouse}), which lacks one it needs"
        if wheelhouse is not None
        else "from a wheelhouse, and LocalHub was given none"
    )
    return (
        f" Space builds have no network: packages come {source}. Put the wheels there "
        "(pip download -d DIR ...) and start LocalHub with space_wheelhouse=DIR "
        "(--space-wheelhouse DIR, or $OPENENV_SPACE_WHEELHOUSE); the Dockerfile must start "
        "FROM ${BASE_IMAGE}."
    )


def _extract(tar: tarfile.TarFile, target: str) -> None:
    """Unpack a ``git archive`` (the data filter where this Python has it)."""
    if hasattr(tarfile, "data_filter"):
        tar.extractall(target, filter="data")
    else:  # pragma: no cover - Python < 3.10.12
        tar.extractall(target)
