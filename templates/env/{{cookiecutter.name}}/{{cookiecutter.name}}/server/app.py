"""The {{ cookiecutter.title }} server: ``uvicorn {{ cookiecutter.name }}.server.app:app`` or ``{{ cookiecutter.dist_name }}-server``."""

from __future__ import annotations

from openenv_hub import create_app
from openenv_hub.server import serve_main

from {{ cookiecutter.name }}.models import {{ cookiecutter.class_prefix }}Action, {{ cookiecutter.class_prefix }}Observation
from {{ cookiecutter.name }}.server.environment import {{ cookiecutter.class_prefix }}Environment

app = create_app({{ cookiecutter.class_prefix }}Environment, {{ cookiecutter.class_prefix }}Action, {{ cookiecutter.class_prefix }}Observation, env_name="{{ cookiecutter.name }}")


def main(argv: list[str] | None = None) -> None:
    """``{{ cookiecutter.dist_name }}-server``: serve this app (``--help`` for the options of :func:`serve_main`)."""
    serve_main("{{ cookiecutter.name }}.server.app:app", argv)


if __name__ == "__main__":
    main()
