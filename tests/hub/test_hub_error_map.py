"""hub_error maps the Hub client's own exception classes, the most specific first: a subclass maps
as its base does, and a class that is merely named like one of them is not one."""

from __future__ import annotations

import importlib
import types
from typing import Any

import httpx
import pytest
from huggingface_hub import errors as hf_errors

from openenv_hub.errors import (
    HubAuthenticationError,
    HubConflictError,
    HubConnectionError,
    HubError,
    HubPermissionError,
    InvalidRepoIdError,
    RevisionNotFoundError,
    SpaceNotFoundError,
)
from openenv_hub.hub import hub_error, translate

ENDPOINT = "http://127.0.0.1:9"


def _response(status: int) -> Any:
    """A response of the HTTP library huggingface_hub's errors are built on."""
    library = importlib.import_module(hf_errors.HfHubHTTPError.__mro__[1].__module__)
    return library.Response(status, request=library.Request("GET", f"{ENDPOINT}/api/x"))


def _mapped(exc: BaseException) -> HubError | None:
    return hub_error(exc, endpoint=ENDPOINT, repo_id="alice/x", revision="9.9", action="look")


class _ShadowRepositoryNotFound(Exception):
    """Named like huggingface_hub's class; raised by some other library."""


_ShadowRepositoryNotFound.__name__ = "RepositoryNotFoundError"


class _GatedForUs(hf_errors.RepositoryNotFoundError):
    """A subclass of a mapped class that the mapping does not list."""


def _http(cls: type[hf_errors.HfHubHTTPError], status: int) -> hf_errors.HfHubHTTPError:
    return cls("refused", response=_response(status))


@pytest.mark.parametrize(
    ("exc", "expected"),
    [
        pytest.param(hf_errors.LocalTokenNotFoundError("none"), HubAuthenticationError, id="token"),
        pytest.param(hf_errors.OfflineModeIsEnabled("off"), HubConnectionError, id="offline"),
        pytest.param(hf_errors.HFValidationError("bad id"), InvalidRepoIdError, id="repo-id"),
        pytest.param(
            _http(hf_errors.RevisionNotFoundError, 404), RevisionNotFoundError, id="revision"
        ),
        pytest.param(
            _http(hf_errors.RepositoryNotFoundError, 404), SpaceNotFoundError, id="repository"
        ),
        pytest.param(_http(hf_errors.GatedRepoError, 403), SpaceNotFoundError, id="gated"),
        pytest.param(_http(_GatedForUs, 401), SpaceNotFoundError, id="own-subclass"),
        pytest.param(_http(hf_errors.HfHubHTTPError, 401), HubAuthenticationError, id="401"),
        pytest.param(_http(hf_errors.HfHubHTTPError, 403), HubPermissionError, id="403"),
        pytest.param(_http(hf_errors.HfHubHTTPError, 409), HubConflictError, id="409"),
        pytest.param(_http(hf_errors.HfHubHTTPError, 503), HubConnectionError, id="503"),
        pytest.param(httpx.ConnectError("refused"), HubConnectionError, id="transport"),
        pytest.param(ConnectionResetError(), HubConnectionError, id="reset"),
    ],
)
def test_the_hub_clients_classes_map_the_most_specific_first(
    exc: BaseException, expected: type[HubError]
) -> None:
    mapped = _mapped(exc)
    assert type(mapped) is expected, (type(exc).__mro__, mapped)


def test_an_http_status_the_table_does_not_name_is_a_plain_hub_error() -> None:
    mapped = _mapped(_http(hf_errors.HfHubHTTPError, 418))
    assert type(mapped) is HubError and "(look) (HTTP 418)" in str(mapped)


@pytest.mark.parametrize(
    "exc",
    [
        pytest.param(_ShadowRepositoryNotFound("elsewhere"), id="same-class-name"),
        pytest.param(
            type("TransportError", (Exception,), {"__module__": "httpx._elsewhere"})("x"),
            id="transport-name-in-an-httpx-module",
        ),
        pytest.param(
            type("Refused", (Exception,), {"response": types.SimpleNamespace(status_code=403)})(),
            id="a-response-with-a-status",
        ),
        pytest.param(FileNotFoundError("x"), id="file"),
    ],
)
def test_an_error_that_only_looks_like_the_hub_clients_is_not_mapped(exc: Exception) -> None:
    assert _mapped(exc) is None
    with pytest.raises(type(exc)), translate(endpoint=ENDPOINT, repo_id="alice/x"):
        raise exc


def _raised_from(exc: Exception, cause: BaseException) -> Exception:
    try:
        raise exc from cause
    except Exception as raised:
        return raised


def test_a_download_with_no_copy_on_disk_says_what_stopped_it_asking_the_hub() -> None:
    missing = hf_errors.LocalEntryNotFoundError
    offline = _mapped(_raised_from(missing("no snapshot"), hf_errors.OfflineModeIsEnabled("x")))
    assert isinstance(offline, HubConnectionError) and "HF_HUB_OFFLINE" in str(offline)
    down = _mapped(_raised_from(missing("no snapshot"), httpx.ConnectError("refused")))
    assert isinstance(down, HubConnectionError) and "Could not reach the Hub" in str(down)
    other = _mapped(_raised_from(missing("no snapshot"), ValueError("odd")))
    assert type(other) is HubError and "no copy of it is on disk" in str(other)
    assert "Space alice/x" in str(other)
