"""A failed ``docker build`` reported short: the step that failed and the end of its output,
without the builder's chatter, colour codes or any secret (read from the legacy builder's lines,
as ``docker build`` printed them on this machine's engine)."""

from __future__ import annotations

import pytest

from openenv_hub.docker.build_output import LINE_CHARS, STEP_LINES, BuildOutput
from openenv_hub.shown_urls import hide_url_credentials

FAILED_RUN = """\
DEPRECATED: The legacy builder is deprecated and will be removed in a future release.
            BuildKit is currently disabled; enable it by removing the DOCKER_BUILDKIT=0
            environment-variable.

Sending build context to Docker daemon  2.048kB
Step 1/6 : ARG BASE_IMAGE
Step 2/6 : FROM ${BASE_IMAGE}
 ---> b0cf2ceedcff
Step 3/6 : ARG TOKEN
 ---> Running in e27f969126fa
Removing intermediate container e27f969126fa
 ---> c16af2c84773
Step 4/6 : RUN echo preparing
 ---> Running in 5862c52f174b
preparing
Removing intermediate container 5862c52f174b
 ---> 6f27f43f1704
Step 5/6 : RUN ./fetch.sh
 ---> Running in 4526471b27ce
fetching https://alice:pip-pw@pypi.example/simple with token hf_abc123
\x1b[91mthe widget factory is out of sprockets
\x1b[0mThe command '/bin/sh -c ./fetch.sh' returned a non-zero code: 3
"""


def read(text: str, build_args: list[str]) -> tuple[BuildOutput, list[str]]:
    output = BuildOutput(build_args=build_args)
    shown = [output.add(line) for line in text.splitlines(keepends=True)]
    return output, shown


def test_the_failed_step_and_its_own_lines_are_kept_without_secrets() -> None:
    output, shown = read(FAILED_RUN, ["BASE_IMAGE=base:1", "HF_TOKEN=hf_abc123", "MODE=fast"])
    assert output.step == "5/6 : RUN ./fetch.sh" and output.instruction == "RUN"
    assert list(output.lines) == [
        "fetching https://***@pypi.example/simple with token ***",
        "the widget factory is out of sprockets",
        "The command '/bin/sh -c ./fetch.sh' returned a non-zero code: 3",
    ]
    assert output.why == "the widget factory is out of sprockets"  # not the builder's line
    assert output.failure() == (
        "at step 5/6 : RUN ./fetch.sh. Its output there ends with:\n" + "\n".join(output.lines)
    )
    printed = "".join(shown)  # what a build that is not quiet prints, as docker printed it
    assert "hf_abc123" not in printed and "pip-pw" not in printed
    assert "\x1b[91mthe widget factory" in printed and "Step 4/6 : RUN echo" in printed


def test_a_secret_in_a_step_header_is_hidden_and_the_step_still_read() -> None:
    output, shown = read("Step 12/12 : RUN ./publish 1212\npublished with 1212\n", ["API_KEY=1212"])
    assert output.step == "12/12 : RUN ./publish ***" and output.instruction == "RUN"
    assert list(output.lines) == ["published with ***"] and "1212" not in "".join(shown)


def test_a_step_keeps_its_last_lines_each_cut_to_a_bound() -> None:
    long_step = "Step 1/1 : RUN make\n" + "".join(f"line {n}\n" for n in range(100))
    output, _ = read(long_step + "x" * 5000 + "\n", [])
    assert len(output.lines) == STEP_LINES
    assert output.lines[0] == f"line {100 - STEP_LINES + 1}"
    assert len(output.lines[-1]) == LINE_CHARS and output.lines[-1].endswith("…")


def test_a_failure_before_any_step_keeps_the_builders_error() -> None:
    output, _ = read(
        "Sending build context to Docker daemon  2.048kB\n"
        "Error response from daemon: dockerfile parse error line 3: unknown instruction: RUNN\n",
        [],
    )
    assert (output.step, output.instruction) == (None, "")
    assert output.failure() == (
        "before its first step. Its output there ends with:\n"
        "Error response from daemon: dockerfile parse error line 3: unknown instruction: RUNN"
    )


@pytest.mark.parametrize(
    ("arg", "hidden"),
    [
        ("PIP_PASSWORD=hunter2", True),
        ("api_key=k-123", True),
        ("GITHUB_AUTH=ghp_x", True),
        ("WITH_STOCKFISH=false", False),  # not a secret: "false" stays readable everywhere
        ("USE_AUTH=1", False),  # a switch: hidden, every "1" of the output would go
        ("NOVALUE", False),
    ],
)
def test_only_build_arguments_named_like_secrets_are_hidden(arg: str, hidden: bool) -> None:
    value = arg.partition("=")[2] or arg
    output, _ = read(f"Step 1/1 : RUN x\nsaw {value}\n", [arg])
    assert (value not in output.lines[-1]) is hidden, output.lines[-1]


def test_every_url_in_a_line_loses_its_credentials() -> None:
    line = "from https://u:p@ss@a.example/x and git+http://tok@b.example, mail a@b.example"
    assert hide_url_credentials(line) == (
        "from https://***@a.example/x and git+http://***@b.example, mail a@b.example"
    )


@pytest.mark.parametrize(
    "error",
    [
        "No such image: sha256:7e1be6c293ec4c773bb4f3904f914c4884a3d0fe37e7806791f503de554b0c90",
        "unknown parent image ID sha256:99b72189bcc7a514c793a15bb2ae8708713639a38d549fc19cd43345811fe051",
        "failed to get digest sha256:9dd83329f5ac: open /var/lib/docker/image/overlay2/imagedb/"
        "content/sha256/9dd83329f5ac: no such file or directory",
    ],
)
def test_an_image_removed_under_the_build_is_told_from_a_failed_step(error: str) -> None:
    """What the engine said when another process pruned its images during a build (seen on a
    shared engine): the build's own steps did nothing wrong."""
    lost, _ = read(f"Step 9/12 : USER 1000\n ---> Running in b2dd67397a5a\n{error}\n", [])
    assert lost.lost_an_image and lost.why == error
    failed, _ = read(FAILED_RUN, [])
    assert not failed.lost_an_image
