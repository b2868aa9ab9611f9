"""What a custom UI builder receives: :class:`UIContext`.

Layer: ui.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from openenv_hub.server.sessions import Session, SessionPool
from openenv_hub.types import EnvironmentMetadata
from openenv_hub.ui.tabs import TabSessions

__all__ = ["UIContext"]


@dataclass(frozen=True)
class UIContext:
    """Everything a ``ui_builder`` needs to add its own tab to the web UI.

    A builder is a function ``(UIContext) -> gradio.Blocks`` passed to
    ``create_app(..., ui_builder=...)``. Its Blocks is shown as an extra tab (the only one
    with ``show_default_ui=False``). To drive the environment, get the browser tab's session
    with :meth:`session` and call the pool's methods on it; the tab shares that session with
    the generated Playground, and it is closed when the browser tab closes.

    Handlers that use the pool must be ``async`` (the pool lives on the server's event loop)
    and take a parameter annotated ``gr.Request``, with gradio imported at module level so
    gradio can resolve the annotation.

    Example:
        A tab showing the episode state of the browser tab's session::

            import gradio as gr

            def build(ctx: UIContext) -> gr.Blocks:
                with gr.Blocks(title="Board") as blocks:
                    out = gr.JSON()

                    async def show(request: gr.Request) -> dict:
                        return await ctx.pool.state(await ctx.session(request))

                    gr.Button("Show state").click(show, outputs=out)
                return blocks

            app = create_app(MyEnv, MyAction, MyObservation, web=True, ui_builder=build)

    Attributes:
        pool: The session core; drive the environment only through its methods.
        metadata: The environment's name, description, version and README.
        action_schema: JSON schema of the action model.
        observation_schema: JSON schema of the observation model.
        readme: The README shown in the README tab, front matter removed ("" when none).
    """

    pool: SessionPool
    metadata: EnvironmentMetadata
    action_schema: dict[str, Any]
    observation_schema: dict[str, Any]
    readme: str = ""
    _tabs: TabSessions | None = field(default=None, repr=False, compare=False)

    async def session(self, request: Any) -> Session:
        """The pool session of the browser tab that sent ``request`` (a ``gradio.Request``).

        Opens one when the tab has none yet (or the pool closed it for being idle).

        Raises:
            SessionCapacityError: every session of the pool is in use.
        """
        if self._tabs is None:
            raise RuntimeError("This UIContext is not attached to a running UI")
        _, session, _ = await self._tabs.acquire(request.session_hash)
        return session
