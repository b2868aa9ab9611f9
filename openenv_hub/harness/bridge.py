"""The tool bridge: the environment's own MCP tools offered to the harness as an MCP server
(streamable HTTP, JSON replies), served on a Unix socket that only the harness's sandbox
reaches (relayed to ``http://127.0.0.1:PORT/mcp`` inside it).

A tool whose name is one of the harness's built-ins is offered as ``env_NAME``
(:func:`offered_names`); the call goes to the environment's tool of the original name, in the
server's process, one call at a time. Only the environment's tools are there: never
``reset``, ``step``, ``state`` or ``close`` (no tool may have those names), nor a reward.
Requests are bounded (body size, one call's time).

Layer: client.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from openenv_hub.model.tool_specs import ToolCallOutcome
from openenv_hub.protocol.jsonrpc import jsonrpc_error, jsonrpc_result
from openenv_hub.types import Tool

__all__ = ["PROTOCOL_VERSION", "ToolBridge", "offered_names"]

PROTOCOL_VERSION = "2025-06-18"
_MAX_BODY = 4 << 20
_PARSE_ERROR, _INVALID, _NO_METHOD, _INVALID_PARAMS = -32700, -32600, -32601, -32602

CallTool = Callable[[str, dict[str, Any]], ToolCallOutcome]


def offered_names(tools: Iterable[Tool], builtins: Iterable[str]) -> dict[str, str]:
    """The name each environment tool is offered under -> its own name: ``env_NAME`` where
    ``NAME`` is one of the harness's built-ins (RFC 005's rule), else ``NAME``."""
    taken = set(builtins)
    return {(f"env_{t.name}" if t.name in taken else t.name): t.name for t in tools}


class ToolBridge:
    """Serves ``tools`` (calling ``call_tool(own_name, arguments)``) on the Unix socket
    ``path`` while started.

    Args:
        tools: The environment's tools.
        builtins: The harness's built-in tool names.
        call_tool: Runs one of the environment's tools (e.g. ``env.call_tool``).
        path: The socket to serve on.
        timeout_s: The longest one tool call may take.
    """

    def __init__(
        self,
        tools: list[Tool],
        builtins: Iterable[str],
        call_tool: CallTool,
        path: Path,
        *,
        timeout_s: float = 120.0,
    ) -> None:
        self.names = offered_names(tools, builtins)
        own = {t.name: t for t in tools}
        self.tools = [
            Tool(
                name=offered, description=own[name].description, input_schema=own[name].input_schema
            )
            for offered, name in self.names.items()
        ]
        self.path = Path(path)
        self.calls: list[str] = []  # the offered names called, in order
        self._call_tool = call_tool
        self._timeout_s = timeout_s
        self._lock = threading.Lock()
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None

    # -- JSON-RPC ----------------------------------------------------------------------------

    async def _answer(self, message: Any) -> dict[str, Any] | None:
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            return jsonrpc_error(None, _INVALID, "not a JSON-RPC 2.0 message")
        ident, method = message.get("id"), message.get("method")
        if ident is None:
            return None  # a notification (notifications/initialized, cancelled, ...)
        params = message.get("params") or {}
        if method == "initialize":
            return jsonrpc_result(ident, self._initialize(params))
        if method == "ping":
            return jsonrpc_result(ident, {})
        if method == "tools/list":
            return jsonrpc_result(ident, {"tools": [self._listed(t) for t in self.tools]})
        if method == "tools/call" and isinstance(params, dict):
            return await self._tools_call(ident, params)
        return jsonrpc_error(ident, _NO_METHOD, f"method not found: {method}")

    def _initialize(self, params: Any) -> dict[str, Any]:
        asked = params.get("protocolVersion") if isinstance(params, dict) else None
        return {
            "protocolVersion": asked if isinstance(asked, str) else PROTOCOL_VERSION,
            "capabilities": {"tools": {"listChanged": False}},
            "serverInfo": {"name": "openenv", "version": "1.0"},
        }

    @staticmethod
    def _listed(tool: Tool) -> dict[str, Any]:
        return {
            "name": tool.name,
            "description": tool.description,
            "inputSchema": tool.input_schema,
        }

    async def _tools_call(self, ident: Any, params: dict[str, Any]) -> dict[str, Any]:
        offered, arguments = params.get("name"), params.get("arguments") or {}
        if offered not in self.names or not isinstance(arguments, dict):
            return jsonrpc_error(ident, _INVALID_PARAMS, f"unknown tool: {offered!r}")
        self.calls.append(str(offered))

        def call() -> ToolCallOutcome:
            with self._lock:
                return self._call_tool(self.names[str(offered)], arguments)

        try:
            outcome = await asyncio.wait_for(asyncio.to_thread(call), self._timeout_s)
        except asyncio.TimeoutError:
            return jsonrpc_result(
                ident, _error_result(f"the tool ran out of {self._timeout_s:g} s")
            )
        if outcome.error is not None:
            return jsonrpc_result(ident, _error_result(outcome.error.message))
        return jsonrpc_result(ident, outcome.result or {"content": []})

    # -- HTTP ------------------------------------------------------------------------------

    def app(self) -> Starlette:
        async def mcp(request: Request) -> Response:
            if request.method != "POST":
                return Response(status_code=405 if request.method == "GET" else 200)
            body = b""
            async for chunk in request.stream():
                body += chunk
                if len(body) > _MAX_BODY:
                    return JSONResponse(jsonrpc_error(None, _INVALID, "request too large"), 413)
            try:
                message = json.loads(body)
            except ValueError:
                return JSONResponse(jsonrpc_error(None, _PARSE_ERROR, "not JSON"), 400)
            if isinstance(message, list):
                replies = [r for m in message[:64] if (r := await self._answer(m)) is not None]
                return JSONResponse(replies) if replies else Response(status_code=202)
            reply = await self._answer(message)
            return Response(status_code=202) if reply is None else JSONResponse(reply)

        methods = ["POST", "GET", "DELETE"]
        return Starlette(
            routes=[Route("/mcp", mcp, methods=methods), Route("/", mcp, methods=methods)]
        )

    def start(self, startup_timeout_s: float = 10.0) -> ToolBridge:
        """Serve on the socket, in a daemon thread; returns when it listens."""
        self.path.unlink(missing_ok=True)
        config = uvicorn.Config(
            self.app(), uds=str(self.path), log_level="warning", access_log=False, lifespan="off"
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, daemon=True, name="tool-bridge")
        self._thread.start()
        deadline = time.monotonic() + startup_timeout_s
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError("the tool bridge did not start")
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        """Stop serving (idempotent)."""
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=10)
        self._server = self._thread = None
        with contextlib.suppress(OSError):
            self.path.unlink(missing_ok=True)


def _error_result(message: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": message}], "isError": True}
