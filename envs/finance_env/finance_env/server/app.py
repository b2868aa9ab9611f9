"""The trading server's app: ``uvicorn finance_env.server.app:app`` (``finance-env-server`` and
``python -m finance_env.server`` serve it too)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from finance_env.models import TradingAction, TradingObservation, TradingState
from finance_env.server.data import default_source, require_default_data
from finance_env.server.environment import TradingEnvironment
from openenv_hub import create_app
from openenv_hub.ui import UIContext

_README = Path(__file__).resolve().parents[2] / "README.md"


def build_ui(ctx: UIContext) -> Any:
    """The Chart tab of the web UI (gradio is imported only when the UI is on)."""
    from finance_env.server.ui import chart_tab

    return chart_tab(ctx)


# A plain install lacks the default data set's package: say so now, not at the first reset.
require_default_data(default_source())

app = create_app(
    TradingEnvironment,
    TradingAction,
    TradingObservation,
    state_cls=TradingState,
    env_name="finance_env",
    readme=_README.read_text(encoding="utf-8") if _README.is_file() else None,
    ui_builder=build_ui,
)
