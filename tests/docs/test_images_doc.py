"""docs/protocol.md, "Images": the sample is what a server sends, the decoding snippet works."""

from __future__ import annotations

import json
from typing import Any

import httpx
import numpy as np
from doc_blocks import doc_block

from openenv_hub import Environment, Observation, State, create_app
from openenv_hub.model.image_fields import ImageArray

PIXELS = np.array([[[255, 0, 0], [0, 255, 0]], [[0, 0, 255], [255, 255, 255]]], dtype=np.uint8)


class Screen(Observation):
    frame: ImageArray


class Camera(Environment[Any, Screen, State]):
    def reset(self, seed: int | None = None, episode_id: str | None = None, **kw: Any) -> Screen:
        return Screen(frame=PIXELS)

    def step(self, action: Any, timeout_s: float | None = None, **kw: Any) -> Screen:
        return Screen(frame=PIXELS)

    @property
    def state(self) -> State:
        return State()


def test_the_frame_sample_is_what_the_server_sends(serve: Any) -> None:
    sample = json.loads(doc_block("docs/protocol.md", "image frame").code)
    server = serve(create_app(Camera, observation_cls=Screen))
    observation = httpx.post(f"{server.url}/reset", json={}).json()["observation"]
    assert observation["frame"] == sample["frame"]


def test_the_pillow_snippet_decodes_the_sample() -> None:
    sample = json.loads(doc_block("docs/protocol.md", "image frame").code)
    namespace: dict[str, Any] = {}
    exec(doc_block("docs/protocol.md", "decode with pillow").code, namespace)
    assert np.array_equal(namespace["frame_of"](sample), PIXELS)
