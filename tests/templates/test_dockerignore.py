"""The template's ``.dockerignore`` leaves out of a plain ``docker build .`` what ``openenv push``
and ``openenv build`` leave out (:func:`openenv_hub.hub.select_files`), as Docker itself reads it."""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from openenv_hub.hub._ignore import (
    ALWAYS_EXCLUDED,
    ALWAYS_EXCLUDED_DIRS,
    SECRET_PATTERNS,
    select_files,
)
from openenv_hub_cli.init import template_dir

DOCKERIGNORE = template_dir() / "{{cookiecutter.name}}" / ".dockerignore"
KEPT = ["a.py", "pkg/b.py", ".env.example", "pkg/.Env.Sample", "notes.txt", "README.md"]


def _sample(pattern: str) -> str:
    """A file name the pattern matches: ``*.pem`` -> ``x.pem``; a folder's name -> a file in it."""
    name = pattern.removeprefix("**/").replace("*", "x")
    return f"{name}/f" if pattern in ALWAYS_EXCLUDED_DIRS or name.endswith(".egg-info") else name


def _first_letter_upper(name: str) -> str:
    """``.git/f`` -> ``.Git/f``."""
    return re.sub("[a-z]", lambda letter: letter.group().upper(), name, count=1)


def _samples() -> list[str]:
    """A file for each rule, at the top and deeper down; file and folder names in upper case
    and in mixed case too (``.Git/``: a file system that ignores case takes it for ``.git/``)."""
    names = [_sample(p) for p in (*ALWAYS_EXCLUDED, *SECRET_PATTERNS)]
    names += [n.upper() for n in names] + [_first_letter_upper(n) for n in names]
    names = [n for n in names if not n.lower().startswith(".openenv/")]  # the staged wheels
    return sorted({*names, *(f"deep/er/{n}" for n in names), *KEPT})


@pytest.fixture
def image_tag() -> Iterator[str]:
    from docker_support.engine import remove_images, require_docker

    require_docker()
    tag = f"openenv-test-ignore/context:{uuid.uuid4().hex[:10]}"
    yield tag
    remove_images(tag)


def test_every_rule_has_a_sample_that_select_files_leaves_out(tmp_path: Path) -> None:
    for rel in _samples():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("x", encoding="utf-8")
    assert select_files(tmp_path).files == sorted(KEPT)


@pytest.mark.docker
def test_docker_leaves_out_what_select_files_leaves_out(tmp_path: Path, image_tag: str) -> None:
    from docker_support.engine import BASE_IMAGE, build_image, docker

    context = tmp_path / "context"
    for rel in _samples():
        (context / rel).parent.mkdir(parents=True, exist_ok=True)
        (context / rel).write_text("x", encoding="utf-8")
    (context / ".dockerignore").write_text(DOCKERIGNORE.read_text(), encoding="utf-8")
    (context / "Dockerfile").write_text(
        "ARG BASE_IMAGE\nFROM ${BASE_IMAGE}\nCOPY . /context/\n", encoding="utf-8"
    )
    build_image(context, image_tag, {"BASE_IMAGE": BASE_IMAGE})
    listing = "import os\nfor t, _, fs in os.walk('/context'):\n    [print(os.path.relpath(os.path.join(t, f), '/context')) for f in fs]"
    in_image = docker("run", "--rm", "--network", "host", image_tag, "python3", "-c", listing)
    assert sorted(in_image.stdout.split()) == select_files(context).files
