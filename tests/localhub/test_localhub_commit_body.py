"""The commit body read from disk: small lines parsed as JSON, a big file's content decoded in
pieces into a file of its own, whatever comes before and after it."""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path

import pytest

from openenv_hub.localhub.commit_body import SMALL_LINE, read_commit_body
from openenv_hub.localhub.errors import HubError
from openenv_hub.localhub.gitops import DeletePath, PutFile


def _file_line(path: str, content: bytes, *, path_first: bool = False) -> dict[str, object]:
    value = {"content": base64.b64encode(content).decode(), "path": path, "encoding": "base64"}
    if path_first:
        value = {"path": path, "content": value["content"], "encoding": "base64"}
    return {"key": "file", "value": value}


def _body(tmp_path: Path, *items: dict[str, object]) -> Path:
    lines = [{"key": "header", "value": {"summary": "add", "parentCommit": "abc1234"}}, *items]
    path = tmp_path / "body.ndjson"
    path.write_text("\n".join(json.dumps(item) for item in lines) + "\n")
    return path


def test_big_and_small_files_in_one_body(tmp_path: Path) -> None:
    big = os.urandom(3 * SMALL_LINE + 5)  # spans several reads, not a multiple of 3 bytes
    body = _body(
        tmp_path,
        _file_line("a.txt", b"small"),
        _file_line("weights.bin", big),
        {"key": "deletedFolder", "value": {"path": "old/"}},
        _file_line("b.txt", b"after"),
    )
    payload = read_commit_body(body, tmp_path)
    small, spooled, deleted, after = payload.operations
    assert (payload.summary, payload.parent_commit) == ("add", "abc1234")
    assert small == PutFile("a.txt", b"small") and after == PutFile("b.txt", b"after")
    assert deleted == DeletePath("old/", folder=True)
    assert isinstance(spooled, PutFile) and spooled.path == "weights.bin"
    assert spooled.source is not None and spooled.source.read_bytes() == big


def test_a_big_line_written_another_way_is_read_whole(tmp_path: Path) -> None:
    big = os.urandom(2 * SMALL_LINE)
    payload = read_commit_body(_body(tmp_path, _file_line("w", big, path_first=True)), tmp_path)
    assert payload.operations == [PutFile("w", big)]


def test_bad_base64_in_a_big_file_is_a_400(tmp_path: Path) -> None:
    line = _file_line("w", os.urandom(2 * SMALL_LINE))
    value = line["value"]
    assert isinstance(value, dict)
    value["content"] = value["content"][:SMALL_LINE] + "!!!!" + value["content"][SMALL_LINE:]
    with pytest.raises(HubError, match="Invalid base64") as bad:
        read_commit_body(_body(tmp_path, line), tmp_path)
    assert bad.value.status == 400


def test_a_body_cut_inside_a_big_file_is_a_400(tmp_path: Path) -> None:
    body = _body(tmp_path, _file_line("w", os.urandom(2 * SMALL_LINE)))
    body.write_bytes(body.read_bytes()[: 2 * SMALL_LINE])
    with pytest.raises(HubError, match="ends inside a file's content"):
        read_commit_body(body, tmp_path)
