"""A multi-turn verifiers environment with tools: look up two cities' populations, add them,
answer. Rewarded for the right total (sync) and for having used the tools (async)."""

import re

import verifiers as vf
from datasets import Dataset

POPULATIONS = {"Lyon": 522, "Porto": 232, "Graz": 291, "Turku": 195, "Oulu": 208}
PAIRS = [(a, b) for a in POPULATIONS for b in POPULATIONS if a < b]


def lookup(city: str) -> str:
    """The population of a city, in thousands.

    Args:
        city: The city's name.
    """
    if city not in POPULATIONS:
        raise KeyError(f"unknown city {city!r}")
    return str(POPULATIONS[city])


async def add(a: int, b: int) -> int:
    """The sum of two integers.

    Args:
        a: The first.
        b: The second.
    """
    return a + b


def right_total(completion, answer, **kwargs) -> float:
    last = completion[-1]
    text = last["content"] if isinstance(last, dict) else (last.content or "")
    found = re.findall(r"\d+", text or "")
    return 1.0 if found and found[-1] == answer else 0.0


async def used_tools(completion, **kwargs) -> float:
    calls = 0
    for message in completion:
        tool_calls = (
            message.get("tool_calls")
            if isinstance(message, dict)
            else getattr(message, "tool_calls", None)
        )
        calls += len(tool_calls or [])
    return min(calls, 3) / 3


def load_environment(max_turns: int = 6) -> vf.Environment:
    rows = [
        {
            "question": f"What is the population of {a} plus that of {b}, in thousands?",
            "answer": str(POPULATIONS[a] + POPULATIONS[b]),
        }
        for a, b in PAIRS
    ]
    rubric = vf.Rubric(funcs=[right_total, used_tools], weights=[1.0, 0.5])
    return vf.ToolEnv(
        dataset=Dataset.from_list(rows), tools=[lookup, add], rubric=rubric, max_turns=max_turns
    )
