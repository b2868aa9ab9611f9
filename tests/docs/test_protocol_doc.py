"""docs/protocol.md: its wire samples are what the server sends."""

from __future__ import annotations

import json
from typing import Any

import httpx
from doc_blocks import REPO, doc_block

from openenv_hub import Action, Environment, Observation, State, create_app


class Message(Action):
    message: str


class Echoed(Observation):
    echoed_message: str = ""
    message_length: int = 0


class TypedEcho(Environment[Message, Echoed, State]):
    """The typed echo the document describes: reward 0.1 per character."""

    def reset(self, seed: int | None = None, episode_id: str | None = None, **kw: Any) -> Echoed:
        return Echoed()

    def step(self, action: Message, timeout_s: float | None = None, **kw: Any) -> Echoed:
        n = len(action.message)
        return Echoed(echoed_message=action.message, message_length=n, reward=n / 10)

    @property
    def state(self) -> State:
        return State()


def test_the_step_reply_sample_is_what_post_step_answers(serve: Any) -> None:
    sample = json.loads(doc_block("docs/protocol.md", "step reply").code)
    server = serve(create_app(TypedEcho, Message, Echoed))
    message = sample["observation"]["echoed_message"]
    reply = httpx.post(f"{server.url}/step", json={"action": {"message": message}})
    assert reply.status_code == 200
    assert reply.json() == sample


def test_the_error_table_is_what_the_classes_declare() -> None:
    from openenv_hub import errors

    text = (REPO / "docs" / "protocol.md").read_text(encoding="utf-8")
    table = text.split("<!-- error table: checked by tests/docs/test_protocol_doc.py -->\n")[1]
    lines = table.splitlines()[2:]
    rows = lines[: next(i for i, line in enumerate(lines) if not line.startswith("|"))]
    documented = {}
    for row in rows:
        name, codes, reason, http, jsonrpc = (
            c.strip().strip("`") for c in row.strip("|").split("|")
        )
        documented[name] = (codes.replace("`", ""), reason or None, int(http), int(jsonrpc))
    declared = {
        cls.__name__: (
            ", ".join((cls.code, *cls.other_codes)),
            cls.reason,
            cls.http_status,
            cls.jsonrpc_code,
        )
        for cls in vars(errors).values()
        if isinstance(cls, type) and issubclass(cls, errors.ServerReplyError)
    }
    assert documented == declared
