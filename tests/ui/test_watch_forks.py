"""Forking a watched session from the Sessions tab, in a real browser: from the snapshot the
server kept at the step where there is one (an unseeded chess game, a second Atari episode: the
fork then plays on exactly as the original did), by replay where there is none (an episode
longer than the steps the watch keeps replies of), from the session's previous episode when it
already reset, and refused, with the reason, where a replay would not be exact."""

from __future__ import annotations

import random
import time
from typing import Any

import pytest
import ui_pages as pages
from atari_env import AtariAction, AtariEnv
from atari_env.models import AtariObservation, AtariState
from atari_env.server.environment import AtariEnvironment
from chess_env import ChessAction, ChessEnv
from chess_env.models import ChessObservation, ChessState
from chess_env.server.environment import ChessEnvironment
from playwright.sync_api import expect
from ui_envs import (
    AllFieldsAction,
    AllFieldsEnvironment,
    AllFieldsObservation,
    TypedEchoAction,
    TypedEchoEnvironment,
    TypedEchoObservation,
)

from openenv_hub import Environment, GenericEnvClient, create_app
from openenv_hub.server.watch import MAX_WATCHED_STEPS, WATCH_SETTING, SessionWatch

pytestmark = pytest.mark.browser


@pytest.fixture(autouse=True)
def local_server(monkeypatch: pytest.MonkeyPatch) -> None:
    """Watching is on: a server bound to 127.0.0.1, not on a Space."""
    monkeypatch.delenv(WATCH_SETTING, raising=False)
    monkeypatch.delenv("SPACE_ID", raising=False)


def client_session(served: Any, kind: str = "ws") -> str:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        found = [s.id for s in served.pool.sessions() if s.kind == kind]
        if found:
            return found[0]
        time.sleep(0.02)
    raise AssertionError("the client's session did not open")


def tab_reply(served: Any, page: Any) -> dict[str, Any]:
    """The latest reply the page's own session got, as the server's watch kept it."""
    (watch,) = [o for o in served.pool.observers if isinstance(o, SessionWatch)]
    shown = pages.session_id(page)  # the start of the tab's session id
    (mine,) = [w for key, w in watch.sessions.items() if key.startswith(shown)]
    payload: dict[str, Any] = mine.recent[-1].payload
    return payload


def sessions_viewed(served: Any, page: Any) -> Any:
    """Open the Sessions tab and wait until the server counts its viewer: it then keeps a
    snapshot after every step of a client's session."""
    pages.open_sessions(page, served.web_url)
    (watch,) = [o for o in served.pool.observers if isinstance(o, SessionWatch)]
    deadline = time.monotonic() + 30
    while not watch.wants_snapshots:
        assert time.monotonic() < deadline, "the Sessions tab's stream did not open"
        time.sleep(0.05)
    return page


def watch_until(page: Any, session_id: str, text: str) -> None:
    pages.watch_session(page, session_id)
    expect(page.locator("#watch-status")).to_contain_text(text, timeout=30_000)


def test_an_unseeded_chess_game_forks_from_its_snapshot_and_plays_on_as_the_original(
    serve: Any, new_page: Any
) -> None:
    served = serve(
        create_app(ChessEnvironment, ChessAction, ChessObservation, state_cls=ChessState, web=True)
    )
    page = sessions_viewed(served, new_page())
    chooser = random.Random(7)
    with ChessEnv(base_url=served.base_url).sync() as env:
        result = env.reset(opponent="random")  # no seed: the opponent's replies are random
        moves, seen = [], [result.observation]
        for _ in range(6):
            moves.append(chooser.choice(result.observation.legal_moves))
            result = env.step(ChessAction(move=moves[-1]))
            seen.append(result.observation)
        watch_until(page, client_session(served), "episode 1 · 6 steps")
        pages.fork_watched(page, 3)
        pages.expect_banner(page, "Forked at step 3 from the server's snapshot")
        expect(page.locator("#observation")).to_contain_text(seen[3].fen)
        for step in (4, 5, 6):  # the same moves get the same random replies: the same game
            pages.text_input(page, "field-move").fill(moves[step - 1])
            pages.step(page, step)
            expect(page.locator("#observation")).to_contain_text(seen[step].fen)
            assert tab_reply(served, page)["observation"]["fen"] == seen[step].fen


def test_a_second_atari_episode_forks_from_its_snapshot_and_plays_on_as_the_original(
    serve: Any, new_page: Any
) -> None:
    served = serve(
        create_app(AtariEnvironment, AtariAction, AtariObservation, state_cls=AtariState, web=True)
    )
    page = sessions_viewed(served, new_page())
    with AtariEnv(base_url=served.base_url).sync() as env:  # sticky actions, unseeded
        env.reset(game="pong", repeat_action_probability=0.5)
        for n in range(4):
            env.step(AtariAction(action=n % 4))
        env.reset()  # the second episode: its frame counters do not start at 0
        actions = [(3 * n) % 6 for n in range(8)]
        seen = [env.step(AtariAction(action=action)) for action in actions]
        watch_until(page, client_session(served), "episode 2 · 8 steps")
        pages.fork_watched(page, 4)
        pages.expect_banner(page, "Forked at step 4 from the server's snapshot")
        for step in range(5, 9):
            pages.text_input(page, "field-action").fill(str(actions[step - 1]))
            pages.step(page, step)
            reply, original = tab_reply(served, page), seen[step - 1]
            assert (
                reply["observation"]["frame"]
                == original.observation.model_dump(mode="json")["frame"]
            )  # the very screen
            assert reply["reward"] == original.reward
            expected = original.observation.episode_frame_number
            assert reply["observation"]["episode_frame_number"] == expected


def test_a_step_of_an_episode_longer_than_the_watch_window_forks_by_replay(
    serve: Any, new_page: Any
) -> None:
    served = serve(
        create_app(TypedEchoEnvironment, TypedEchoAction, TypedEchoObservation, web=True)
    )
    total = MAX_WATCHED_STEPS + 30
    with GenericEnvClient(base_url=served.base_url).sync() as env:
        env.reset()
        for n in range(1, total + 1):
            env.step({"message": f"m{n}"})
        page = pages.open_sessions(new_page(), served.web_url)
        watch_until(page, client_session(served), f"episode 1 · {total} steps")
        pages.fork_watched(page, total - 10)
        pages.expect_banner(
            page,
            f"Forked at step {total - 10} by replay",
            "the replies of steps 1 to 30 are no longer kept and were not compared",
        )
        expect(page.locator("#observation")).to_contain_text(f'"echoed_message": "m{total - 10}"')
        pages.fork_watched(page, 5)  # long out of the window: its action is still kept
        pages.expect_banner(page, "Forked at step 5 by replay")
        expect(page.locator("#observation")).to_contain_text('"echoed_message": "m5"')


def test_a_session_that_reset_right_after_its_end_offers_its_previous_episode(
    serve: Any, new_page: Any
) -> None:
    served = serve(
        create_app(AllFieldsEnvironment, AllFieldsAction, AllFieldsObservation, web=True)
    )
    with GenericEnvClient(base_url=served.base_url).sync() as env:
        env.reset()
        env.step({"text": "one", "count": 1})
        assert env.step({"text": "two", "count": 2, "flag": True}).done
        env.reset()  # straight after the end, as a training loop does
        page = pages.open_sessions(new_page(), served.web_url)
        watch_until(page, client_session(served), "episode 2 · 0 steps")
        status = page.locator("#watch-status")
        expect(status).to_contain_text("previous episode 1 (steps 0 to 2, done)")
        pages.fork_watched(page, 1)
        expect(page.locator("#watch-fork-status")).to_contain_text(
            "Step 1 is not in the current episode, episode 2 (steps 0 to 0, under way). The "
            "previous episode, episode 1 (steps 0 to 2, done), has it: choose "
            '"Previous episode".'
        )
        pages.fork_watched(page, 2, "Previous episode")
        pages.expect_banner(
            page,
            "Forked at step 2 by replay",
            "The episode ended at that step, so there is nothing to play on: press Reset",
        )
        expect(page.locator("#banner")).not_to_contain_text("plays on")
        expect(page.locator("#observation")).to_contain_text('"summary": "fast/red"')


class ChessWithoutSnapshots(ChessEnvironment):
    """Chess whose server keeps no snapshots: a fork can only replay."""

    snapshot = Environment.snapshot  # type: ignore[assignment]
    restore = Environment.restore  # type: ignore[assignment]


def test_a_replay_fork_of_an_unseeded_game_is_refused_with_the_reason(
    serve: Any, new_page: Any
) -> None:
    app = create_app(
        ChessWithoutSnapshots, ChessAction, ChessObservation, state_cls=ChessState, web=True
    )
    served = serve(app)
    page = sessions_viewed(served, new_page())
    with ChessEnv(base_url=served.base_url).sync() as env:
        result = env.reset(opponent="random")
        for _ in range(3):
            result = env.step(ChessAction(move=result.observation.legal_moves[0]))
        watch_until(page, client_session(served), "episode 1 · 3 steps")
        pages.fork_watched(page, 2)
        pages.expect_banner(
            page,
            "Cannot fork by replay",
            "no seed was given at reset, and the random opponent's moves are drawn at random",
            "This server keeps no snapshot of that step",
        )
    assert not [s for s in served.pool.sessions() if s.kind == "ui" and s.step_count]
