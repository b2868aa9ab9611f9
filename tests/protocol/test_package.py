"""openenv_hub.protocol: one package for the wire, its names where they always were, loaded lazily."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import openenv_hub.protocol as protocol
from openenv_hub.validation import runtime

#: What ``from openenv_hub.protocol import ...`` gave before the wire became a package.
NAMES_OF_THE_MODULE = [
    "CallToolResult",
    "CloseMessage",
    "DecodeError",
    "ErrorCode",
    "IncomingMessage",
    "JsonRpcCode",
    "JsonRpcRequest",
    "McpMessage",
    "ResetMessage",
    "ResetRequest",
    "StateMessage",
    "StepMessage",
    "StepRequest",
    "decode_message",
    "describe_validation_error",
    "error_frame",
    "error_frame_for",
    "jsonrpc_error",
    "jsonrpc_error_for",
    "jsonrpc_result",
    "mcp_frame",
    "observation_frame",
    "observation_payload",
    "parse_json",
    "state_frame",
    "step_frame_reader",
    "validation_error",
]


def test_every_name_the_module_had_is_still_exported() -> None:
    missing = [name for name in NAMES_OF_THE_MODULE if name not in protocol.__all__]
    assert not missing
    for name in NAMES_OF_THE_MODULE:
        assert getattr(protocol, name) is not None


def test_every_exported_name_resolves_to_its_module() -> None:
    for name in protocol.__all__:
        value = getattr(protocol, name)
        module = getattr(value, "__module__", None)
        assert module is None or module.startswith(("openenv_hub.protocol.", "typing")), name


#: Public names of the modules that the package leaves to ``openenv_hub.protocol.<module>``.
NOT_AT_THE_TOP = {
    "BINARY_FRAME_REFUSAL",
    "REPLY_TYPES",
    "may_not_be_finite",
    "public_errors",
}


def test_the_package_exports_every_public_name_of_its_modules() -> None:
    package = Path(protocol.__file__).parent
    for path in sorted(package.glob("[!_]*.py")):
        module = importlib.import_module(f"openenv_hub.protocol.{path.stem}")
        missing = set(module.__all__) - set(protocol.__all__) - NOT_AT_THE_TOP
        assert not missing, f"{path.name}: {sorted(missing)}"


def test_the_codes_and_replies_load_without_the_message_validators() -> None:
    code = (
        "import sys; from openenv_hub.protocol import ErrorCode, error_frame_for; "
        "assert 'openenv_hub.protocol.messages' not in sys.modules, 'messages loaded'; "
        "from openenv_hub.protocol import decode_message; "
        "assert 'openenv_hub.protocol.messages' in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_the_protocol_builds_only_on_the_layers_below_it() -> None:
    """types, errors and the URL masking: never the server, the client or anything above."""
    allowed = (
        "openenv_hub.protocol",
        "openenv_hub.errors",
        "openenv_hub.types",
        "openenv_hub.shown_urls",
    )
    package = Path(protocol.__file__).parent
    for path in sorted(package.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("openenv_hub"):
                assert (node.module or "").startswith(allowed), f"{path.name}: {node.module}"


def test_the_runtime_checks_speak_through_the_protocol_not_a_client_module() -> None:
    source = Path(runtime.__file__).read_text(encoding="utf-8")
    assert "openenv_hub.client" not in source
    assert '"type":' not in source  # no frame written by hand
