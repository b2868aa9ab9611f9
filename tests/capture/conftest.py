"""Fixtures of the capture proxy's tests: a fake engine served on 127.0.0.1, and proxies in
front of it or of the real engine (``vllm``, from engine_support.fixtures)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from engine_support.fake_engine import create_fake_engine
from wire_bodies import ENGINE_KEY

from openenv_hub.capture import CaptureProxy


@pytest.fixture
def fake_engine(serve: Callable[..., Any]) -> Any:
    """The fake engine on 127.0.0.1 (``.app.state`` switches its answers)."""
    return serve(create_fake_engine())


@pytest.fixture
def proxies() -> Iterator[Callable[..., CaptureProxy]]:
    """Start a capture proxy (keyword arguments as CaptureProxy takes them); all are stopped
    after the test."""
    started: list[CaptureProxy] = []

    def start(**options: Any) -> CaptureProxy:
        proxy = CaptureProxy(**options).start()
        started.append(proxy)
        return proxy

    yield start
    for proxy in started:
        proxy.stop()


@pytest.fixture
def fake_proxy(fake_engine: Any, proxies: Callable[..., CaptureProxy]) -> CaptureProxy:
    """A proxy in front of the fake engine, with the engine's own key, and no tokenizer."""
    return proxies(engine_url=f"{fake_engine.url}/v1", model="fake", engine_api_key=ENGINE_KEY)
