"""A runtime of a module of its own, as another package would add one: ``echo_everywhere``
serves envs/echo_env in a child process whatever it is asked to start from (a folder, an image,
a Space), and records each start. Importing this module registers it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from openenv_hub.runtimes import RuntimeBase, SpaceRef, register
from openenv_hub.runtimes.local import LocalProcessProvider, serve_folder

ECHO_ENV = Path(__file__).resolve().parents[2] / "envs" / "echo_env"


class EchoEverywhere(RuntimeBase):
    name = "echo_everywhere"
    summary = "envs/echo_env, whatever it is asked for (a test runtime)"
    options = {
        "folder": frozenset({"env", "port"}),
        "image": frozenset({"env"}),
        "space": frozenset({"env"}),
    }

    def __init__(self) -> None:
        self.started: list[tuple[str, object, dict[str, Any]]] = []

    def _serve(self, source: str, target: object, options: dict[str, Any]) -> Any:
        self.started.append((source, target, options))
        server: LocalProcessProvider = serve_folder(ECHO_ENV, **options)
        server.runtime = self.name
        return server

    def start_folder(self, path: Path, **options: Any) -> Any:
        return self._serve("folder", path, options)

    def start_image(self, image: str, **options: Any) -> Any:
        return self._serve("image", image, options)

    def start_space(self, space: SpaceRef, **options: Any) -> Any:
        return self._serve("space", space, options)


RUNTIME = register(EchoEverywhere())
