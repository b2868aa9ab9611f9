"""An environment whose observation says the collector's young-generation threshold in the
server process (tests/server/test_collector.py, tests/cli/test_serve.py).

python gc_probe.py PORT    # served with openenv_hub.serve_app
"""

from __future__ import annotations

import gc
import sys
from typing import Any

from openenv_hub import Action, Environment, Observation, State, create_app, serve_app


class Thresholds(Observation):
    young: int = 0


class Probe(Environment[Action, Thresholds, State]):
    def reset(
        self, seed: int | None = None, episode_id: str | None = None, **kwargs: Any
    ) -> Thresholds:
        return Thresholds(young=gc.get_threshold()[0])

    def step(self, action: Action, timeout_s: float | None = None, **kwargs: Any) -> Thresholds:
        return self.reset()

    @property
    def state(self) -> State:
        return State()


app = create_app(Probe, Action, Thresholds, env_name="gc_probe")

if __name__ == "__main__":
    serve_app(app, port=int(sys.argv[1]), log_level="warning")
