"""Names that were renamed still work under their old names, with a DeprecationWarning."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from ray_support import require_extra


def _warnings_of(code: str) -> dict[str, str]:
    """Run ``code`` in a fresh interpreter; the DeprecationWarnings it recorded, by message."""
    prelude = "import warnings\ncaught = warnings.catch_warnings(record=True)\n"
    prelude += "recorded = caught.__enter__()\nwarnings.simplefilter('always')\n"
    epilogue = (
        "\nprint(sorted({str(w.message): w.filename for w in recorded "
        "if w.category is DeprecationWarning}.items()))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", prelude + textwrap.dedent(code) + epilogue],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return dict(eval(done.stdout.strip().splitlines()[-1]))


def test_spaces_module_is_gym_spaces_under_its_old_name() -> None:
    warned = _warnings_of(
        """
        from openenv_hub.spaces import field_type, from_wire, is_image_space, jsonable, to_wire
        from openenv_hub.model import gym_spaces
        assert (field_type, from_wire, is_image_space, jsonable, to_wire) == (
            gym_spaces.field_type, gym_spaces.from_wire, gym_spaces.is_image_space,
            gym_spaces.jsonable, gym_spaces.to_wire,
        )
        """
    )
    assert warned == {
        "openenv_hub.spaces is deprecated and will be removed in 0.2: "
        "import openenv_hub.model.gym_spaces instead.": "<string>"
    }


def test_images_module_is_frames_under_its_old_name() -> None:
    warned = _warnings_of(
        """
        from openenv_hub.images import (
            PNG_DATA_URI_PREFIX, ImageArray, decode_image, decode_png, encode_image, encode_png,
        )
        from openenv_hub.model import image_fields as frames
        assert (PNG_DATA_URI_PREFIX, ImageArray, decode_image, encode_image) == (
            frames.PNG_DATA_URI_PREFIX, frames.ImageArray, frames.decode_image,
            frames.encode_image,
        )
        assert (decode_png, encode_png) == (frames.decode_png, frames.encode_png)
        """
    )
    assert warned == {
        "openenv_hub.images is deprecated and will be removed in 0.2: "
        "import openenv_hub.model.image_fields instead.": "<string>"
    }


def test_every_module_that_left_the_package_root_imports_under_its_old_name() -> None:
    """``import openenv_hub.manifest`` (and every other old name) gives the very module that
    moved, with one warning naming the new name and the version that removes the old."""
    warned = _warnings_of(
        """
        import importlib
        from openenv_hub.support.moved_modules import MOVED
        for old, new in MOVED.items():
            assert importlib.import_module(old) is importlib.import_module(new), old
        from openenv_hub import manifest, serving  # the other spelling of an import
        assert manifest.__name__ == "openenv_hub.model.manifest"
        assert serving.__name__ == "openenv_hub.transport.uvicorn_serving"
        """
    )
    from openenv_hub.support.moved_modules import MOVED, removed_in

    assert warned == {
        f"{old} is deprecated and will be removed in {removed_in(old)}: import {new} instead.": (
            "<string>"
        )
        for old, new in MOVED.items()
    }


def test_the_package_root_holds_its_public_modules_and_the_layers_packages() -> None:
    import openenv_hub

    root = Path(openenv_hub.__file__).parent
    assert sorted(p.stem for p in root.glob("*.py")) == [
        "__init__",
        "discovery",
        "gymnasium",
        "packaging",
        "shown_urls",
        "types",
    ]


def test_run_is_serve_app_under_its_old_name() -> None:
    """``openenv_hub.run`` warns where it is called, then serves as ``serve_app`` does: an app
    given as an object with ``reload=True`` is refused with serve_app's message."""
    warned = _warnings_of(
        """
        import openenv_hub
        from openenv_hub import run
        from openenv_hub.errors import ConfigurationError
        from openenv_hub.server import run as server_run
        assert run is server_run and "run" not in openenv_hub.__all__
        assert "serve_app" in openenv_hub.__all__
        try:
            run(object(), reload=True)
        except ConfigurationError as exc:
            assert "reload=True needs the app as an import string" in str(exc), exc
        else:
            raise AssertionError("run did not call serve_app")
        """
    )
    assert warned == {
        "openenv_hub.run is deprecated and will be removed in 0.2: use openenv_hub.serve_app (same arguments) instead.": (
            "<string>"
        )
    }


def test_max_sessions_is_max_concurrent_envs_under_its_old_name() -> None:
    """One name for the sessions a server serves at once: OpenEnv's ``max_concurrent_envs``
    (create_app, openenv.yaml, $MAX_CONCURRENT_ENVS). SessionPool's old keyword and attribute
    still work and warn; capacity replies keep the wire's ``max_sessions``."""
    warned = _warnings_of(
        """
        from openenv_hub.server import SessionPool
        from openenv_hub.types import Action
        from echo_env.server.environment import EchoEnvironment

        pool = SessionPool(EchoEnvironment, action_cls=Action, max_sessions=3)
        assert pool.max_concurrent_envs == 3
        assert pool.max_sessions == 3
        """
    )
    assert warned == {
        "SessionPool(max_sessions=...) is deprecated and will be removed in 0.2: use max_concurrent_envs=... instead.": (
            "<string>"
        ),
        "SessionPool.max_sessions is deprecated and will be removed in 0.2: use SessionPool.max_concurrent_envs instead.": (
            "<string>"
        ),
    }


def test_ray_replicas_take_max_concurrent_envs_and_warn_of_max_sessions() -> None:
    require_extra("ray")
    warned = _warnings_of(
        """
        from openenv_hub.errors import ClusterError
        from openenv_hub.runtimes.ray import REPLICA_OPTIONS, RayProvider

        assert "max_concurrent_envs" in REPLICA_OPTIONS and "max_sessions" not in REPLICA_OPTIONS
        try:
            RayProvider.start("echo_env.server.app:app", address="127.0.0.1:9", max_sessions=3)
        except ClusterError:
            pass
        """
    )
    assert warned == {
        "RayProvider.start(max_sessions=...) is deprecated and will be removed in 0.2: use max_concurrent_envs=... "
        "instead.": "<string>"
    }
