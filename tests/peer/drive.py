"""Drive an OpenEnv-compatible server with the upstream ``openenv`` client classes.

Runs only inside the peer virtual environment (see README.md); the server under
test may be anything speaking the protocol (ours or the upstream one).

    python drive.py --url http://127.0.0.1:8123 --mode generic

Prints exactly one JSON object on stdout and exits 0 on success, 1 on failure
(the JSON then has ``"ok": false`` and an ``"error"`` string).

Modes
-----
generic        async ``GenericEnvClient`` over ``/ws``
generic-sync   ``GenericEnvClient(...).sync()`` over ``/ws``
generic-auto   ``GenericEnvClient`` called without ``await`` from plain code
               (the client's own sync dispatch, no ``.sync()``)
mcp            async ``MCPToolClient`` in its default mode: HTTP ``/mcp`` session
               (``openenv/session/create``), ``/ws?session_id=...`` attached to it,
               ``list_tools``/``call_tool`` over HTTP ``/mcp``
mcp-sync       the same through ``.sync()``
mcp-ws         ``MCPToolClient`` with ``use_production_mode = False``:
               ``list_tools``/``call_tool`` become ``step`` messages over ``/ws``
http           plain HTTP requests (no upstream client class exists for it):
               ``/reset``, ``/step``, ``/state``, ``/mcp`` tools/list + tools/call
before-reset   async ``GenericEnvClient``: ``step`` and ``state`` before any ``reset``
               (each error as the client raises it), then ``reset`` and ``step`` on the same
               connection

``--env`` selects the action set: ``echo`` (an MCP echo environment with tools
``echo_message`` and ``echo_with_length``) or ``typed`` (action
``{"message": str}``); ``auto`` (default) reads ``/schema`` to decide.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
import traceback
import urllib.request
from typing import Any

EPISODE_ID = "drive-episode"
SEED = 7


def jsonable(value: Any) -> Any:
    """Turn client-side results (pydantic models, dataclasses, enums) into JSON data."""
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if hasattr(value, "model_dump"):
        return jsonable(value.model_dump(mode="json"))
    if hasattr(value, "value") and type(value).__module__ != "builtins":
        return jsonable(value.value)
    if hasattr(value, "__dataclass_fields__"):
        return {k: jsonable(getattr(value, k)) for k in value.__dataclass_fields__}
    if hasattr(value, "__dict__"):
        return {k: jsonable(v) for k, v in vars(value).items() if not k.startswith("_")}
    return repr(value)


def step_record(result: Any) -> dict[str, Any]:
    return {
        "observation": jsonable(result.observation),
        "reward": result.reward,
        "done": result.done,
        "metadata": jsonable(getattr(result, "metadata", None)),
    }


def http_url(url: str) -> str:
    url = url.rstrip("/")
    if url.startswith("ws://"):
        return "http://" + url[5:]
    if url.startswith("wss://"):
        return "https://" + url[6:]
    if "://" not in url:
        return "http://" + url
    return url


def detect_env(url: str) -> str:
    with urllib.request.urlopen(http_url(url) + "/schema", timeout=10) as resp:
        schema = json.loads(resp.read())
    title = schema.get("action", {}).get("title", "")
    props = schema.get("action", {}).get("properties", {})
    if title in {"CallToolAction", "ListToolsAction"} or "tool_name" in props:
        return "echo"
    return "typed"


def actions_for(env: str, message: str) -> list[dict[str, Any]]:
    if env == "echo":
        return [
            {"type": "list_tools"},
            {"type": "call_tool", "tool_name": "echo_message", "arguments": {"message": message}},
            {
                "type": "call_tool",
                "tool_name": "echo_with_length",
                "arguments": {"message": message},
            },
        ]
    return [{"message": message}, {"message": message + message}]


BAD_ACTION = {"definitely_not_a_field": 1}


# --------------------------------------------------------------------------- generic


async def run_generic_async(url: str, env: str, message: str) -> dict[str, Any]:
    from openenv.core.generic_client import GenericEnvClient

    out: dict[str, Any] = {}
    async with GenericEnvClient(base_url=url) as client:
        out["ws_url"] = client._ws_url
        out["reset"] = step_record(await client.reset(seed=SEED, episode_id=EPISODE_ID))
        out["steps"] = [step_record(await client.step(a)) for a in actions_for(env, message)]
        out["state"] = jsonable(await client.state())
        try:
            await client.step(BAD_ACTION)
            out["bad_step_error"] = None
        except RuntimeError as exc:
            out["bad_step_error"] = str(exc)
        out["state_after_error"] = jsonable(await client.state())
    return out


def run_generic_sync(url: str, env: str, message: str) -> dict[str, Any]:
    from openenv.core.generic_client import GenericEnvClient

    out: dict[str, Any] = {}
    with GenericEnvClient(base_url=url).sync() as client:
        out["ws_url"] = client.async_client._ws_url
        out["reset"] = step_record(client.reset(seed=SEED, episode_id=EPISODE_ID))
        out["steps"] = [step_record(client.step(a)) for a in actions_for(env, message)]
        out["state"] = jsonable(client.state())
        try:
            client.step(BAD_ACTION)
            out["bad_step_error"] = None
        except RuntimeError as exc:
            out["bad_step_error"] = str(exc)
        out["state_after_error"] = jsonable(client.state())
    return out


async def run_before_reset(url: str, env: str, message: str) -> dict[str, Any]:
    from openenv.core.generic_client import GenericEnvClient

    out: dict[str, Any] = {}
    async with GenericEnvClient(base_url=url) as client:
        for name, call in (
            ("step_error", lambda: client.step(actions_for(env, message)[0])),
            ("state_error", client.state),
        ):
            try:
                out[name] = {"answered": jsonable(await call())}
            except RuntimeError as exc:
                out[name] = str(exc)
        out["reset"] = step_record(await client.reset(seed=SEED, episode_id=EPISODE_ID))
        out["steps"] = [step_record(await client.step(actions_for(env, message)[0]))]
    return out


def run_generic_auto(url: str, env: str, message: str) -> dict[str, Any]:
    from openenv.core.generic_client import GenericEnvClient

    out: dict[str, Any] = {}
    client = GenericEnvClient(base_url=url)
    try:
        out["ws_url"] = client._ws_url
        out["reset"] = step_record(client.reset(seed=SEED, episode_id=EPISODE_ID))
        out["steps"] = [step_record(client.step(a)) for a in actions_for(env, message)]
        out["state"] = jsonable(client.state())
    finally:
        client.close()
    return out


# --------------------------------------------------------------------------- mcp


def tool_summary(tools: Any) -> dict[str, Any]:
    return {
        "tool_names": [t.name for t in tools],
        "tools": [jsonable(t) for t in tools],
    }


async def run_mcp_async(url: str, env: str, message: str, production: bool) -> dict[str, Any]:
    from openenv.core.env_server.mcp_types import CallToolAction, ListToolsAction
    from openenv.core.mcp_client import MCPToolClient

    out: dict[str, Any] = {}
    client = MCPToolClient(base_url=url)
    if not production:
        client.use_production_mode = False
    async with client:
        out["use_production_mode"] = client.use_production_mode
        out["session_id"] = client._production_session_id
        out["reset"] = step_record(await client.reset(seed=SEED, episode_id=EPISODE_ID))
        out.update(tool_summary(await client.list_tools(use_cache=False)))
        out["call_tool"] = {
            "echo_message": jsonable(await client.call_tool("echo_message", message=message)),
            "echo_with_length": jsonable(
                await client.call_tool("echo_with_length", message=message)
            ),
        }
        try:
            await client.call_tool("no_such_tool")
            out["unknown_tool_error"] = None
        except RuntimeError as exc:
            out["unknown_tool_error"] = str(exc)
        out["steps"] = [
            step_record(await client.step(ListToolsAction())),
            step_record(
                await client.step(
                    CallToolAction(tool_name="echo_message", arguments={"message": message})
                )
            ),
        ]
        out["state"] = jsonable(await client.state())
    return out


def run_mcp_sync(url: str, env: str, message: str) -> dict[str, Any]:
    from openenv.core.env_server.mcp_types import CallToolAction, ListToolsAction
    from openenv.core.mcp_client import MCPToolClient

    out: dict[str, Any] = {}
    with MCPToolClient(base_url=url).sync() as client:
        out["use_production_mode"] = client.async_client.use_production_mode
        out["session_id"] = client.async_client._production_session_id
        out["reset"] = step_record(client.reset(seed=SEED, episode_id=EPISODE_ID))
        out.update(tool_summary(client.list_tools(use_cache=False)))
        out["call_tool"] = {
            "echo_message": jsonable(client.call_tool("echo_message", message=message)),
            "echo_with_length": jsonable(client.call_tool("echo_with_length", message=message)),
        }
        try:
            client.call_tool("no_such_tool")
            out["unknown_tool_error"] = None
        except RuntimeError as exc:
            out["unknown_tool_error"] = str(exc)
        out["steps"] = [
            step_record(client.step(ListToolsAction())),
            step_record(
                client.step(
                    CallToolAction(tool_name="echo_message", arguments={"message": message})
                )
            ),
        ]
        out["state"] = jsonable(client.state())
    return out


# --------------------------------------------------------------------------- raw http


def run_http(url: str, env: str, message: str) -> dict[str, Any]:
    import httpx

    base = http_url(url)
    out: dict[str, Any] = {}
    with httpx.Client(base_url=base, timeout=30) as c:

        def post(path: str, body: Any) -> dict[str, Any]:
            r = c.post(path, json=body)
            return {"status": r.status_code, "body": r.json()}

        out["health"] = c.get("/health").json()
        out["reset"] = post("/reset", {"seed": SEED, "episode_id": EPISODE_ID})
        out["steps"] = [post("/step", {"action": a}) for a in actions_for(env, message)]
        out["bad_step"] = post("/step", {"action": BAD_ACTION})
        out["state"] = c.get("/state").json()
        out["metadata"] = c.get("/metadata").json()
        out["schema_keys"] = sorted(c.get("/schema").json())
        listed = post("/mcp", {"jsonrpc": "2.0", "method": "tools/list", "id": 1})["body"]
        out["mcp_tools_list"] = listed
        if "result" in listed:
            out["tool_names"] = [t["name"] for t in listed["result"]["tools"]]
        out["mcp_tools_call"] = post(
            "/mcp",
            {
                "jsonrpc": "2.0",
                "method": "tools/call",
                "params": {"name": "echo_message", "arguments": {"message": message}},
                "id": 2,
            },
        )["body"]
    return out


# --------------------------------------------------------------------------- main


def main() -> int:
    parser = argparse.ArgumentParser(
        description="Drive a server with the upstream openenv clients."
    )
    parser.add_argument("--url", required=True)
    parser.add_argument(
        "--mode",
        required=True,
        choices=[
            "generic",
            "generic-sync",
            "generic-auto",
            "mcp",
            "mcp-sync",
            "mcp-ws",
            "http",
            "before-reset",
        ],
    )
    parser.add_argument("--env", default="auto", choices=["auto", "echo", "typed"])
    parser.add_argument("--message", default="hello")
    args = parser.parse_args()

    result: dict[str, Any] = {"mode": args.mode, "url": args.url}
    started = time.perf_counter()
    try:
        if args.mode != "http":
            import openenv.core.generic_client
            import openenv.core.mcp_client  # noqa: F401
        result["import_s"] = round(time.perf_counter() - started, 4)
        env = detect_env(args.url) if args.env == "auto" else args.env
        result["env"] = env
        run_started = time.perf_counter()
        if args.mode == "generic":
            body = asyncio.run(run_generic_async(args.url, env, args.message))
        elif args.mode == "generic-sync":
            body = run_generic_sync(args.url, env, args.message)
        elif args.mode == "generic-auto":
            body = run_generic_auto(args.url, env, args.message)
        elif args.mode == "mcp":
            body = asyncio.run(run_mcp_async(args.url, env, args.message, production=True))
        elif args.mode == "mcp-ws":
            body = asyncio.run(run_mcp_async(args.url, env, args.message, production=False))
        elif args.mode == "mcp-sync":
            body = run_mcp_sync(args.url, env, args.message)
        elif args.mode == "before-reset":
            body = asyncio.run(run_before_reset(args.url, env, args.message))
        else:
            body = run_http(args.url, env, args.message)
        result.update(body)
        result["run_s"] = round(time.perf_counter() - run_started, 4)
        result["ok"] = True
    except BaseException as exc:  # report everything as JSON, including KeyboardInterrupt
        result["ok"] = False
        result["error"] = f"{type(exc).__name__}: {exc}"
        result["traceback"] = traceback.format_exc()
    result["elapsed_s"] = round(time.perf_counter() - started, 4)
    sys.stdout.write(json.dumps(result, sort_keys=True) + "\n")
    sys.stdout.flush()
    return 0 if result["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
