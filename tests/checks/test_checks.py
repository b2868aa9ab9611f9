"""``openenv_hub.checks``: the static checks of a folder, below the Hub in the layers (push runs
them), and the modules' old names under ``openenv_hub.validation``."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from openenv_hub.checks import CheckResult, check_folder, passed
from openenv_hub.validation import validate_path

REPO = Path(__file__).resolve().parents[2]


def test_a_reference_environment_passes_the_static_checks() -> None:
    results = check_folder(REPO / "envs" / "echo_env")
    assert passed(results), [r for r in results if not r.ok]
    assert {r.level for r in results} == {"static"}
    assert results == validate_path(REPO / "envs" / "echo_env", level="static")


def test_a_folder_without_a_manifest_fails_naming_the_manifest(tmp_path: Path) -> None:
    results = check_folder(tmp_path)
    assert not passed(results)
    manifest = next(r for r in results if r.name == "manifest")
    assert isinstance(manifest, CheckResult) and not manifest.ok
    assert str(tmp_path.resolve()) in manifest.message


OLD_NAMES = """
import warnings

with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    from openenv_hub.validation.result import CheckResult, passed, report_json, run_checks
    from openenv_hub.validation.static import read_front_matter, static_checks
    from openenv_hub.validation.target import EnvTarget

from openenv_hub import checks
from openenv_hub.checks import result, static, target

assert (CheckResult, passed, report_json, run_checks) == (
    result.CheckResult, result.passed, result.report_json, result.run_checks
)
assert (read_front_matter, static_checks) == (static.read_front_matter, static.static_checks)
assert EnvTarget is target.EnvTarget is checks.EnvTarget
warned = {str(w.message): w.filename for w in caught if w.category is DeprecationWarning}
print(sorted(warned.items()))
"""


def test_the_old_module_names_import_warn_and_are_the_same_objects() -> None:
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(OLD_NAMES)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    warned = dict(eval(done.stdout))
    R = " and will be removed in 0.2:"
    assert warned == {
        f"openenv_hub.validation.{name} is deprecated{R} import openenv_hub.checks.{name} instead.": (
            "<string>"
        )
        for name in ("result", "static", "target")
    }
