"""Every command's help: -h, ``openenv help``, an Examples section, no type noise, one meaning
per short flag, one name per kind of argument; and every example is run, or skipped saying what
it needs."""

from __future__ import annotations

import shlex
import shutil
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import typer
from doc_blocks import doc_block

from openenv_hub_cli._examples import EXAMPLES, HUB, SERVES, Example
from openenv_hub_cli._help import decorate
from openenv_hub_cli.main import app

#: Short flags whose long names differ but say one thing: where the output goes.
SYNONYMS = {"-o": {"--output", "--output-dir", "--out"}}
#: What arguments are called: an environment, a Space, a new name or folder, servers to stop.
ARGUMENT_NAMES = {"ENV", "SPACE", "NAME", "FOLDER", "SOURCE", "NAME...", "[COMMAND]..."}


def _root() -> Any:
    command = typer.main.get_command(app)
    decorate(command)
    return command


def _commands(command: Any, path: str = "") -> list[tuple[str, Any]]:
    """``(path, command)`` of every command that runs (not the groups)."""
    subs = getattr(command, "commands", {})
    if not subs:
        return [(path, command)]
    return [pair for name, sub in subs.items() for pair in _commands(sub, f"{path} {name}".strip())]


def _groups(command: Any, path: str = "") -> list[str]:
    """The path of ``command`` (``""`` for the root) and of every group under it."""
    subs = getattr(command, "commands", {})
    if not subs:
        return []
    return [path, *(g for name, sub in subs.items() for g in _groups(sub, f"{path} {name}"))]


COMMANDS = [path for path, _ in _commands(_root())]
GROUPS = [path.strip() for path in _groups(_root())]


def test_every_command_and_group_has_examples() -> None:
    assert sorted(EXAMPLES) == sorted(COMMANDS + GROUPS)
    assert {"", "deploy", "cache", "eval"} <= set(GROUPS)


@pytest.mark.parametrize("path", GROUPS)
def test_a_group_help_ends_with_examples_of_its_commands(
    cli: Callable[..., Any], path: str
) -> None:
    result = cli(*path.split(), "-h")
    assert result.code == 0, result.text
    assert "Examples" in result.out and result.out.rindex("╰") < result.out.index("Examples")
    for example in EXAMPLES[path]:
        assert example.line in result.out and example.what in result.out
        owners = [c for c in COMMANDS if c.startswith(path) and example in EXAMPLES[c]]
        assert owners, f"{example.line!r} is no example of a command under {path!r}"


@pytest.mark.parametrize("path", COMMANDS)
def test_help_shows_the_examples_without_type_noise(cli: Callable[..., Any], path: str) -> None:
    words = path.split()
    result = cli(*words, "-h")
    assert result.code == 0, result.text
    assert "Examples" in result.out and result.out.rindex("╰") < result.out.index("Examples")
    for example in EXAMPLES[path]:
        assert example.line in result.out and example.what in result.out
    for noise in ("<bool>", "<str>", "<path>", "<int"):
        assert noise not in result.out
    assert cli("help", *words).out == cli(*words, "--help").out == result.out


@pytest.mark.parametrize("words", [[], ["deploy"], ["cache"]])
def test_the_root_and_the_groups_take_h_too(cli: Callable[..., Any], words: list[str]) -> None:
    result = cli(*words, "-h")
    assert result.code == 0 and "Usage: openenv" in result.out and "<bool>" not in result.out


def test_help_of_an_unknown_command_is_a_usage_error(cli: Callable[..., Any]) -> None:
    result = cli("help", "frobnicate")
    assert result.code == 2 and "No such command 'frobnicate'" in result.err


def test_a_short_flag_means_one_thing_everywhere() -> None:
    meanings: dict[str, set[str]] = {}
    for _, command in _commands(_root()):
        for param in command.params:
            shorts = [o for o in param.opts if not o.startswith("--")]
            longs = [o for o in param.opts if o.startswith("--")]
            for short in shorts:
                meanings.setdefault(short, set()).update(longs)
    clashes = {s: ls for s, ls in meanings.items() if len(ls) > 1 and ls != SYNONYMS.get(s)}
    assert clashes == {}
    assert meanings["-r"] == {"--repo-id"} and meanings["-n"] == {"--episodes"}


def test_arguments_are_named_alike() -> None:
    names = {
        param.metavar or param.name.upper()
        for _, command in _commands(_root())
        for param in command.params
        if param.param_type_name == "argument"
    }
    assert names <= ARGUMENT_NAMES, names - ARGUMENT_NAMES


def test_push_has_private_and_public(cli: Callable[..., Any]) -> None:
    out = cli("push", "-h").out
    assert "--private" in out and "--public" in out


POLICY = """def act(observation):
    return {"message": "hello"}
"""
EXAMPLE_CASES = [
    pytest.param(path, example, id=f"{path}: {example.line}")
    for path in COMMANDS
    for example in EXAMPLES[path]
]


@pytest.mark.parametrize(("path", "example"), EXAMPLE_CASES)
def test_each_example_runs_or_says_what_it_needs(
    request: pytest.FixtureRequest,
    cli: Callable[..., Any],
    rendered_env: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    path: str,
    example: Example,
) -> None:
    if example.needs not in ("", HUB, SERVES):
        pytest.skip(f"needs {example.needs}")
    if path != "init":  # the others run where 'openenv init my_env' ran
        shutil.copytree(rendered_env, tmp_path / "my_env")
    (tmp_path / "my_policy.py").write_text(POLICY, encoding="utf-8")
    (tmp_path / "guess.py").write_text(doc_block("README.md", "write an environment").code)
    if example.needs == SERVES:
        _serves(example, tmp_path / example.cwd)
        return
    monkeypatch.chdir(tmp_path / example.cwd)
    if path.startswith("cache"):
        monkeypatch.setenv("OPENENV_HUB_CACHE", str(tmp_path / "cache"))
    line = example.line
    if example.needs == HUB:
        line = _on_local_hub(request, path, line)
    try:
        result = cli(*shlex.split(line)[1:])
    finally:
        sys.modules.pop("my_policy", None)  # imported from this test's folder only
    assert result.code == 0, result.text
    assert "Traceback" not in result.text and "Error" not in result.err


def _serves(example: Example, cwd: Path) -> None:
    """Start the example (on a free port), see it answer /health, stop it."""
    from serving import free_port

    from openenv_hub.runtimes.local import LocalProcessProvider
    from openenv_hub.transport.local_ports import wait_for_health

    args, port = shlex.split(example.line)[1:], str(free_port())
    if "--port" in args:
        args[args.index("--port") + 1] = port
    else:
        args += ["--port", port]
    log = tempfile.TemporaryFile()  # noqa: SIM115 - closed by stop()
    command = [sys.executable, "-m", "openenv_hub_cli.main", *args]
    process = subprocess.Popen(command, cwd=cwd, stdout=log, stderr=log)
    server = LocalProcessProvider(process, f"http://127.0.0.1:{port}", log)
    try:
        try:
            wait_for_health(server.base_url, timeout_s=120, alive=server.running)
        except Exception:
            raise AssertionError(
                f"{example.line} did not serve:\n{server.output()[-3000:]}"
            ) from None
    finally:
        server.stop()


def _on_local_hub(request: pytest.FixtureRequest, path: str, line: str) -> str:
    """``line`` with YOUR_NAME as alice on LocalHub, its Spaces named afresh; for the commands
    that read a Space, the one it names pushed first (as ``openenv push --version 0.1.0``)."""
    from openenv_hub.hub import push

    request.getfixturevalue("hub_env").monkeypatch.setenv("API_KEY", "not-a-real-key")
    prefix = f"alice/{uuid.uuid4().hex[:8]}_"
    if path != "push":
        push("my_env", f"{prefix}my_env", version="0.1.0", bundle_wheel=False)
    return line.replace("YOUR_NAME/", prefix)
