"""The image a Space is built into names that Space and that commit, and no other."""

from __future__ import annotations

import re

import pytest

from openenv_hub.docker import space_image_tag

COMMIT = "0123456789abcdef0123456789abcdef01234567"
# Docker's reference grammar: lower-case path components, then a tag of at most 128 characters.
REFERENCE = re.compile(
    r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*"
    r":[\w][\w.-]{0,127}"
)


@pytest.mark.parametrize(
    ("one", "other"),
    [("alice/my_env", "alice-my/env"), ("alice/Env", "alice/env"), ("org/a.b", "org/a-b")],
)
def test_spaces_whose_names_read_alike_get_images_of_their_own(one: str, other: str) -> None:
    """Threat: the image cache hands one Space's image to another whose name has the same
    slug (``openenv-space-alice-my-env``), so ``from_hub(runtime="docker")`` runs its code."""
    assert space_image_tag(one, COMMIT) != space_image_tag(other, COMMIT)


@pytest.mark.parametrize("repo_id", ["alice/my_env", "Org_/x.y-z", "a/_b_"])
@pytest.mark.parametrize("prefix", ["openenv-space", "localhub-space"])
def test_the_tag_is_a_docker_reference_with_the_full_commit(repo_id: str, prefix: str) -> None:
    tag = space_image_tag(repo_id, COMMIT, prefix=prefix)
    assert REFERENCE.fullmatch(tag), tag
    assert tag.startswith(f"{prefix}-") and tag.endswith(f":{COMMIT}")
