"""The floor: a bare FastAPI WebSocket that answers every frame with a fixed observation frame.

No validation, no environment: what any server on this stack costs at least.

    python floor.py --port 8200
"""

from __future__ import annotations

import argparse
import json

import uvicorn
from fastapi import FastAPI, WebSocket, WebSocketDisconnect

app = FastAPI()


@app.get("/health")
async def health() -> dict[str, str]:
    return {"status": "healthy"}


@app.post("/step")
async def step(body: dict) -> dict:  # type: ignore[type-arg]
    return {"observation": body.get("action", {}), "reward": 0.0, "done": False}


@app.websocket("/ws")
async def ws(websocket: WebSocket) -> None:
    await websocket.accept()
    try:
        while True:
            message = json.loads(await websocket.receive_text())
            if message.get("type") == "close":
                break
            reply = {
                "type": "observation",
                "data": {"observation": message.get("data", {}), "reward": 0.0, "done": False},
            }
            await websocket.send_text(json.dumps(reply))
    except WebSocketDisconnect:
        pass


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=8200)
    uvicorn.run(app, host="127.0.0.1", port=parser.parse_args().port, log_level="warning")
