"""A single-turn verifiers environment: arithmetic questions, a dataset and a rubric of two
reward functions (one sync, one async, weighted) and a metric."""

import asyncio
import re

import verifiers as vf
from datasets import Dataset

QUESTIONS = [(a, b, op) for a in (3, 7, 12, 25) for b in (2, 5, 9) for op in ("+", "*")]


def _rows() -> list[dict]:
    rows = []
    for a, b, op in QUESTIONS:
        answer = a + b if op == "+" else a * b
        rows.append({"question": f"What is {a} {op} {b}?", "answer": str(answer)})
    return rows


def _last_number(completion) -> str | None:
    text = completion[-1]["content"] if isinstance(completion, list) else completion
    text = text if isinstance(text, str) else getattr(completion[-1], "content", "") or ""
    found = re.findall(r"-?\d+", text or "")
    return found[-1] if found else None


def correct_answer(completion, answer, **kwargs) -> float:
    return 1.0 if _last_number(completion) == answer else 0.0


async def brevity(completion, **kwargs) -> float:
    await asyncio.sleep(0)
    text = completion[-1]["content"] if isinstance(completion[-1], dict) else completion[-1].content
    return 1.0 if len(text or "") <= 20 else 0.0


def answer_length(completion, **kwargs) -> float:
    text = completion[-1]["content"] if isinstance(completion[-1], dict) else completion[-1].content
    return float(len(text or ""))


def load_environment(system_prompt: str = "Answer with the number only.") -> vf.Environment:
    rubric = vf.Rubric(funcs=[correct_answer, brevity], weights=[1.0, 0.2])
    rubric.add_metric(answer_length)
    return vf.SingleTurnEnv(
        eval_dataset=Dataset.from_list(_rows()), system_prompt=system_prompt, rubric=rubric
    )
