"""The development wheel (what Docker builds and Space uploads install) is the whole distribution."""

from __future__ import annotations

import zipfile

from openenv_hub.packaging import dev_wheel


def test_the_development_wheel_holds_the_library_the_command_and_the_templates() -> None:
    wheel = dev_wheel()
    assert wheel is not None
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        (entry_points,) = [n for n in names if n.endswith(".dist-info/entry_points.txt")]
        scripts = archive.read(entry_points).decode()
    assert "openenv_hub/__init__.py" in names
    assert "openenv_hub_cli/main.py" in names
    assert any(n.startswith("openenv_hub/_templates/env/") for n in names)
    assert "openenv = openenv_hub_cli.main:main" in scripts
