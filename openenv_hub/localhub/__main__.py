"""Run LocalHub by hand: ``python -m openenv_hub.localhub --port 8765 --data DIR``.

It prints its endpoint, its users' tokens (new random ones each start, or the well-known demo
tokens with ``--demo-tokens``) and its admin token, which the control routes under
``/_localhub`` need: a new random one each start, printed once, or the value of
``$OPENENV_LOCALHUB_ADMIN_TOKEN`` (then not printed), never a command-line option that ``ps``
would show.
"""

from __future__ import annotations

import argparse
import signal
import threading
from collections.abc import Sequence

from openenv_hub.support.settings import LOCALHUB_ADMIN_TOKEN_VARIABLE, base_image, named_variable
from openenv_hub.support.settings import build_args as build_args_setting

from .app import DEFAULT_MAX_UPLOAD_MB
from .auth import DEMO_TOKENS
from .server import LocalHub

ADMIN_TOKEN_VARIABLE = LOCALHUB_ADMIN_TOKEN_VARIABLE


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """Command-line options."""
    parser = argparse.ArgumentParser(
        prog="python -m openenv_hub.localhub",
        description="Serve a local Hugging Face Hub stand-in (API + git smart-HTTP).",
    )
    parser.add_argument("--host", default="127.0.0.1", help="interface to bind")
    parser.add_argument("--port", type=int, default=8765, help="port (0 picks a free one)")
    parser.add_argument(
        "--data", default=None, help="data directory (default: a temporary one, deleted on exit)"
    )
    parser.add_argument(
        "--demo-tokens",
        action="store_true",
        help="accept the well-known demo tokens (hf_alice_write, hf_bob_write, hf_alice_read) "
        "instead of new random ones; anything on this machine can use them",
    )
    parser.add_argument(
        "--max-upload-mb",
        type=float,
        default=DEFAULT_MAX_UPLOAD_MB,
        help="the largest upload (commit, git push, request to a Space's app), in MB; "
        "413 beyond it (default: %(default)g)",
    )
    parser.add_argument(
        "--no-spaces",
        action="store_true",
        help="do not build and run Docker Spaces (they run when a Docker engine answers)",
    )
    parser.add_argument(
        "--jobs",
        action="store_true",
        help="run Jobs (HfApi.run_job) as containers on the Docker engine, with their exposed "
        "ports served behind the token check",
    )
    parser.add_argument(
        "--space-base-image",
        default=base_image(),
        help="BASE_IMAGE build argument of Space images (default: $OPENENV_BASE_IMAGE)",
    )
    parser.add_argument(
        "--space-wheelhouse",
        default=named_variable("OPENENV_SPACE_WHEELHOUSE"),
        metavar="DIR",
        help="a folder of wheels, the packages Space builds may install: builds have no "
        "network (default: $OPENENV_SPACE_WHEELHOUSE)",
    )
    parser.add_argument(
        "--space-build-arg",
        action="append",
        metavar="KEY=VALUE",
        default=None,
        help="another build argument of Space images, repeatable "
        "(default: $OPENENV_BUILD_ARGS, space-separated)",
    )
    return parser.parse_args(argv)


def build_args(args: argparse.Namespace) -> dict[str, str]:
    """``BASE_IMAGE`` and the other build arguments of Space images."""
    pairs = args.space_build_arg
    if pairs is None:
        pairs = build_args_setting()
    found: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise SystemExit(f"--space-build-arg {pair!r}: use KEY=VALUE")
        found[key] = value
    if args.space_base_image:
        found["BASE_IMAGE"] = args.space_base_image
    return found


def banner(hub: LocalHub, *, admin_token_from_environment: bool = False) -> str:
    """What to print once the server is up: endpoint, tokens, environment."""
    lines = [f"LocalHub serving on {hub.endpoint}", f"data directory: {hub.data_dir}", "tokens:"]
    for token, user in hub.tokens:
        orgs = f", orgs: {', '.join(user.orgs)}" if user.orgs else ""
        lines.append(f"  {token:<16} {user.name} ({user.role}{orgs})")
    admin = f"${ADMIN_TOKEN_VARIABLE}" if admin_token_from_environment else hub.admin_token
    lines.append(f"admin token (for the control routes under /_localhub): {admin}")
    default_token = hub.token_for(next(iter(hub.tokens))[1].name)
    lines += [
        "use it with:",
        f"  export HF_ENDPOINT={hub.endpoint}",
        f"  export HF_TOKEN={default_token}",
        "  export HF_HUB_DISABLE_TELEMETRY=1",
        "press Ctrl+C to stop",
    ]
    runtime = hub.space_runtime
    spaces = "built and run in Docker" if runtime["enabled"] else f"not run: {runtime['reason']}"
    lines.insert(2, f"Docker Spaces: {spaces}")
    jobs = "run in Docker" if hub.runs_jobs else "not run (start with --jobs to run them)"
    lines.insert(3, f"Jobs: {jobs}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    """Start LocalHub and serve until interrupted."""
    args = parse_args(argv)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    admin_token = named_variable(ADMIN_TOKEN_VARIABLE)
    with LocalHub(
        data_dir=args.data,
        tokens=DEMO_TOKENS if args.demo_tokens else None,
        host=args.host,
        port=args.port,
        admin_token=admin_token,
        max_upload_mb=args.max_upload_mb,
        run_spaces=not args.no_spaces,
        space_build_args=build_args(args),
        space_wheelhouse=args.space_wheelhouse,
        run_jobs=args.jobs,
    ) as hub:
        print(banner(hub, admin_token_from_environment=admin_token is not None), flush=True)
        try:
            while not stop.wait(0.5):
                pass
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    main()
