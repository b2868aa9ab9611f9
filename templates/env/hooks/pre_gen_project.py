"""Reject environment names that cannot be Python packages, suggesting one that can."""

import keyword
import re
import sys

NAME = "{{ cookiecutter.name }}"


def suggestion(value: str) -> str:
    """A valid package name close to ``value`` (``my-env`` -> ``my_env``, ``MyEnv`` -> ``my_env``)."""
    name = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", value.strip())
    name = re.sub(r"\W+", "_", name).strip("_").lower() or "my_env"
    if name[0].isdigit():
        name = f"env_{name}"
    return f"{name}_env" if keyword.iskeyword(name) else name


def problem(value: str) -> str:
    if not value.isidentifier():
        return "is not a valid Python identifier (letters, digits and underscores only)"
    if keyword.iskeyword(value):
        return "is a Python keyword"
    if value != value.lower():
        return "should be lowercase (it becomes the package name)"
    return ""


reason = problem(NAME)
if reason:
    sys.stderr.write(f"Error: environment name '{NAME}' {reason}. Try '{suggestion(NAME)}'.\n")
    sys.exit(1)
