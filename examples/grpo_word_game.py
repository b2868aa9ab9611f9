"""Train a model with TRL's GRPO to play the word game (a Wordle-like typed environment).

The model calls the ``guess`` tool (made from the game's ``Guess`` action) until it finds the
word or runs out of tries. The game's rubric gives 0.1 per well-formed guess and a delayed 1.0
for finding the word; TRL logs each game's return as ``rewards/WordGame/mean``. Each prompt's
``seed`` column picks the secret word, so the generations of a group play the same game.

    python examples/word_game.py --port 8011 &
    python examples/grpo_word_game.py --env-url http://127.0.0.1:8011 --model Qwen/Qwen3-0.6B

``--tiny`` swaps the model for a tiny one made on the spot (no download; see tiny_model.py).
"""

from __future__ import annotations

import argparse
import json
import os
import random
from pathlib import Path
from typing import Any

PROMPT = (
    "Find the secret five-letter word. Call the guess tool with one word at a time; each answer "
    "marks every letter G (right place), Y (elsewhere in the word) or X (absent)."
)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--env-url", default="http://127.0.0.1:8011")
    parser.add_argument("--model", default="Qwen/Qwen3-0.6B")
    parser.add_argument("--tiny", action="store_true", help="a tiny local model, no download")
    parser.add_argument("--max-steps", type=int, default=200)
    parser.add_argument("--num-generations", type=int, default=4)
    parser.add_argument("--max-completion-length", type=int, default=1024)
    parser.add_argument("--output-dir", default="grpo-word-game")
    return parser.parse_args(argv)


def tiny_model(environment: Any) -> tuple[Any, Any]:
    """A tiny model that has seen a few games played with random guesses (see tiny_model.py)."""
    from tiny_model import build, tool_call, warm_up
    from word_game import WORDS, score_guess

    from openenv_hub.trl import tool_schemas

    tools = tool_schemas(environment)
    first = environment()
    intro = first.reset(seed=0)  # what TRL appends to the prompt
    first._close()
    rng = random.Random(0)
    conversations = []
    for _ in range(24):
        secret = rng.choice(WORDS)
        game: list[dict[str, Any]] = [{"role": "user", "content": PROMPT + intro}]
        for left, word in zip((5, 4), rng.sample(WORDS, 2), strict=True):
            marks = score_guess(word, secret)
            answer = {"feedback": marks, "guesses_left": left, "message": f"{word}: {marks}"}
            game += [
                tool_call("guess", word=word),
                {"role": "tool", "name": "guess", "content": json.dumps(answer)},
            ]
        conversations.append([*game, {"role": "assistant", "content": "I give up."}])
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

    from openenv_hub.trl import environment_factory

    WordGame = environment_factory(args.env_url)
    model, tokenizer = args.model, None
    if args.tiny:
        print(f"{script}: making the tiny model (a few seconds of fine-tuning)", flush=True)
        model, tokenizer = tiny_model(WordGame)
    seeds = list(range(64))  # one game per prompt; TRL plays it num_generations times
    dataset = Dataset.from_dict(
        {"prompt": [[{"role": "user", "content": PROMPT}]] * len(seeds), "seed": seeds}
    )
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
        environment_factory=WordGame,
        args=config,
    )
    trainer.train()
    save_log(trainer, Path(args.output_dir), title="word game")


if __name__ == "__main__":
    main()
