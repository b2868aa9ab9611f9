"""The end of a test run removes the images it built on the private engine, and only those."""

from __future__ import annotations

import threading
import uuid
from pathlib import Path

import pytest

from docker_support.engine import BASE_IMAGE, build_image, docker, remove_images, require_docker
from docker_support.image_sweep import (
    UNSWEPT,
    images,
    join_runs,
    leave_runs,
    private_engine,
    sweep,
)


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


def test_only_the_last_run_under_way_sweeps_and_it_removes_what_the_others_made(
    tmp_path: Path,
) -> None:
    """Runs that share the engine: one that ends while another is under way removes nothing
    (the other's builds have images between their steps), and the last removes what all made."""
    first, second = join_runs(tmp_path), join_runs(tmp_path)
    assert leave_runs(first, {"sha256:a"}, tmp_path) is None  # the second is under way
    first.close()
    third = join_runs(tmp_path)
    assert leave_runs(second, {"sha256:b"}, tmp_path) is None  # the third is
    second.close()
    assert leave_runs(third, {"sha256:c"}, tmp_path) == {"sha256:a", "sha256:b", "sha256:c"}
    assert (tmp_path / UNSWEPT).read_text() == ""
    joined = threading.Event()
    waiting = threading.Thread(target=lambda: (join_runs(tmp_path).close(), joined.set()))
    waiting.start()
    try:
        assert not joined.wait(0.5)  # a run that starts while the last one sweeps waits
    finally:
        third.close()  # the sweep is over
        waiting.join(30)
    assert joined.is_set()
