"""``snapshot()`` / ``restore()`` of the reference environments: a game restored to a snapshot
plays on exactly as it did after the snapshot was taken, random draws included, however it was
played meanwhile, and as often as it is restored."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from atari_env import AtariAction
from atari_env.server.environment import AtariEnvironment
from chess_env import ChessAction
from chess_env.server.environment import ChessEnvironment
from finance_env import TradingAction
from finance_env.server.environment import TradingEnvironment

from openenv_hub import Environment
from openenv_hub.gymnasium import GymnasiumEnvironment
from openenv_hub.protocol import observation_payload
from openenv_hub.server.snapshots import approximate_size, can_snapshot

BLACKJACK = GymnasiumEnvironment.factory("Blackjack-v1")


def shown(observation: Any) -> str:
    """An observation as the wire carries it, for comparing whole."""
    return json.dumps(observation.model_dump(mode="json"), sort_keys=True, default=str)


def chess_moves(env: Any, observation: Any, n: int) -> Any:
    return ChessAction(move=observation.legal_moves[n % len(observation.legal_moves)])


def blackjack_moves(env: Any, observation: Any, n: int) -> Any:
    return BLACKJACK.action_cls(action=1)  # hit: the cards come from the generator


def atari_moves(env: Any, observation: Any, n: int) -> Any:
    return AtariAction(action=n % 4)


def trading_moves(env: Any, observation: Any, n: int) -> Any:
    return TradingAction(actions=[0.5 if n % 2 else -0.3] * len(observation.tickers))


Make = Callable[[], Environment[Any, Any, Any]]
CASES: list[tuple[str, Make, dict[str, Any], Any, int]] = [
    # No seed: the opponent's replies come from an unseeded generator.
    ("chess", ChessEnvironment, {}, chess_moves, 3),
    # A snapshot of the deal: every card drawn after it comes from the restored generator.
    ("blackjack", BLACKJACK, {}, blackjack_moves, 0),
    # Sticky actions drawn from an unseeded generator, RAM observations (quick to compare).
    ("atari", lambda: AtariEnvironment(obs_type="ram"), {"game": "pong"}, atari_moves, 3),
    ("trading", TradingEnvironment, {"max_days": 12}, trading_moves, 3),
]


@pytest.mark.parametrize(
    ("make", "reset", "move", "at"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_a_restored_game_plays_on_as_it_did_after_the_snapshot(
    make: Make, reset: dict[str, Any], move: Any, at: int
) -> None:
    env = make()
    try:
        assert can_snapshot(env)
        observation = env.reset(**reset)
        for n in range(at):
            observation = env.step(move(env, observation, n))
        taken, before = env.snapshot(), observation
        after = []
        for n in range(at, at + 3):
            observation = env.step(move(env, observation, n))
            after.append(shown(observation))
            if observation.done:
                break
        state_after = env.state.model_dump()
        env.reset(**reset)  # another episode meanwhile: the snapshot stands apart from it
        for _ in range(2):  # as often as it is restored
            env.restore(taken)
            assert env.state.step_count == at
            observation = before
            again = []
            for n in range(at, at + len(after)):
                observation = env.step(move(env, observation, n))
                again.append(shown(observation))
            assert again == after
            assert env.state.model_dump() == state_after
    finally:
        env.close()


def test_an_environment_without_snapshots_says_so() -> None:
    class Plain(Environment[Any, Any, Any]):
        def reset(self, seed: int | None = None, episode_id: str | None = None, **kw: Any) -> Any:
            return None

        def step(self, action: Any, timeout_s: float | None = None, **kw: Any) -> Any:
            return None

        @property
        def state(self) -> Any:
            return None

    assert not can_snapshot(Plain())
    with pytest.raises(NotImplementedError, match="Plain does not implement snapshot"):
        Plain().snapshot()


def test_an_atari_reply_is_counted_at_about_its_size() -> None:
    env = AtariEnvironment()
    try:
        env.reset(seed=1)
        payload = observation_payload(env.step(AtariAction(action=0)))
        state = env.snapshot()
    finally:
        env.close()
    sent = len(json.dumps(payload))
    assert sent > 2_000  # a PNG frame
    assert sent * 0.8 <= approximate_size(payload) <= sent * 3
    assert approximate_size(state) > 0
