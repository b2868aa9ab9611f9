"""The catalog as docs/catalog.md runs it, in chromium: LocalHub (a process of its own, building
and running Docker Spaces) holds an environment that runs and passes validation, one that runs
but is no OpenEnv server, one whose build fails, a paused one, and Spaces without the openenv
tag; the catalog lists exactly the tagged ones, searches, filters, sorts and pages them, shows
each badge and the install line ``openenv versions`` prints, and a detail view. Then the catalog
Space itself is pushed to LocalHub and runs there, in Docker.

Builds are few and lean: the echo environment without its web UI, two Spaces of one tiny Python
file, a Dockerfile that fails at once, and the catalog's image, whose gradio layer is built once
per engine.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from catalog_deployment import (
    BROKEN,
    BUILD_TIMEOUT_S,
    CATALOG,
    ECHO,
    HALF,
    PAUSED,
    TAGGED,
    UNTAGGED,
    Deployment,
)
from playwright.sync_api import Page, expect
from polling import wait_until

# A cold engine builds the echo image and the catalog's gradio layer first: minutes, not seconds.
pytestmark = [
    pytest.mark.docker,
    pytest.mark.slow,
    pytest.mark.browser,
    pytest.mark.timeout(1200),
]

# -- the page -----------------------------------------------------------------------------------


def rows(page: Page) -> Any:
    return page.locator("#catalog tr[data-space]")


def row(page: Page, repo_id: str) -> Any:
    return page.locator(f'#catalog tr[data-space="{repo_id}"]')


def listed(page: Page) -> list[str]:
    return [str(r.get_attribute("data-space")) for r in rows(page).all()]


def open_catalog(new_page: Callable[..., Page], deployment: Deployment, query: str = "") -> Page:
    page = new_page()
    page.goto(f"{deployment.catalog}/{query}")
    expect(rows(page).first).to_be_visible(timeout=30_000)
    return page


def choose(page: Page, label: str, option: str) -> None:
    page.get_by_label(label).click()
    page.get_by_role("option", name=option, exact=True).click()


def test_the_catalog_lists_exactly_the_tagged_spaces_a_page_at_a_time(
    deployment: Deployment, new_page: Callable[..., Page]
) -> None:
    page = open_catalog(new_page, deployment)
    expect(rows(page)).to_have_count(3)
    assert listed(page) == TAGGED[:3]  # most liked first, CATALOG_PAGE_SIZE=3
    previous, following = (
        page.get_by_role("button", name=n) for n in ("Previous page", "Next page")
    )
    expect(previous).to_be_disabled()
    following.click()
    expect(rows(page)).to_have_count(1)
    assert listed(page) == TAGGED[3:]
    expect(following).to_be_disabled()
    expect(page.locator("#page-label")).to_contain_text("Page 2")
    previous.click()
    expect(rows(page)).to_have_count(3)
    text = page.locator("#catalog").inner_text()
    assert UNTAGGED not in text and CATALOG not in text


def test_search_tag_and_order(deployment: Deployment, new_page: Callable[..., Page]) -> None:
    page = open_catalog(new_page, deployment)
    search = page.get_by_label("Search")
    search.fill("BROKEN")
    search.press("Enter")
    expect(rows(page)).to_have_count(1)
    assert listed(page) == [BROKEN]
    search.fill("")
    search.press("Enter")
    expect(rows(page)).to_have_count(3)

    choose(page, "Tag", "games")  # the untagged Space has 'games' too
    expect(rows(page)).to_have_count(1)
    assert listed(page) == [HALF]
    choose(page, "Tag", "")
    expect(rows(page)).to_have_count(3)

    choose(page, "Sort by", "Newest")
    expect(rows(page).first).to_have_attribute("data-space", PAUSED)
    assert listed(page) == [PAUSED, BROKEN, HALF]  # created last first


def test_badges_say_what_validation_found(
    deployment: Deployment, new_page: Callable[..., Page]
) -> None:
    page = open_catalog(new_page, deployment)
    badge = lambda repo_id: row(page, repo_id).locator(".oc-badge")  # noqa: E731
    expect(badge(ECHO)).to_have_text("✓ valid", timeout=90_000)
    expect(row(page, ECHO).locator(".oc-when")).to_contain_text(re.compile(r"checked \d{4}-.* UTC"))

    app = deployment.api().space_info(HALF).host
    report = json.loads(deployment.openenv("validate", app, "--json").stdout)
    first_failure = report["summary"]["failed"][0]
    assert first_failure == "openapi_version_available"
    expect(badge(HALF)).to_contain_text(f"✗ {first_failure}", timeout=90_000)
    expect(badge(HALF)).to_have_attribute("title", re.compile(f"^{first_failure} failed at"))
    expect(badge(PAUSED)).to_have_text("✗ not running (PAUSED)")
    expect(row(page, HALF).locator(".oc-stage")).to_have_text("RUNNING")
    page.get_by_role("button", name="Next page").click()
    expect(badge(BROKEN)).to_have_text("✗ not running (BUILD_ERROR)")
    expect(badge(BROKEN)).to_have_attribute("title", re.compile("exit code: 7|returned a non-zero"))


def test_the_install_line_is_what_openenv_versions_prints(
    deployment: Deployment, new_page: Callable[..., Page]
) -> None:
    printed = deployment.openenv("versions", ECHO)
    assert printed.returncode == 0, printed.stderr
    (line,) = [line for line in printed.stdout.splitlines() if "pip install" in line]
    install = "pip install " + line.split("pip install ", 1)[1].strip(" │|")
    assert install == f"pip install git+{deployment.hub}/spaces/{ECHO}@0.1.0"
    page = open_catalog(new_page, deployment)
    expect(row(page, ECHO).locator(".oc-install")).to_have_text(install)
    expect(row(page, ECHO).locator(".oc-versions")).to_have_text("0.1.0")
    web = row(page, ECHO).get_by_role("link", name="Web UI")
    expect(web).to_have_attribute("href", f"{deployment.hub}/_localhub/apps/{ECHO}/web/")
    expect(row(page, HALF).locator(".oc-install")).to_have_text(
        f"pip install git+{deployment.hub}/spaces/{HALF}"
    )


def test_the_detail_view(deployment: Deployment, new_page: Callable[..., Page]) -> None:
    page = open_catalog(new_page, deployment)
    choose(page, "Show details of", ECHO)
    expect(page.locator("#manifest .cm-content")).to_contain_text("name: echo_env")
    expect(page.locator("#action-schema")).to_contain_text("CallToolAction", timeout=90_000)
    expect(page.locator("#observation-schema")).to_contain_text("CallToolObservation")
    checks = page.locator("#report tr[data-check]")
    expect(checks).to_have_count(10)
    expect(page.locator('#report tr[data-check="websocket"]')).to_contain_text("pass")
    when = page.locator("#detail .oc-when")
    before = when.inner_text()
    page.get_by_role("button", name="Re-check now").click()
    expect(when).not_to_have_text(before, timeout=60_000)  # a newer timestamp
    expect(when).to_contain_text(re.compile(r"checked .* UTC$"))

    page = open_catalog(new_page, deployment, f"?space={HALF}")  # the rows' "Details" link
    failed = page.locator('#report tr[data-check="openapi_version_available"]')
    expect(failed).to_contain_text("FAIL", timeout=90_000)
    expect(page.locator("#manifest .cm-content")).to_contain_text("no openenv.yaml")


def test_every_field_has_a_label(deployment: Deployment, new_page: Callable[..., Page]) -> None:
    page = open_catalog(new_page, deployment)
    for label in ("Search", "Tag", "Sort by", "Show details of"):
        field = page.get_by_label(label, exact=True)
        expect(field).to_have_count(1)
        assert field.evaluate("e => e.tagName") in ("INPUT", "TEXTAREA")


# -- the Space ----------------------------------------------------------------------------------


def test_the_catalog_space_runs_on_localhub(
    deployment: Deployment, new_page: Callable[..., Page]
) -> None:
    publish = deployment.publish
    assert publish.wait(BUILD_TIMEOUT_S) == 0, publish.output[-6000:]
    assert f"Running {CATALOG}" in publish.output and "Install:" not in publish.output
    app = re.findall(r"App:\s+(\S+)", publish.output)[0]
    assert app == f"{deployment.hub}/_localhub/apps/{CATALOG}"
    info = deployment.api().space_info(CATALOG)
    assert "openenv" not in (info.tags or [])  # it does not list itself

    with httpx.Client(base_url=app, timeout=30) as http:
        assert http.get("/health").json() == {"status": "healthy"}
        found = http.get("/api/environments").json()  # its own page size: 20
        assert [env["id"] for env in found["environments"]] == TAGGED

        def valid() -> bool:
            return http.get(f"/api/environments/{ECHO}").json()["validation"]["state"] == "passed"

        wait_until(valid, 120, "the catalog Space validating the echo Space")

    page = new_page()
    page.goto(f"{app}/")
    expect(rows(page)).to_have_count(4, timeout=60_000)
    assert listed(page) == TAGGED


def test_the_catalog_image_keeps_gradio_in_a_layer_of_its_own(deployment: Deployment) -> None:
    from docker_support.engine import docker

    from openenv_hub.docker import space_image_tag

    sha = deployment.api().space_info(CATALOG).sha
    assert sha is not None
    image = space_image_tag(CATALOG, sha, prefix="localhub-space")
    history = docker("history", "--no-trunc", "--format", "{{.CreatedBy}}", image).stdout
    steps = [step for step in history.splitlines() if "pip install" in step]
    assert len(steps) == 2, steps  # gradio (requirements.txt), then openenv-hub
    assert "-r requirements.txt" in steps[-1] and "openenv-hub[ui]" in steps[0]
