"""A tiny chat model made on the spot and fine-tuned until it says exactly what a few fixed
conversations say: under greedy decoding, given any prefix of one of them that ends before an
assistant turn, it writes that turn token for token (tool calls included) and stops.

That is how a test makes a model deterministic enough for a harness to solve a task with it
(a random-weight model never writes a well-formed tool call), in about a minute on a CPU and
with nothing downloaded: a byte-level BPE tokenizer trained on the conversations, wearing the
Qwen2.5 chat template (examples/tiny_model.py), and a two-layer Qwen2 whose attention heads are
32 wide (vLLM's CPU attention takes head sizes of 32 and up).

From Python::

    model, tokenizer = build(conversations, tools)
    result = fine_tune(model, tokenizer, conversations, tools)
    assert result.reproduced
    save(model, tokenizer, folder)

From a shell (what the test fixtures run, so the test process never loads torch)::

    python tests/engine_support/tiny_chat_model.py SPEC.json FOLDER

where SPEC.json holds ``{"conversations": [...], "tools": [...]}`` and the result is printed as
JSON. ``conversations`` are chat completions messages; a tool call's ``arguments`` is an
object.
"""

from __future__ import annotations

import json
import random
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

#: The model's shape: hidden 64 over 2 heads is a head size of 32; one key/value head.
MODEL_SHAPE = {
    "hidden_size": 64,
    "intermediate_size": 128,
    "num_hidden_layers": 2,
    "num_attention_heads": 2,
    "num_key_value_heads": 1,
}


@dataclass
class FineTuneResult:
    """How the fine-tuning went: steps taken, the last loss, whether greedy decoding
    reproduces every assistant turn, how long it took, and the smallest lead of a trained
    token over the next best (:func:`margin`)."""

    steps: int
    loss: float
    reproduced: bool
    seconds: float
    margin: float = 0.0


def build(conversations: list[list[dict[str, Any]]], tools: list[Any], seed: int = 0) -> Any:
    """A tokenizer trained on ``conversations`` rendered with ``tools``, and a model with
    random weights sized for it: ``(model, tokenizer)``."""
    import torch
    from transformers import Qwen2Config, Qwen2ForCausalLM

    sys.path.insert(0, str(EXAMPLES))
    from tiny_model import build_tokenizer

    torch.set_num_threads(1)  # a model this small runs fastest on one thread
    bootstrap = build_tokenizer([])
    corpus = [bootstrap.apply_chat_template(c, tools=tools, tokenize=False) for c in conversations]
    tokenizer = build_tokenizer(corpus)
    torch.manual_seed(seed)
    config = Qwen2Config(
        vocab_size=len(tokenizer),
        max_position_embeddings=4096,
        tie_word_embeddings=True,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.pad_token_id,
        **MODEL_SHAPE,
    )
    model = Qwen2ForCausalLM(config)
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    return model, as_served(model, tokenizer)


def as_served(model: Any, tokenizer: Any) -> Any:
    """``tokenizer`` as an engine loads it from the model's folder. With the model's config
    beside it, ``AutoTokenizer`` picks the model type's tokenizer class (Qwen2's splits digits
    apart, which the trained one does not), so the model must learn the ids that one makes."""
    from transformers import AutoTokenizer

    with tempfile.TemporaryDirectory(prefix="tiny-chat-") as folder:
        save(model, tokenizer, folder)
        return AutoTokenizer.from_pretrained(folder)


def _ids(
    tokenizer: Any, messages: list[dict[str, Any]], tools: list[Any], prompt: bool
) -> list[int]:
    ids = tokenizer.apply_chat_template(
        messages, tools=tools, tokenize=True, add_generation_prompt=prompt, return_dict=False
    )
    return list(ids)


def assistant_turns(
    tokenizer: Any, conversation: list[dict[str, Any]], tools: list[Any]
) -> list[tuple[list[int], list[int]]]:
    """Each assistant turn of ``conversation`` as ``(prompt ids, turn ids)``: the turn's ids
    end with the end-of-turn token, where greedy decoding must stop."""
    turns = []
    for end, message in enumerate(conversation, start=1):
        if message["role"] != "assistant":
            continue
        prompt = _ids(tokenizer, conversation[: end - 1], tools, prompt=True)
        whole = _ids(tokenizer, conversation[:end], tools, prompt=False)
        turn = whole[len(prompt) :]
        stop = turn.index(tokenizer.eos_token_id) + 1
        turns.append((prompt, turn[:stop]))
    return turns


def margin(model: Any, tokenizer: Any, conversations: list[Any], tools: list[Any]) -> float:
    """The smallest lead, in logprob, of the trained token over any other token, across every
    token of every assistant turn given the conversation before it (teacher-forced). Above 0,
    greedy decoding writes every turn exactly (each next token is the trained one); well above
    0, it does so on another engine too, whose arithmetic differs in the last bits."""
    import torch

    model.eval()
    smallest = float("inf")
    with torch.no_grad():
        for ids, labels in _batch(tokenizer, conversations, tools):
            logprobs = torch.log_softmax(model(input_ids=ids).logits[0, :-1].float(), dim=-1)
            targets = labels[0, 1:]
            for position in (targets != -100).nonzero().flatten().tolist():
                row = logprobs[position].clone()
                trained = row[targets[position]].item()
                row[targets[position]] = float("-inf")
                smallest = min(smallest, trained - row.max().item())
    return smallest


def reproduces(
    model: Any, tokenizer: Any, conversations: list[Any], tools: list[Any], *, lead: float = 0.0
) -> bool:
    """Whether greedy decoding writes every assistant turn of ``conversations`` exactly, each
    token ahead of the next best by more than ``lead``."""
    return margin(model, tokenizer, conversations, tools) > lead


def _batch(tokenizer: Any, conversations: list[Any], tools: list[Any]) -> list[Any]:
    """One (ids, labels) pair per conversation; labels keep only the assistant turns."""
    import torch

    pairs = []
    for conversation in conversations:
        ids = _ids(tokenizer, conversation, tools, prompt=False)
        labels = [-100] * len(ids)
        for prompt, turn in assistant_turns(tokenizer, conversation, tools):
            labels[len(prompt) : len(prompt) + len(turn)] = turn
        pairs.append((torch.tensor([ids]), torch.tensor([labels])))
    return pairs


def fine_tune(
    model: Any,
    tokenizer: Any,
    conversations: list[list[dict[str, Any]]],
    tools: list[Any],
    *,
    max_steps: int = 1500,
    check_every: int = 50,
    learning_rate: float = 3e-3,
    lead: float = 2.0,
    seed: int = 0,
) -> FineTuneResult:
    """Train on the assistant turns of ``conversations`` (every conversation each step) until
    greedy decoding reproduces all of them with every token ``lead`` ahead of the next best
    (checked every ``check_every`` steps), or ``max_steps`` is reached."""
    import torch

    started = time.monotonic()
    random.seed(seed)
    torch.manual_seed(seed)
    pairs = _batch(tokenizer, conversations, tools)
    optimizer = torch.optim.AdamW(model.parameters(), lr=learning_rate)
    loss = torch.tensor(0.0)
    for step in range(1, max_steps + 1):
        model.train()
        total = sum(model(input_ids=ids, labels=labels).loss for ids, labels in pairs)
        loss = total / len(pairs)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        if step % check_every == 0 and reproduces(
            model, tokenizer, conversations, tools, lead=lead
        ):
            lead_now = margin(model, tokenizer, conversations, tools)
            return FineTuneResult(
                step, float(loss.detach()), True, time.monotonic() - started, lead_now
            )
    done = reproduces(model, tokenizer, conversations, tools, lead=lead)
    lead_now = margin(model, tokenizer, conversations, tools)
    return FineTuneResult(
        max_steps, float(loss.detach()), done, time.monotonic() - started, lead_now
    )


def save(model: Any, tokenizer: Any, folder: str | Path) -> Path:
    """Write the model and tokenizer (chat template included) where vLLM can serve them."""
    path = Path(folder)
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


def make(spec: dict[str, Any], folder: str | Path) -> FineTuneResult:
    """Build, fine-tune and save the model of ``spec`` (``conversations``, ``tools``)."""
    conversations, tools = spec["conversations"], spec.get("tools") or []
    model, tokenizer = build(conversations, tools)
    result = fine_tune(model, tokenizer, conversations, tools)
    save(model, tokenizer, folder)
    (Path(folder) / "fine_tune.json").write_text(json.dumps(asdict(result)))
    return result


if __name__ == "__main__":
    made = make(json.loads(Path(sys.argv[1]).read_text()), sys.argv[2])
    print(json.dumps(asdict(made)))
    sys.exit(0 if made.reproduced else 1)
