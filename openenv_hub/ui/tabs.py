"""Browser tabs and the pool sessions they own.

Every tab (one gradio ``session_hash``) gets its own session from the pool, opened when the
page loads and closed when the tab goes away. When the pool closes a tab's session on its own
(the idle reaper, a shutdown), the next action in that tab opens a fresh one and the caller
gets a notice saying so.

Layer: ui.
"""

from __future__ import annotations

import asyncio
import hashlib
import shutil
import tempfile
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

from openenv_hub.errors import SessionError
from openenv_hub.server.sessions import Session, SessionPool
from openenv_hub.types import Tool
from openenv_hub.ui.history import MAX_HISTORY, HistoryEntry, to_jsonl

__all__ = ["Tab", "TabSessions"]


@dataclass(eq=False)
class Tab:
    """What the server keeps for one browser tab.

    Attributes:
        key: The tab's gradio session hash.
        session: Its pool session; None before the first open or after the pool closed it.
        lost_reason: Why the pool closed the previous session, until a new one is opened.
        history: Resets, steps and tool calls of the current episode.
        tools: The MCP tools, listed once per session.
    """

    key: str
    session: Session | None = None
    lost_reason: str | None = None
    history: list[HistoryEntry] = field(default_factory=list)
    tools: list[Tool] | None = None
    released: bool = False
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)

    def record(self, entry: HistoryEntry, *, new_episode: bool = False) -> None:
        if new_episode:
            self.history.clear()
        self.history.append(entry)
        del self.history[:-MAX_HISTORY]


class TabSessions:
    """The open browser tabs of one UI, each with its pool session.

    Args:
        pool: The session core every tab draws its session from.
        env_name: Used to name downloaded history files.
    """

    def __init__(self, pool: SessionPool, *, env_name: str = "env") -> None:
        self.pool = pool
        self._env_name = env_name
        self._tabs: dict[str, Tab] = {}
        self._files: Path | None = None  # created with the first history file

    def __len__(self) -> int:
        return len(self._tabs)

    def get(self, key: str) -> Tab | None:
        return self._tabs.get(key)

    async def acquire(self, key: str) -> tuple[Tab, Session, str | None]:
        """The tab's live session, opened if it has none.

        Returns:
            The tab, its session, and a notice when a session the pool had closed was replaced.

        Raises:
            SessionCapacityError: the pool is full.
            EnvironmentFactoryError: the environment could not be created.
        """
        tab = self._tabs.get(key)
        if tab is None:
            tab = self._tabs[key] = Tab(key)
        async with tab.lock:
            if tab.session is not None and tab.session.ready:
                return tab, tab.session, None
            notice = None
            if tab.session is not None:
                reason = tab.lost_reason or "closed by the server"
                notice = f"The previous session of this tab was closed ({reason}); a fresh one was opened."
                tab.session, tab.tools = None, None
            session = await self.pool.open(kind="ui")
            if tab.released:
                await self.pool.close(session, reason="browser tab closed")
                raise SessionError("This browser tab was closed", session_id=session.id)
            session.on_close.append(_lost_callback(tab, session))
            tab.session, tab.lost_reason = session, None
            return tab, session, notice

    async def release(self, key: str) -> None:
        """Close the tab's session and forget the tab (its page was closed or reloaded)."""
        tab = self._tabs.pop(key, None)
        if tab is None:
            return
        tab.released = True
        session, tab.session = tab.session, None
        if self._files is not None:
            shutil.rmtree(self._folder(key), ignore_errors=True)
        if session is not None:
            await self.pool.close(session, reason="browser tab closed")

    def history_file(self, tab: Tab) -> Path | None:
        """Write the tab's history as JSONL and return the file (None when it is empty)."""
        if not tab.history:
            return None
        if self._files is None:
            self._files = Path(tempfile.mkdtemp(prefix="openenv-ui-"))
        folder = self._folder(tab.key)
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{self._env_name}-history.jsonl"
        path.write_text(to_jsonl(tab.history), encoding="utf-8")
        return path

    def _folder(self, key: str) -> Path:
        assert self._files is not None
        # The key comes from the browser: never use it as a path component as is.
        return self._files / hashlib.sha256(key.encode()).hexdigest()[:24]

    def cleanup(self) -> None:
        """Delete the history files of every tab (the server is stopping)."""
        if self._files is not None:
            shutil.rmtree(self._files, ignore_errors=True)
            self._files = None


def _lost_callback(tab: Tab, session: Session) -> Callable[[str], Awaitable[None]]:
    async def lost(reason: str) -> None:
        if tab.session is session:
            tab.lost_reason = reason

    return lost
