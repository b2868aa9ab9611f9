"""Captured calls as plain data (a file, a Hub dataset through the trajectories package), and
prompts built from ids with the tiny model's tokenizer and chat template."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from wire_bodies import post

from openenv_hub.capture import (
    CaptureProxy,
    ChatTokenizer,
    assemble_sequences,
    read_capture,
    stitch,
    write_capture,
)
from openenv_hub.trajectories import push_trajectories, read_hub_records

TOOL = {"type": "function", "function": {"name": "bash", "description": "Run.", "parameters": {}}}


def test_captured_calls_go_to_a_hub_dataset_and_come_back_whole(
    fake_proxy: CaptureProxy, hub_env: Any, tmp_path: Path
) -> None:
    sessions = [fake_proxy.open_session() for _ in range(2)]
    for session in sessions:
        for wire in ("chat", "messages"):
            assert post(fake_proxy.url, wire, session.key).status_code == 200
    rollouts = {s.display_id: s.calls for s in sessions}
    file = write_capture(tmp_path / "capture.jsonl", rollouts)
    dataset = hub_env.repo_id("capture")
    push_trajectories(file, dataset, env_name="capture-test")
    back = read_capture(read_hub_records(dataset))
    assert back == rollouts == read_capture(file)
    first = sessions[0]
    assert assemble_sequences(back[first.display_id]) == first.sequences()
    assert all(s.key not in file.read_text() for s in sessions)


def _conversation(answer: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {"role": "user", "content": "Which files are here?"},
        answer,
        {"role": "tool", "tool_call_id": "c1", "content": "a.txt"},
    ]


def test_a_continuing_prompt_is_the_earlier_ids_then_the_templates_new_turns(
    tiny_chat_model_folder: Path,
) -> None:
    tokenizer = ChatTokenizer(tiny_chat_model_folder)
    answer = {"role": "assistant", "content": "Let me look."}
    messages = _conversation(answer)
    before = tokenizer.encode(tokenizer.render(messages[:1], [TOOL], add_generation_prompt=True))
    sampled = [*tokenizer.encode("Let me look."), tokenizer.end_of_turn_id]
    made = stitch(
        prompt_ids=before,
        sampled_ids=sampled,
        messages=messages,
        answer_at=1,
        tools=[TOOL],
        tokenizer=tokenizer,
    )
    ids, why = made.ids, made.note
    whole = tokenizer.encode(tokenizer.render(messages, [TOOL], add_generation_prompt=True))
    assert why is None and ids == whole  # answers that tokenise back: the same as text
    odd = [*(tokenizer.encode(c)[0] for c in "Let me look."), tokenizer.end_of_turn_id]
    assert odd != sampled  # the same text in other tokens, one per character
    ids = stitch(
        prompt_ids=before,
        sampled_ids=odd,
        messages=messages,
        answer_at=1,
        tools=[TOOL],
        tokenizer=tokenizer,
    ).ids
    assert ids is not None and ids[: len(before) + len(odd)] == before + odd
    assert ids[len(before) + len(odd) :] == whole[len(before) + len(sampled) :]


def test_an_answer_cut_short_is_closed_as_the_template_closes_a_turn(
    tiny_chat_model_folder: Path,
) -> None:
    tokenizer = ChatTokenizer(tiny_chat_model_folder)
    messages = _conversation({"role": "assistant", "content": "Let me"})
    before = [1, 2, 3]
    cut = tokenizer.encode("Let me")  # no end-of-turn token: stopped by max_tokens
    made = stitch(
        prompt_ids=before,
        sampled_ids=cut,
        messages=messages,
        answer_at=1,
        tools=[TOOL],
        tokenizer=tokenizer,
    )
    ids = made.ids
    assert made.note is None and ids is not None
    assert ids[len(before) + len(cut)] == tokenizer.end_of_turn_id
    tail = tokenizer.render(messages, [TOOL], add_generation_prompt=True).split("Let me", 1)[1]
    assert ids[len(before) + len(cut) :] == tokenizer.encode(tail)


def test_a_template_that_rewrites_earlier_turns_is_not_stitched(
    tiny_chat_model_folder: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "rewriting"
    folder.mkdir()
    for name in ("tokenizer.json", "tokenizer_config.json", "config.json"):
        (folder / name).write_text((tiny_chat_model_folder / name).read_text())
    # A template that shows only the last assistant turn's text, as some drop old reasoning.
    template = (
        "{% for m in messages %}<|im_start|>{{ m.role }}\n"
        "{% if m.role == 'assistant' and not loop.last %}(earlier){% else %}{{ m.content }}{% endif %}"
        "<|im_end|>\n{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
    )
    (folder / "chat_template.jinja").write_text(template)
    config = json.loads((folder / "tokenizer_config.json").read_text())
    config.pop("chat_template", None)
    (folder / "tokenizer_config.json").write_text(json.dumps(config))
    tokenizer = ChatTokenizer(folder)
    messages = [
        *_conversation({"role": "assistant", "content": "Look."}),
        {"role": "assistant", "content": "ok"},
    ]
    messages.append({"role": "user", "content": "Go on."})
    made = stitch(
        prompt_ids=[1],
        sampled_ids=[2],
        messages=messages,
        answer_at=1,
        tools=[],
        tokenizer=tokenizer,
    )
    assert made.ids is None and made.note is not None
    assert "renders the earlier turns differently" in made.note


class CountingTokenizer(ChatTokenizer):
    """A ChatTokenizer that counts its renders."""

    renders = 0

    def render(self, *args: Any, **options: Any) -> str:
        self.renders += 1
        return super().render(*args, **options)


def test_the_earlier_calls_prompt_text_spares_a_render_once_it_gave_the_same_cut(
    tiny_chat_model_folder: Path,
) -> None:
    tokenizer = CountingTokenizer(tiny_chat_model_folder)
    messages = _conversation({"role": "assistant", "content": "Let me look."})
    earlier = tokenizer.render(messages[:1], [TOOL], add_generation_prompt=True)
    sampled = [*tokenizer.encode("Let me look."), tokenizer.end_of_turn_id]
    asked = {"prompt_ids": [1], "sampled_ids": sampled, "messages": messages, "answer_at": 1}
    asked.update(tools=[TOOL], tokenizer=tokenizer)
    slow = stitch(**asked)
    assert not tokenizer.quick_cut_checked  # nothing to check it against yet
    checked = stitch(**asked, earlier_text=earlier)
    assert tokenizer.quick_cut_checked and checked == slow
    tokenizer.renders = 0
    quick = stitch(**asked, earlier_text=earlier)
    assert quick == slow and tokenizer.renders == 1  # the whole conversation only
    stitch(**asked, earlier_text="something else")  # not a prefix: rendered up to the answer too
    assert tokenizer.renders == 3


def test_a_template_that_fails_on_a_conversation_lets_the_engine_render_it(
    fake_engine: Any, proxies: Any, tiny_chat_model_folder: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "strict"
    folder.mkdir()
    for name in ("tokenizer.json", "tokenizer_config.json", "config.json"):
        (folder / name).write_text((tiny_chat_model_folder / name).read_text())
    template = (
        "{% for m in messages %}{% if m.role == 'tool' %}"
        "{{ raise_exception('this template takes no tool messages') }}{% endif %}"
        "<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
        "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
    )
    (folder / "chat_template.jinja").write_text(template)
    proxy = proxies(engine_url=f"{fake_engine.url}/v1", model="fake", tokenizer=folder)
    session = proxy.open_session()
    first = [{"role": "user", "content": "hello"}]
    assert post(proxy.url, "chat", session.key, {"messages": first}).status_code == 200
    answer = session.calls[0].reply
    second = [*first, answer, {"role": "tool", "tool_call_id": "c", "content": "x"}]
    assert post(proxy.url, "chat", session.key, {"messages": second}).status_code == 200
    call = session.calls[1]
    assert (call.continues, call.stitched) == (0, False)
    assert "the chat template failed on this conversation" in str(call.link_note)
    assert "takes no tool messages" in str(call.link_note)


def test_a_call_whose_tools_changed_starts_a_new_sequence(
    fake_engine: Any, proxies: Any, tiny_chat_model_folder: Path
) -> None:
    """The earlier call's prompt ids name its tools: reusing them for a call offering others
    would run a prompt that names the old tools while the record says the new ones."""
    other = {
        "type": "function",
        "function": {"name": "rm", "description": "Remove.", "parameters": {}},
    }
    proxy = proxies(
        engine_url=f"{fake_engine.url}/v1", model="fake", tokenizer=tiny_chat_model_folder
    )
    session = proxy.open_session()
    first = [{"role": "user", "content": "hello"}]
    assert (
        post(proxy.url, "chat", session.key, {"messages": first, "tools": [TOOL]}).status_code
        == 200
    )
    turns = [*first, session.calls[0].reply, {"role": "user", "content": "go on"}]
    offers = [
        {"tools": [TOOL]},  # the same tools: stitched from call 0's ids
        {"tools": [other]},  # other tools
        {"tools": [TOOL], "tool_choice": "required"},  # the same tools, another tool_choice
    ]
    for offer in offers:
        assert post(proxy.url, "chat", session.key, {"messages": turns, **offer}).status_code == 200
    stitched, retooled, rechosen = session.calls[1:]
    assert (stitched.continues, stitched.stitched) == (0, True)
    sent = [r["body"] for r in fake_engine.app.state.requests[-3:]]
    assert "kv_transfer_params" in sent[0]
    for call, body in zip((retooled, rechosen), sent[1:], strict=True):
        assert (call.continues, call.stitched, call.history_length) == (None, False, 0)
        assert "tools or tool_choice differ from those of call 0" in str(call.link_note)
        assert "kv_transfer_params" not in body  # the engine renders the new tools itself
    new = [f for f in session.report().findings if f.code == "new_sequence"]
    assert [f.call for f in new] == [0, 2, 3] and "tool_choice differ" in new[1].message
