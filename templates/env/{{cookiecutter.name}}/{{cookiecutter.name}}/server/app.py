"""The {{ cookiecutter.title }} server: ``uvicorn {{ cookiecutter.name }}.server.app:app`` or ``{{ cookiecutter.dist_name }}-server``."""

from __future__ import annotations

import argparse
import os

from openenv_hub import create_app, run

from {{ cookiecutter.name }}.models import {{ cookiecutter.class_prefix }}Action, {{ cookiecutter.class_prefix }}Observation
from {{ cookiecutter.name }}.server.environment import {{ cookiecutter.class_prefix }}Environment

app = create_app({{ cookiecutter.class_prefix }}Environment, {{ cookiecutter.class_prefix }}Action, {{ cookiecutter.class_prefix }}Observation, env_name="{{ cookiecutter.name }}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Serve the {{ cookiecutter.title }} environment.")
    parser.add_argument("--host", default=os.environ.get("HOST", "127.0.0.1"))
    parser.add_argument("--port", type=int, default=int(os.environ.get("PORT", "{{ cookiecutter.port }}")))
    parser.add_argument("--reload", action="store_true", help="restart when the code changes")
    args = parser.parse_args(argv)
    run("{{ cookiecutter.name }}.server.app:app" if args.reload else app, host=args.host, port=args.port, reload=args.reload)


if __name__ == "__main__":
    main()
