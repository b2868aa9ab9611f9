"""A minimal typed (non-MCP) environment on openenv-hub, the twin of tests/peer/typed_server.py.

python typed.py --port 8201             # calls on a thread per session (the default)
python typed.py --port 8201 --inline    # calls on the event loop (run_on_event_loop=True)
python typed.py --port 8201 --profile stats.prof   # cProfile of the event loop's thread
python typed.py --port 8201 --workers 2   # the address served by 2 processes
"""

from __future__ import annotations

import argparse
import cProfile
import signal
import uuid
from typing import Any

from openenv_hub import Action, Environment, Observation, State, create_app

try:
    from openenv_hub import serve_app
except ImportError:  # a checkout from before the name (core.py --before)
    from openenv_hub import run as serve_app


class MessageAction(Action):
    message: str


class EchoedObservation(Observation):
    echoed_message: str = ""
    message_length: int = 0


class TypedEcho(Environment[MessageAction, EchoedObservation, State]):
    def __init__(self) -> None:
        self._state = State(episode_id=str(uuid.uuid4()))

    def reset(
        self, seed: int | None = None, episode_id: str | None = None, **kwargs: Any
    ) -> EchoedObservation:
        self._state = State(episode_id=episode_id or str(uuid.uuid4()))
        return EchoedObservation(echoed_message="Typed Echo environment ready!", reward=0.0)

    def step(
        self, action: MessageAction, timeout_s: float | None = None, **kwargs: Any
    ) -> EchoedObservation:
        self._state.step_count += 1
        n = len(action.message)
        return EchoedObservation(
            echoed_message=action.message,
            message_length=n,
            reward=n * 0.1,
            metadata={"original_message": action.message, "step": self._state.step_count},
        )

    @property
    def state(self) -> State:
        return self._state


app = create_app(TypedEcho, MessageAction, EchoedObservation, env_name="typed_echo")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=8201)
    parser.add_argument("--inline", action="store_true", help="run calls on the event loop")
    parser.add_argument("--profile", metavar="FILE", help="write a cProfile of the loop thread")
    parser.add_argument("--workers", type=int, default=1, help="processes serving the address")
    parser.add_argument("--idle-timeout", type=float, help="close sessions idle this long (s)")
    parser.add_argument("--ping-timeout", type=float, help="a pong's wait before a close (s)")
    args = parser.parse_args()
    served = app
    if args.inline or args.idle_timeout:
        idle = {"session_idle_timeout_s": args.idle_timeout} if args.idle_timeout else {}
        served = create_app(
            TypedEcho,
            MessageAction,
            EchoedObservation,
            env_name="typed_echo",
            run_on_event_loop=args.inline or None,
            **idle,
        )
    if args.profile:
        profile_on_signals(args.profile)
    workers: dict[str, Any] = {"workers": args.workers} if args.workers > 1 else {}
    if args.ping_timeout:
        workers["ws_ping_timeout_s"] = args.ping_timeout
    serve_app(served, port=args.port, log_level="warning", **workers)


def profile_on_signals(path: str) -> None:
    """Profile the main (event loop) thread from SIGUSR1 until SIGUSR2, then write the stats."""
    profiler = cProfile.Profile()

    def start(*_: Any) -> None:
        profiler.enable()

    def stop(*_: Any) -> None:
        profiler.disable()
        profiler.dump_stats(path)

    signal.signal(signal.SIGUSR1, start)
    signal.signal(signal.SIGUSR2, stop)


if __name__ == "__main__":
    main()
