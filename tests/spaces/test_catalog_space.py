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
import os
import re
import shlex
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from catalog_support import REPO, card
from doc_blocks import doc_block
from playwright.sync_api import Page, expect
from polling import wait_until

from openenv_hub.providers.local import free_port, wait_for_health

# A cold engine builds the echo image and the catalog's gradio layer first: minutes, not seconds.
pytestmark = [
    pytest.mark.docker,
    pytest.mark.slow,
    pytest.mark.browser,
    pytest.mark.timeout(1200),
]

DOC = "docs/catalog.md"
BIN = Path(sys.executable).parent
HUB_PORT, CATALOG_PORT = "8765", "7860"  # as the document prints them
BUILD_TIMEOUT_S = 900

ECHO = "alice/echo_env"
HALF = "alice/half_env"  # runs, but is not an OpenEnv server
BROKEN = "alice/broken_env"
PAUSED = "alice/paused_env"
UNTAGGED = "alice/notes"
CATALOG = "alice/catalog"
TAGGED = [ECHO, HALF, PAUSED, BROKEN]  # most liked first

HEALTH_ONLY_SERVER = '''\
"""Answers /health and nothing else: it runs, but it is no OpenEnv server."""
import json
import os
import signal
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))  # as PID 1, stop when the Space stops


class Handler(BaseHTTPRequestHandler):
    def do_GET(self):
        ok = self.path == "/health"
        body = json.dumps({"status": "healthy"} if ok else {"detail": "Not Found"}).encode()
        self.send_response(200 if ok else 404)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_POST = do_GET

    def log_message(self, *args):
        pass


ThreadingHTTPServer(("0.0.0.0", int(os.environ.get("PORT", "8000"))), Handler).serve_forever()
'''
HEALTH_ONLY_DOCKERFILE = """\
ARG BASE_IMAGE=python:3.11-slim
FROM ${BASE_IMAGE}
COPY server.py /srv/server.py
CMD ["python3", "/srv/server.py"]
"""
BROKEN_DOCKERFILE = """\
ARG BASE_IMAGE=python:3.11-slim
FROM ${BASE_IMAGE}
RUN echo "fetching the weights: mirror unreachable" && exit 7
"""


@dataclass
class Process:
    """A command of the document, running in a session of its own; its output in a file."""

    command: list[str]
    log: Path
    env: dict[str, str]
    cwd: Path = REPO
    popen: subprocess.Popen[bytes] = field(init=False)

    def __post_init__(self) -> None:
        with self.log.open("wb") as out:
            self.popen = subprocess.Popen(
                self.command, cwd=self.cwd, env=self.env, stdout=out, stderr=subprocess.STDOUT,
                start_new_session=True,
            )  # fmt: skip

    @property
    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def wait(self, timeout_s: float) -> int:
        try:
            return self.popen.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"{self.command} still runs:\n{self.output[-4000:]}") from None

    def stop(self, timeout_s: float = 90) -> None:
        """SIGTERM to its process group (only this command's), then SIGKILL if it lingers."""
        if self.popen.poll() is None:
            os.killpg(self.popen.pid, signal.SIGTERM)
            try:
                self.popen.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                os.killpg(self.popen.pid, signal.SIGKILL)
                self.popen.wait(timeout=30)


@dataclass
class Deployment:
    hub: str
    catalog: str
    env: dict[str, str]
    publish: Process  # `openenv push spaces/catalog ... --wait`, still running at first

    def api(self) -> Any:
        from huggingface_hub import HfApi

        return HfApi(endpoint=self.hub, token="hf_alice_write")

    def openenv(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(BIN / "openenv"), *args], env={**self.env, "COLUMNS": "250"},
            capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip


def _environment(tmp: Path) -> dict[str, str]:
    from docker_support.engine import BASE_IMAGE, require_docker

    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    env.update(
        DOCKER_HOST=require_docker(),
        PATH=f"{BIN}{os.pathsep}{env['PATH']}",
        HF_HOME=str(tmp / "hf_home"),
        HF_HUB_DISABLE_TELEMETRY="1",
        OPENENV_BASE_IMAGE=BASE_IMAGE,
        OPENENV_BUILD_ARGS="ENABLE_WEB_INTERFACE=false",
        CATALOG_POLL_S="1",
        CATALOG_PAGE_SIZE="3",
    )
    return env


def _start_localhub(tmp: Path, env: dict[str, str]) -> tuple[Process, str]:
    """The document's first block: LocalHub in the background, then its variables."""
    start, export = doc_block(DOC, "localhub").lines
    assert start.endswith(" &") and export.startswith("export ")
    port = str(free_port())
    hub = Process(shlex.split(start[:-2].replace(HUB_PORT, port)), tmp / "localhub.log", env)
    for pair in shlex.split(export)[1:]:
        key, _, value = pair.partition("=")
        env[key] = value.replace(HUB_PORT, port)
    wait_until(lambda: _answers(f"{env['HF_ENDPOINT']}/_localhub/health"), 60, "LocalHub")
    runtime = httpx.get(f"{env['HF_ENDPOINT']}/_localhub/space-runtime").json()
    assert runtime["enabled"] and runtime["buildArgs"]["ENABLE_WEB_INTERFACE"] == "false", runtime
    return hub, port


def _answers(url: str) -> bool:
    try:
        return httpx.get(url, timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


def _plain_spaces(api: Any) -> None:
    """The Spaces besides the environment: built from a tiny Dockerfile, or never built."""
    from huggingface_hub import CommitOperationAdd

    def space(repo_id: str, files: dict[str, str | bytes], sdk: str = "docker") -> None:
        api.create_repo(repo_id, repo_type="space", space_sdk=sdk)
        ops = [
            CommitOperationAdd(p, c if isinstance(c, bytes) else c.encode())
            for p, c in files.items()
        ]
        api.create_commit(repo_id, ops, commit_message="the Space", repo_type="space")

    health_only = {"Dockerfile": HEALTH_ONLY_DOCKERFILE, "server.py": HEALTH_ONLY_SERVER}
    space(HALF, {"README.md": card(["openenv", "games"], title="Half env"), **health_only})
    space(BROKEN, {"README.md": card(["openenv"], short_description="Never builds"),
                   "Dockerfile": BROKEN_DOCKERFILE})  # fmt: skip
    space(PAUSED, {"README.md": card(["openenv"], title="Paused env"), **health_only})
    space(UNTAGGED, {"README.md": card(["games"])}, sdk="static")


def _stage(api: Any, repo_id: str) -> str:
    return str(api.get_space_runtime(repo_id).stage)


@pytest.fixture(scope="module")
def deployment(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployment]:
    tmp = tmp_path_factory.mktemp("catalog-space")
    env = _environment(tmp)
    hub, port = _start_localhub(tmp, env)
    started = [hub]
    try:
        (push_echo,) = doc_block(DOC, "publish an environment").lines
        echo = Process(shlex.split(push_echo), tmp / "push-echo.log", env)
        started.append(echo)
        api = Deployment(env["HF_ENDPOINT"], "", env, echo).api()
        wait_until(lambda: api.repo_exists(ECHO, repo_type="space"), 120, "the echo Space")
        _plain_spaces(api)
        (push_catalog,) = doc_block(DOC, "publish the catalog").lines
        publish = Process(
            shlex.split(push_catalog.replace(HUB_PORT, port)), tmp / "push-catalog.log", env
        )
        started.append(publish)
        for repo_id, likes in zip(TAGGED, (3, 2, 1, 0), strict=True):
            httpx.post(
                f"{env['HF_ENDPOINT']}/_localhub/spaces/{repo_id}/likes", json={"likes": likes}
            )

        assert echo.wait(BUILD_TIMEOUT_S) == 0, echo.output[-4000:]
        wait_until(lambda: _stage(api, PAUSED) == "RUNNING", 300, "the paused Space's first run")
        api.pause_space(PAUSED)
        wait_until(lambda: _stage(api, HALF) == "RUNNING", 300, "the half env")
        wait_until(lambda: _stage(api, BROKEN) == "BUILD_ERROR", 300, "the broken build")

        run_catalog = doc_block(DOC, "run the catalog").code.replace(CATALOG_PORT, str(free_port()))
        catalog_url = "http://127.0.0.1:" + re.findall(r"--port (\d+)", run_catalog)[0]
        catalog = Process(["bash", "-c", run_catalog], tmp / "catalog.log", env)
        started.append(catalog)
        wait_for_health(catalog_url, timeout_s=120, alive=lambda: catalog.popen.poll() is None)
        yield Deployment(env["HF_ENDPOINT"], catalog_url, env, publish)
    finally:
        for process in reversed(started):
            process.stop()
        _check_nothing_left(hub)


def _check_nothing_left(hub: Process) -> None:
    from docker_support.engine import docker

    mine = f"label=openenv-hub.owner-pid={hub.popen.pid}"
    assert docker("ps", "-aq", "--filter", mine).stdout.strip() == "", "a Space container is left"


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

    sha = deployment.api().space_info(CATALOG).sha
    image = f"localhub-space/{CATALOG.replace('/', '-')}:{sha[:12]}"
    history = docker("history", "--no-trunc", "--format", "{{.CreatedBy}}", image).stdout
    steps = [step for step in history.splitlines() if "pip install" in step]
    assert len(steps) == 2, steps  # gradio (requirements.txt), then openenv-hub
    assert "-r requirements.txt" in steps[-1] and "openenv-hub[ui]" in steps[0]
