"""A tiny chat model made on the spot, for trying the training examples on a CPU with no
download: a byte-level BPE tokenizer trained on a few sample conversations and wearing the
Qwen2.5 chat template (so TRL parses its tool calls), a two-layer Qwen2 with random weights,
and :func:`warm_up`, a short supervised fine-tuning that teaches it the tool-call format.

It learns nothing useful; it is there so ``--tiny`` runs of the examples exercise the real
training loop end to end in about a minute.
"""

from __future__ import annotations

import random
from typing import Any

import torch
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import PreTrainedTokenizerFast, Qwen2Config, Qwen2ForCausalLM
from trl.chat_template_utils import qwen2_5_chat_template

SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]


def tool_call(name: str, **arguments: Any) -> dict[str, Any]:
    """An assistant message calling one tool."""
    return {
        "role": "assistant",
        "content": "",
        "tool_calls": [{"type": "function", "function": {"name": name, "arguments": arguments}}],
    }


def build_tokenizer(corpus: list[str], vocab_size: int = 800) -> PreTrainedTokenizerFast:
    """A byte-level BPE tokenizer trained on ``corpus``, with the Qwen2.5 chat template."""
    core = Tokenizer(models.BPE())
    core.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    core.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=SPECIAL,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    core.train_from_iterator(corpus, trainer=trainer)
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=core,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        padding_side="left",
    )
    tokenizer.add_tokens(["<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>"])
    tokenizer.chat_template = qwen2_5_chat_template
    return tokenizer


def build_model(tokenizer: PreTrainedTokenizerFast, seed: int = 0) -> Qwen2ForCausalLM:
    """A two-layer Qwen2 with random weights, sized for ``tokenizer``."""
    torch.manual_seed(seed)
    config = Qwen2Config(
        vocab_size=len(tokenizer),
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=2048,
        tie_word_embeddings=True,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.pad_token_id,
    )
    model = Qwen2ForCausalLM(config)
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    return model


def build(
    conversations: list[list[dict[str, Any]]], tools: list[Any], seed: int = 0
) -> tuple[Qwen2ForCausalLM, PreTrainedTokenizerFast]:
    """A tokenizer trained on ``conversations`` rendered with ``tools``, and a fresh model.

    Also limits torch to one thread: a model this small computes fastest on one, and several
    threads contending with other processes for a few cores slow it down many times over.
    """
    torch.set_num_threads(1)
    bootstrap = build_tokenizer([])  # renders the template before the real vocabulary exists
    corpus = [bootstrap.apply_chat_template(c, tools=tools, tokenize=False) for c in conversations]
    tokenizer = build_tokenizer(corpus)
    return build_model(tokenizer, seed), tokenizer


def warm_up(
    model: Qwen2ForCausalLM,
    tokenizer: PreTrainedTokenizerFast,
    conversations: list[list[dict[str, Any]]],
    tools: list[Any],
    *,
    steps: int = 150,
    learning_rate: float = 3e-3,
    seed: int = 0,
) -> float:
    """Fine-tune on the assistant turns of ``conversations``; returns the last loss."""
    examples = [_example(tokenizer, c, tools) for c in conversations]
    optimizer = torch.optim.AdamW(model.parameters(), lr=learning_rate)
    rng = random.Random(seed)
    model.train()
    loss = torch.tensor(0.0)
    for _ in range(steps):
        ids, labels = rng.choice(examples)
        loss = model(input_ids=ids[None], labels=labels[None]).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    return float(loss.detach())


def _example(
    tokenizer: PreTrainedTokenizerFast, conversation: list[dict[str, Any]], tools: list[Any]
) -> tuple[torch.Tensor, torch.Tensor]:
    """Token ids, and labels that keep only what the assistant says."""
    ids: list[int] = tokenizer.apply_chat_template(
        conversation, tools=tools, tokenize=True, return_dict=False
    )
    labels = [-100] * len(ids)
    for end, message in enumerate(conversation, start=1):
        if message["role"] != "assistant":
            continue
        before = tokenizer.apply_chat_template(
            conversation[: end - 1], tools=tools, tokenize=True, return_dict=False,
            add_generation_prompt=True,
        )  # fmt: skip
        upto = tokenizer.apply_chat_template(
            conversation[:end], tools=tools, tokenize=True, return_dict=False
        )
        labels[len(before) : len(upto)] = ids[len(before) : len(upto)]
    return torch.tensor(ids), torch.tensor(labels)
