"""The {{ cookiecutter.title }} environment: client and models (``{{ cookiecutter.name }}.server`` holds the server)."""

from {{ cookiecutter.name }}.client import {{ cookiecutter.class_prefix }}Env
from {{ cookiecutter.name }}.models import {{ cookiecutter.class_prefix }}Action, {{ cookiecutter.class_prefix }}Observation

__all__ = ["{{ cookiecutter.class_prefix }}Action", "{{ cookiecutter.class_prefix }}Env", "{{ cookiecutter.class_prefix }}Observation"]
