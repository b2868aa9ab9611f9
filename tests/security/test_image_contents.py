"""Threat: ``openenv build`` bakes into an image what ``openenv push`` would never publish.

An image is as public as a Space once it is pushed to a registry (``openenv deploy kubernetes``
asks for one). The build context is staged with push's own file selection, so a ``.env``, a key
or a link to a file outside the folder never reaches the image. Each test builds for real on the
Docker engine and reads what the image holds.
"""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = [pytest.mark.docker, pytest.mark.slow]

SECRET = "BEGIN OPENSSH PRIVATE KEY: not-for-an-image-7c21"
APP = "/home/user/app"


@pytest.fixture
def image_tag() -> Iterator[str]:
    """A tag of this test's own, removed at the end."""
    from docker_support.engine import remove_images, require_docker

    os.environ["DOCKER_HOST"] = require_docker()
    tag = f"openenv-test-sec/image-contents:{uuid.uuid4().hex[:10]}"
    yield tag
    remove_images(tag)


def _build(path: Path, tag: str) -> str:
    """``openenv build`` as a user runs it (offline base image, no web UI); its output."""
    from docker_support.engine import BASE_IMAGE

    command = [sys.executable, "-m", "openenv_hub_cli.main", "build", str(path), "--tag", tag]
    command += ["--base-image", BASE_IMAGE, "--build-arg", "ENABLE_WEB_INTERFACE=false"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=900, check=False)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    return done.stdout + done.stderr


def _image_files(tag: str) -> dict[str, str]:
    """Every file of the image's app folder (wheels left out), with its text."""
    from docker_support.engine import docker

    script = (
        "import os, sys\n"
        f"for top, dirs, files in os.walk({APP!r}):\n"
        "    dirs[:] = [d for d in dirs if d != '.openenv']\n"
        "    for name in files:\n"
        "        path = os.path.join(top, name)\n"
        "        text = open(path, 'rb').read().decode(errors='replace')\n"
        f"        print(os.path.relpath(path, {APP!r}) + '\\0' + text.replace('\\n', ' '))\n"
    )
    out = docker("run", "--rm", "--network", "host", tag, "python", "-c", script).stdout
    return dict(line.split("\0", 1) for line in out.splitlines() if "\0" in line)


def test_an_image_holds_no_env_file_no_key_and_no_link_target_from_outside(
    echo_copy: Path, tmp_path: Path, image_tag: str
) -> None:
    """``docker run IMAGE cat .env`` showed the author's tokens; a link to ~/.ssh/id_rsa put
    the key itself into the image, and so would a hard link to it, an OAuth client secret or
    a ``.VENV/`` folder (``.venv/`` where case is ignored)."""
    outside = tmp_path / "home"
    outside.mkdir()
    (outside / "id_rsa").write_text(SECRET, encoding="utf-8")
    (echo_copy / ".env").write_text(f"TOKEN={SECRET}\n", encoding="utf-8")
    (echo_copy / "server.pem").write_text(SECRET, encoding="utf-8")
    os.symlink(outside / "id_rsa", echo_copy / "leaked_key")
    os.symlink(outside, echo_copy / "linked_home")
    os.symlink("README.md", echo_copy / "README_LINK.md")
    os.link(outside / "id_rsa", echo_copy / "hard_linked_key")
    (echo_copy / "client_secret.json").write_text(SECRET, encoding="utf-8")
    (echo_copy / ".VENV").mkdir()
    (echo_copy / ".VENV" / "token.txt").write_text(SECRET, encoding="utf-8")

    output = _build(echo_copy, image_tag)
    files = _image_files(image_tag)
    assert "openenv.yaml" in files and "echo_env/server/app.py" in files
    for name in (".env", "server.pem", "leaked_key", "linked_home/id_rsa", "hard_linked_key"):
        assert name not in files, f"{name} is in the image"
    assert not [name for name, text in files.items() if SECRET in text]
    assert files["README_LINK.md"] == files["README.md"]  # a link inside: the file it names
    assert "leaked_key: a link to outside the folder (never followed)" in output
    assert "server.pem: looks like a secret" in output
    assert "client_secret.json: looks like a secret" in output
    assert "hard_linked_key: a hard link (the file has 2 names" in output
