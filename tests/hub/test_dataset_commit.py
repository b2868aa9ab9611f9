"""A Hub (or something answering as one) whose dataset commit is not a commit id: the id names
the folder the dataset is downloaded into, which is first removed, so a commit of ``..``
would remove the namespace's folder, every other dataset of it included. Served by uvicorn on 127.0.0.1 and read by the real
huggingface_hub client."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from serving import ServerThread
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from openenv_hub.errors import HubError
from openenv_hub.hub._datasets import download_dataset, parse_dataset_ref


def _answering(sha: str) -> Starlette:
    async def info(request: Request) -> JSONResponse:
        repo = f"{request.path_params['ns']}/{request.path_params['name']}"
        return JSONResponse({"id": repo, "sha": sha, "siblings": [], "private": False})

    routes = [
        Route("/api/datasets/{ns}/{name}", info),
        Route("/api/datasets/{ns}/{name}/revision/{rev:path}", info),
    ]
    return Starlette(routes=routes)


def test_a_commit_that_is_not_forty_hex_characters_is_refused(
    tmp_path: Path, serve: Callable[..., ServerThread]
) -> None:
    cache = tmp_path / "cache"
    victim = cache / "alice" / "other-dataset"
    victim.mkdir(parents=True)
    (victim / "keep.txt").write_text("mine")
    url = serve(_answering("..")).url  # cache/alice/tasks/.. is cache/alice
    ref = parse_dataset_ref("hf://datasets/alice/tasks")
    with pytest.raises(Exception) as raised:  # whichever: the folder is checked first
        download_dataset(ref, into=cache, endpoint=url)
    assert (victim / "keep.txt").read_text() == "mine"  # another dataset's files are kept
    assert raised.type is HubError and "not 40 hex characters" in str(raised.value)
