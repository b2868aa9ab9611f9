"""The package root: a short, complete public surface that loads nothing heavy."""

from __future__ import annotations

import importlib
import pkgutil
import subprocess
import sys
from types import ModuleType

import openenv_hub
import openenv_hub.errors


def test_all_is_complete_and_importable() -> None:
    for name in openenv_hub.__all__:
        assert getattr(openenv_hub, name) is not None
    # vars(), not dir(): the package's __dir__ answers with __all__ itself.
    public = {
        name
        for name, value in vars(openenv_hub).items()
        if name.isidentifier()  # pytest's assertion rewriting adds '@py_builtins'
        and not name.startswith("_")
        and not (isinstance(value, ModuleType) and value.__name__ == f"openenv_hub.{name}")
    }
    assert public - set(openenv_hub.__all__) == {"annotations", "importlib", "TYPE_CHECKING", "Any"}


def test_errors_module_exports_every_exception() -> None:
    """Every exception class of the package's modules (errors/_base.py, ...) is in __all__."""
    exceptions = set()
    for module in pkgutil.iter_modules(openenv_hub.errors.__path__, "openenv_hub.errors."):
        for name, value in vars(importlib.import_module(module.name)).items():
            if (
                isinstance(value, type)
                and issubclass(value, Exception)
                and value.__module__.startswith("openenv_hub.errors")
                and not name.startswith("_")
            ):
                exceptions.add(name)
    assert len(exceptions) > 40
    assert sorted(exceptions - set(openenv_hub.errors.__all__)) == []


def test_client_import_loads_no_server_ui_or_hub() -> None:
    code = (
        "import sys, openenv_hub; from openenv_hub import EnvClient, GenericEnvClient, MCPToolClient, Action; "
        "heavy = {'gradio', 'huggingface_hub', 'fastapi', 'uvicorn', 'starlette'} & set(sys.modules); "
        "assert not heavy, heavy"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_server_import_loads_no_ui_or_hub() -> None:
    code = (
        "import sys; from openenv_hub import create_app, Environment; "
        "heavy = {'gradio', 'huggingface_hub'} & set(sys.modules); assert not heavy, heavy"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_wire_error_codes_map_to_one_class_each() -> None:
    from openenv_hub.errors import error_from_wire
    from openenv_hub.protocol import ErrorCode

    classes = {
        code: type(error_from_wire({"code": code.value, "message": "m"})) for code in ErrorCode
    }
    assert classes[ErrorCode.CAPACITY_REACHED].__name__ == "SessionCapacityError"
    assert classes[ErrorCode.FACTORY_ERROR].__name__ == "EnvironmentFactoryError"
    assert classes[ErrorCode.VALIDATION_ERROR].__name__ == "ActionValidationError"
    assert classes[ErrorCode.EXECUTION_ERROR].__name__ == "EnvironmentExecutionError"
    assert classes[ErrorCode.SESSION_ERROR].__name__ == "SessionError"
    for code, cls in classes.items():
        assert cls.__name__ != "ServerReplyError", code
