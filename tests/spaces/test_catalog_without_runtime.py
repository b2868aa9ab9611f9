"""On a LocalHub that runs no Space apps (``--no-spaces``), the catalog shows a Space as not
running, with the reason LocalHub gives, never as running."""

from __future__ import annotations

import uuid
from pathlib import Path

from catalog_support import plain_space
from huggingface_hub import HfApi

from openenv_catalog import CatalogQuery, CatalogSettings, HubCatalog
from openenv_catalog.catalog import badge_of
from openenv_hub.localhub import LocalHub


def test_a_space_of_a_localhub_without_runtime_is_listed_not_running(tmp_path: Path) -> None:
    tag = f"catalog-off-{uuid.uuid4().hex[:8]}"
    with LocalHub(data_dir=tmp_path / "data", run_spaces=False) as hub:
        api = HfApi(endpoint=hub.endpoint, token=hub.token_for("alice"))
        repo_id = plain_space(api, "alice/echo_env2", [tag])
        settings = CatalogSettings(endpoint=hub.endpoint, token=api.token, tags=(tag,))
        page = HubCatalog(settings).page(CatalogQuery())
    assert page.error == ""
    [env] = page.environments
    assert env.repo_id == repo_id and env.stage == "STOPPED" and not env.running
    badge = badge_of(env, None, pending=False)
    assert badge.state == "not-running" and "its Space runtime is off" in badge.detail
