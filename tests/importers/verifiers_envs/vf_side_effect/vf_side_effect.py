"""A verifiers environment whose module does something when imported: it writes a file named
by OPENENV_TEST_IMPORT_MARKER. Detecting it must not import it."""

import os
from pathlib import Path

import verifiers as vf
from datasets import Dataset

Path(os.environ.get("OPENENV_TEST_IMPORT_MARKER", "/tmp/vf-side-effect-ran")).write_text("ran")


def load_environment() -> vf.Environment:
    return vf.SingleTurnEnv(eval_dataset=Dataset.from_list([{"question": "1+1?", "answer": "2"}]))
