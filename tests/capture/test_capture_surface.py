"""The capture package's public surface: complete, importable, and light to import."""

from __future__ import annotations

import subprocess
import sys

import openenv_hub.capture as capture


def test_all_names_every_public_class_and_function_of_the_package() -> None:
    for name in capture.__all__:
        assert getattr(capture, name) is not None
    public = {
        name
        for name, value in vars(capture).items()
        if not name.startswith("_")
        and getattr(value, "__module__", "").startswith("openenv_hub.capture")
    }
    assert public - set(capture.__all__) == set()


def test_importing_the_package_loads_neither_transformers_nor_aiohttp() -> None:
    code = (
        "import sys, openenv_hub.capture; "
        "heavy = {'transformers', 'torch', 'aiohttp'} & set(sys.modules); assert not heavy, heavy"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
