"""Space runtime simulation, settings, moves and the request log."""

from __future__ import annotations

import httpx
import pytest
from huggingface_hub import SpaceHardware
from huggingface_hub.errors import HfHubHTTPError, RepositoryNotFoundError

from openenv_hub.testing.pytest_plugin import HubEnv, SpaceFactory


def test_runtime_controls(hub_env: HubEnv, make_space: SpaceFactory) -> None:
    repo_id = make_space()
    api = hub_env.api("alice")
    assert api.get_space_runtime(repo_id).stage == "STOPPED"  # this LocalHub runs no apps
    assert api.pause_space(repo_id).stage == "PAUSED"
    assert api.restart_space(repo_id).stage == "STOPPED"
    hub_env.hub.set_space_runtime(repo_id, host="http://127.0.0.1:1")  # an app of its own
    assert api.pause_space(repo_id).stage == "PAUSED"
    assert api.restart_space(repo_id).stage == "RUNNING"
    runtime = api.request_space_hardware(repo_id, SpaceHardware.CPU_UPGRADE)
    assert runtime.requested_hardware == "cpu-upgrade"


def test_scripted_stages(hub_env: HubEnv, make_space: SpaceFactory) -> None:
    repo_id = make_space()
    api = hub_env.api("alice")
    hub_env.hub.set_space_runtime(repo_id, stage="BUILDING", then=["BUILDING", "RUNNING"])
    stages = [api.get_space_runtime(repo_id).stage for _ in range(4)]
    assert stages == ["BUILDING", "BUILDING", "RUNNING", "RUNNING"]

    hub_env.hub.set_space_runtime(repo_id, stage="RUNTIME_ERROR", error_message="boom")
    runtime = api.get_space_runtime(repo_id)
    assert (runtime.stage, runtime.raw["errorMessage"]) == ("RUNTIME_ERROR", "boom")


def test_runtime_control_route_and_host(hub_env: HubEnv, make_space: SpaceFactory) -> None:
    repo_id = make_space()
    url = f"{hub_env.endpoint}/_localhub/spaces/{repo_id}/runtime"
    admin = {"authorization": f"Bearer {hub_env.hub.admin_token}"}
    update = {"stage": "SLEEPING", "host": "http://127.0.0.1:1"}
    assert httpx.post(url, json=update, headers=admin).json()["stage"] == "SLEEPING"
    info = hub_env.api("alice").space_info(repo_id)
    assert info.host == "http://127.0.0.1:1"
    missing = f"{hub_env.endpoint}/_localhub/spaces/alice/nope/runtime"
    assert httpx.post(missing, json={}, headers=admin).status_code == 404


def test_default_host_explains_itself(hub_env: HubEnv, make_space: SpaceFactory) -> None:
    host = hub_env.api("alice").space_info(make_space()).host
    assert host is not None
    response = httpx.get(f"{host}/health")
    assert response.status_code == 503
    assert "does not run Space apps" in response.json()["error"]


def test_visibility_settings(hub_env: HubEnv, make_space: SpaceFactory) -> None:
    repo_id = make_space()
    api = hub_env.api("alice")
    api.update_repo_settings(repo_id, repo_type="space", private=True)
    with pytest.raises(RepositoryNotFoundError):
        hub_env.api("bob").space_info(repo_id)
    api.update_repo_settings(repo_id, repo_type="space", visibility="public")
    assert hub_env.api("bob").space_info(repo_id).private is False


def test_move_repo(hub_env: HubEnv, make_space: SpaceFactory) -> None:
    source = make_space()
    target = hub_env.repo_id("moved", namespace="org")
    api = hub_env.api("alice")
    api.move_repo(source, target, repo_type="space")
    assert api.repo_exists(target, repo_type="space")
    assert not api.repo_exists(source, repo_type="space")
    api.delete_repo(target, repo_type="space")


def test_create_repo_conflict_and_exist_ok(hub_env: HubEnv, make_space: SpaceFactory) -> None:
    repo_id = make_space()
    api = hub_env.api("alice")
    with pytest.raises(HfHubHTTPError) as caught:
        api.create_repo(repo_id, repo_type="space", space_sdk="docker")
    assert caught.value.response.status_code == 409
    assert caught.value.response.json()["url"].endswith(f"/spaces/{repo_id}")
    assert (
        api.create_repo(repo_id, repo_type="space", space_sdk="docker", exist_ok=True).repo_id
        == repo_id
    )


@pytest.mark.parametrize(
    ("namespace", "name"),
    [
        ("alice", "bad--name"),
        ("alice", "-dash"),
        ("alice", "x" * 97),
        ("alice", "dot.git"),
        ("api", "x"),
        ("alice", "a/b"),
    ],
)
def test_invalid_repo_names_are_rejected(hub_env: HubEnv, namespace: str, name: str) -> None:
    body = {"name": name, "organization": namespace, "type": "space", "sdk": "docker"}
    response = httpx.post(
        f"{hub_env.endpoint}/api/repos/create",
        json=body,
        headers={"authorization": f"Bearer {hub_env.hub.token_for('alice')}"},
    )
    assert response.status_code in (400, 403)


def test_whoami_and_invalid_token(hub_env: HubEnv) -> None:
    assert hub_env.api("alice").whoami()["orgs"][0]["name"] == "org"
    assert hub_env.api("alice", role="read").whoami()["auth"]["accessToken"]["role"] == "read"
    with pytest.raises(HfHubHTTPError) as caught:
        hub_env.api().whoami(token="hf_unknown")
    assert caught.value.response.status_code == 401


def test_default_identity_follows_login(hub_env: HubEnv) -> None:
    from huggingface_hub import whoami

    assert whoami()["name"] == "alice"
    hub_env.login("bob")
    assert whoami()["name"] == "bob"


def test_request_log_only_sees_localhost(hub_env: HubEnv, make_space: SpaceFactory) -> None:
    hub_env.hub.clear_requests()
    repo_id = make_space()
    hub_env.api("alice").space_info(repo_id)
    log = hub_env.hub.requests()
    assert {entry["host"] for entry in log} == {f"127.0.0.1:{hub_env.hub.port}"}
    assert ("POST", "/api/repos/create", "alice") in {
        (entry["method"], entry["path"], entry["user"]) for entry in log
    }
    assert all(entry["path"] != "/api/agent-harnesses" for entry in log)
    admin = {"authorization": f"Bearer {hub_env.hub.admin_token}"}
    over_http = httpx.get(f"{hub_env.endpoint}/_localhub/requests", headers=admin).json()
    assert len(over_http) >= len(log)


def test_list_spaces_respects_visibility(hub_env: HubEnv, make_space: SpaceFactory) -> None:
    public, private = make_space(), make_space(private=True)
    mine = {space.id for space in hub_env.api("alice").list_spaces(author="alice")}
    assert {public, private} <= mine
    theirs = {space.id for space in hub_env.api("bob").list_spaces(author="alice")}
    assert public in theirs and private not in theirs
    found = list(hub_env.api("alice").list_spaces(search=public.split("/")[1]))
    assert [space.id for space in found] == [public]
