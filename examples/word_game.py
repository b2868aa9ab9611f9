"""A Wordle-like game as a typed environment, rewarded by a rubric with a delayed reward.

The agent guesses a secret five-letter word in at most six tries. After each guess the
environment answers with one letter per position: ``G`` (right letter, right place), ``Y`` (in
the word, elsewhere) or ``X`` (not in the word).

Rewards come from the class's ``rubric``: 0.1 for each well-formed guess, and 1.0 when the word
is found, a delayed reward credited back to the guesses that led to it (``Discounted(0.5)``).

Serve it with ``python examples/word_game.py --port 8011``.
"""

from __future__ import annotations

import argparse
import random
from typing import Any

from pydantic import Field

from openenv_hub import Action, EnvClient, Environment, Observation, State, create_app, serve_app
from openenv_hub.rubrics import Discounted, WeightedSum, rubric, trajectory_rubric

WORDS = ["crane", "slate", "pious", "mango", "fjord", "glyph", "brick", "stove", "plumb", "dwarf"]
MAX_GUESSES = 6


class Guess(Action):
    """Guess the secret word."""

    word: str = Field(description="A five-letter English word, in lower case")


class Feedback(Observation):
    feedback: str = Field("", description="G, Y or X for each letter of the guess")
    guesses_left: int = MAX_GUESSES
    message: str = ""


class GameState(State):
    guesses: list[str] = Field(default_factory=list)


@rubric
def well_formed(observation: Feedback) -> float:
    """1 for a guess of five letters, 0 for anything else."""
    return 0.0 if observation.metadata.get("invalid") else 1.0


@trajectory_rubric
def solved(observation: Feedback) -> float:
    """1 when the episode ended with the word found."""
    return 1.0 if observation.metadata.get("solved") else 0.0


def score_guess(guess: str, secret: str) -> str:
    """``G``/``Y``/``X`` per letter, counting repeated letters as Wordle does."""
    marks = ["X"] * len(guess)
    unmatched = [s for g, s in zip(guess, secret, strict=True) if g != s]
    for i, (g, s) in enumerate(zip(guess, secret, strict=True)):
        if g == s:
            marks[i] = "G"
        elif g in unmatched:
            marks[i] = "Y"
            unmatched.remove(g)
    return "".join(marks)


class WordGame(Environment[Guess, Feedback, GameState]):
    """Guess the five-letter word in six tries."""

    rubric = WeightedSum([well_formed, solved], weights=[0.1, 1.0])
    reward_attribution = Discounted(gamma=0.5)

    def __init__(self) -> None:
        self._state = GameState()
        self._secret = WORDS[0]

    def reset(
        self, seed: int | None = None, episode_id: str | None = None, **kwargs: Any
    ) -> Feedback:
        self._secret = random.Random(seed).choice(WORDS)
        self._state = GameState(episode_id=episode_id)
        return Feedback(message="Guess the five-letter word. You have 6 tries.")

    def step(self, action: Guess, timeout_s: float | None = None, **kwargs: Any) -> Feedback:
        word = action.word.strip().lower()
        self._state.step_count += 1
        self._state.guesses.append(word)
        left = MAX_GUESSES - len(self._state.guesses)
        if len(word) != 5 or not word.isalpha():
            return Feedback(
                guesses_left=left,
                done=left == 0,
                message=f"'{action.word}' is not a five-letter word.",
                metadata={"invalid": True},
            )
        feedback = score_guess(word, self._secret)
        won = feedback == "GGGGG"
        return Feedback(
            feedback=feedback,
            guesses_left=left,
            done=won or left == 0,
            message="You found it!" if won else f"{word}: {feedback}",
            metadata={"solved": won},
        )

    @property
    def state(self) -> GameState:
        return self._state


class WordGameEnv(EnvClient[Guess, Feedback, GameState]):
    """The typed client of the word game."""

    action_type, observation_type, state_type = Guess, Feedback, GameState


app = create_app(WordGame, Guess, Feedback, state_cls=GameState, env_name="word_game")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Serve the word game.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8011)
    args = parser.parse_args(argv)
    serve_app(app, host=args.host, port=args.port)


if __name__ == "__main__":
    main()
