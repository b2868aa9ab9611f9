"""The end of a test run removes the images it built on the private engine, and only those."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from docker_support.engine import BASE_IMAGE, build_image, docker, remove_images, require_docker
from docker_support.image_sweep import images, private_engine, sweep


# Alone (scripts/test.sh runs serial tests after the rest): the sweep prunes dangling images,
# and a build running beside it has one between two of its steps.
@pytest.mark.serial
def test_the_images_a_run_built_are_removed_and_the_base_and_wheelhouses_stay(
    tmp_path: Path,
) -> None:
    require_docker()
    if not private_engine():
        pytest.skip("only the private engine of .ci/docker/setup.sh is swept")
    mark = uuid.uuid4().hex[:10]
    before = images()
    (tmp_path / "Dockerfile").write_text(f"FROM {BASE_IMAGE}\nLABEL sweep-probe={mark}\n")
    built = build_image(tmp_path, f"openenv-test/sweep-{mark}")
    (tmp_path / "Dockerfile").write_text(f"FROM {BASE_IMAGE}\nLABEL sweep-wheels={mark}\n")
    wheels = build_image(tmp_path, f"localhub-wheelhouse:sweep-{mark}")
    try:
        built_id = docker("images", "--quiet", "--no-trunc", built).stdout.strip()
        assert built_id and built_id not in before
        removed = sweep(before)
        assert built_id in removed
        assert docker("images", "--quiet", built).stdout.strip() == ""
        assert docker("images", "--quiet", wheels).stdout.strip()  # kept between runs
        assert docker("images", "--quiet", BASE_IMAGE).stdout.strip()
    finally:
        remove_images(built, wheels)


def test_removing_a_tests_image_keeps_the_step_images_other_builds_share(tmp_path: Path) -> None:
    """A build in the other test process may be between two cached steps of the same image."""
    require_docker()
    mark = uuid.uuid4().hex[:10]
    (tmp_path / "Dockerfile").write_text(
        f"FROM {BASE_IMAGE}\nRUN echo {mark} > /first\nLABEL shared-steps={mark}\n"
    )
    tag = build_image(tmp_path, f"openenv-test/shared-steps-{mark}")
    parent = docker("image", "inspect", "--format", "{{.Parent}}", tag).stdout.strip()
    if not parent and not private_engine():
        remove_images(tag)
        pytest.skip("this engine's builder (BuildKit) keeps no step images to share")
    try:
        assert parent  # the legacy builder keeps the RUN step as an image of its own
        remove_images(tag)
        assert docker("images", "--quiet", tag).stdout.strip() == ""
        assert docker("image", "inspect", parent, check=False).returncode == 0
    finally:
        # This RUN step is the test's own (its mark), so no other build can be using it.
        docker("rmi", "--force", tag, *([parent] if parent else []), check=False)
