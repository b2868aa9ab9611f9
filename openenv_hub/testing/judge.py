"""A deterministic LLM judge: an OpenAI-compatible ``/v1/chat/completions`` app for tests.

Serve :func:`judge_app` on 127.0.0.1 and point an
:class:`~openenv_hub.rubrics.OpenAIJudge` at it: the "model" answers each prompt with
``grade(prompt)``, so a rubric built on the judge can be tested without a real model.

Example::

    app = judge_app(lambda prompt: "8" if "please" in prompt else "2", api_key="test-key")
    # serve app with uvicorn on 127.0.0.1, then:
    judge = OpenAIJudge(f"http://127.0.0.1:{port}/v1", model="judge", api_key_env="JUDGE_KEY")

Layer: ui.
"""

# No ``from __future__ import annotations``: FastAPI reads the handler's annotations, and
# ``Request`` is imported inside judge_app.
from collections.abc import Callable
from typing import Any

__all__ = ["judge_app"]


def judge_app(grade: Callable[[str], str], *, api_key: str | None = None) -> Any:
    """A FastAPI app answering chat completions with ``grade(last user message)``.

    Args:
        grade: Turns the prompt into the judge's answer.
        api_key: When set, requests without ``Authorization: Bearer <api_key>`` get HTTP 401.

    The app keeps the prompts it received in ``app.state.prompts``.
    """
    from fastapi import FastAPI, Request
    from fastapi.responses import JSONResponse

    app = FastAPI(title="Deterministic judge")
    app.state.prompts = []

    @app.post("/v1/chat/completions")
    async def complete(request: Request) -> JSONResponse:
        if api_key is not None and request.headers.get("authorization") != f"Bearer {api_key}":
            return JSONResponse({"error": {"message": "Invalid API key"}}, status_code=401)
        body = await request.json()
        users = [m for m in body.get("messages", []) if m.get("role") == "user"]
        prompt = str(users[-1].get("content", "")) if users else ""
        app.state.prompts.append(prompt)
        answer = grade(prompt)
        return JSONResponse(
            {
                "id": f"judge-{len(app.state.prompts)}",
                "object": "chat.completion",
                "model": body.get("model", "judge"),
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": answer},
                        "finish_reason": "stop",
                    }
                ],
            }
        )

    return app
