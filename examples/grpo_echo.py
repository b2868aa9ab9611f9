"""Train a model with TRL's GRPO on the echo environment, rewarded by its rubric.

The model calls the environment's MCP tools (``echo_message``, ``echo_with_length``); each call
is scored by the echo rubric (half for a call that succeeds, half for a long message) and TRL
logs the episode's return as ``rewards/EchoEnv/mean``.

    python -m echo_env.server.app --port 8000 &
    python examples/grpo_echo.py --env-url http://127.0.0.1:8000 --model Qwen/Qwen3-0.6B

``--tiny`` swaps the model for a tiny one made on the spot (no download; see tiny_model.py).
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

PROMPT = "Use the echo_message tool to echo a long, friendly message."


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--env-url", default="http://127.0.0.1:8000")
    parser.add_argument("--model", default="Qwen/Qwen3-0.6B")
    parser.add_argument("--tiny", action="store_true", help="a tiny local model, no download")
    parser.add_argument("--max-steps", type=int, default=100)
    parser.add_argument("--num-generations", type=int, default=4)
    parser.add_argument("--max-completion-length", type=int, default=256)
    parser.add_argument("--output-dir", default="grpo-echo")
    return parser.parse_args(argv)


def tiny_model(tools: list[Any]) -> tuple[Any, Any]:
    """A tiny model that has seen a few echo tool calls (see tiny_model.py)."""
    from tiny_model import build, tool_call, warm_up

    words = ["hello", "world", "friendly", "message", "echo", "long", "very", "nice", "day"]
    conversations = []
    for n in range(24):
        message = " ".join(words[(n + i) % len(words)] for i in range(1 + n % 6))
        conversations.append(
            [
                {"role": "user", "content": PROMPT},
                tool_call("echo_message", message=message),
                {"role": "tool", "name": "echo_message", "content": message},
                {"role": "assistant", "content": "Done."},
            ]
        )
    model, tokenizer = build(conversations, tools)
    warm_up(model, tokenizer, conversations, tools)
    return model, tokenizer


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    script = Path(__file__).name
    # the imports and the model take several seconds before the trainer prints anything
    print(f"{script}: loading TRL and torch (several seconds)", flush=True)
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    from datasets import Dataset
    from training_log import device_options, save_log
    from trl import GRPOConfig, GRPOTrainer

    from openenv_hub.trl import environment_factory, tool_schemas

    EchoEnv = environment_factory(args.env_url)
    model, tokenizer = args.model, None
    if args.tiny:
        print(f"{script}: making the tiny model (a few seconds of fine-tuning)", flush=True)
        model, tokenizer = tiny_model(tool_schemas(EchoEnv))
    dataset = Dataset.from_dict({"prompt": [[{"role": "user", "content": PROMPT}]] * 64})
    device, where = device_options(cpu=args.tiny)
    config = GRPOConfig(
        output_dir=args.output_dir,
        max_steps=args.max_steps,
        per_device_train_batch_size=args.num_generations,
        num_generations=args.num_generations,
        max_completion_length=args.max_completion_length,
        logging_steps=1,
        report_to="none",
        save_strategy="no",
        seed=0,
        **device,
    )
    print(f"{script}: {where}; starting the trainer", flush=True)
    trainer = GRPOTrainer(
        model=model,
        processing_class=tokenizer,
        train_dataset=dataset,
        environment_factory=EchoEnv,
        args=config,
    )
    trainer.train()
    save_log(trainer, Path(args.output_dir), title="echo")


if __name__ == "__main__":
    main()
