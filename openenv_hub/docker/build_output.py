"""A ``docker build``'s output as a report may show it: the step under way, the end of that
step's output, and no secret.

The legacy builder prints ``Step 5/9 : RUN ...`` before each step, then the step's own output
among lines of its own (`` ---> Running in ...``, ``Removing intermediate container ...``),
and, when the step fails, the builder's error (``The command ... returned a non-zero code: 3``).
:class:`BuildOutput` reads those lines as they come and keeps the last step's header and the
last :data:`STEP_LINES` lines since it, without the builder's own chatter or colour codes, each
line cut at :data:`LINE_CHARS` characters. What it keeps and what it passes on hides the value
of every build argument whose name looks secret (``HF_TOKEN``, ``PIP_PASSWORD``, ...) and the
``user:password@`` of any URL.

Layer: services.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Sequence

from openenv_hub.shown_urls import hide_url_credentials

__all__ = [
    "HIDDEN",
    "LINE_CHARS",
    "MIN_SECRET_CHARS",
    "SECRET_NAME",
    "STEP_LINES",
    "BuildOutput",
    "secret_values",
]

STEP_LINES = 20
LINE_CHARS = 400
HIDDEN = "***"
MIN_SECRET_CHARS = 4
#: A name whose value is never shown: a build argument, a variable, a query parameter.
SECRET_NAME = re.compile(r"token|secret|passw|key|auth|credential|cookie|sig", re.IGNORECASE)

_STEP = re.compile(r"^Step (\d+/\d+ : .*)$")
_COLOUR = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_BUILDER_CHATTER = re.compile(
    r"^( ---> |Removing intermediate container |Sending build context to Docker daemon"
    r"|DEPRECATED: The legacy builder is deprecated|\s+BuildKit is currently disabled"
    r"|\s+environment-variable\.$)"
)
_STEP_FAILED = re.compile(r"^The command .* returned a non-zero code: \d+$")
# The engine lost an image the build had made (something removed or pruned images meanwhile).
_IMAGE_LOST = re.compile(
    r"^(No such image: sha256:|unknown parent image ID sha256:|failed to get digest sha256:)"
)


def secret_values(build_args: Sequence[str]) -> list[str]:
    """The values of the ``NAME=VALUE`` build arguments whose name looks secret, longest first
    (so that a value inside another is hidden with it). A value of fewer than
    :data:`MIN_SECRET_CHARS` characters is a switch (``USE_AUTH=1``), not a secret: hidden, it
    would hide every ``1`` of the output."""
    values = []
    for arg in build_args:
        name, equals, value = arg.partition("=")
        if equals and len(value) >= MIN_SECRET_CHARS and SECRET_NAME.search(name):
            values.append(value)
    return sorted(set(values), key=len, reverse=True)


class BuildOutput:
    """The lines of one ``docker build``, read as they come.

    Args:
        build_args: The ``NAME=VALUE`` build arguments of the build (their secret values are
            hidden).
        keep: Lines of the step under way kept.
    """

    def __init__(self, *, build_args: Sequence[str] = (), keep: int = STEP_LINES) -> None:
        self._secrets = secret_values(build_args)
        self.step: str | None = None  # "5/9 : RUN make", once a step has started
        self.lines: deque[str] = deque(maxlen=keep)  # the step's last lines (or the build's)

    def add(self, line: str) -> str:
        """Read ``line``; return it as it may be shown (secrets hidden, colours kept)."""
        text = _COLOUR.sub("", line).rstrip()
        step = _STEP.match(text)  # read before hiding: a hidden value may be in "Step 1/12"
        if step:
            self.step = _cut(self.redact(step.group(1)))
            self.lines.clear()
        elif text.strip() and not _BUILDER_CHATTER.match(text):
            self.lines.append(_cut(self.redact(text)))
        return self.redact(line)

    def redact(self, text: str) -> str:
        """``text`` with the secret build argument values and URL passwords hidden."""
        for secret in self._secrets:
            text = text.replace(secret, HIDDEN)
        return hide_url_credentials(text)

    @property
    def instruction(self) -> str:
        """The failing step's instruction (``FROM``, ``RUN``, ...), or ``""`` before any step."""
        if self.step is None:
            return ""
        words = self.step.partition(" : ")[2].split(maxsplit=1)
        return words[0].upper() if words else ""

    @property
    def why(self) -> str:
        """The step's last line of its own output (else the builder's error), or ``""``."""
        own = [line for line in self.lines if not _STEP_FAILED.match(line)]
        return (own or list(self.lines) or [""])[-1]

    @property
    def lost_an_image(self) -> bool:
        """Whether the build stopped because an image it had made was removed while it ran
        (another process removed or pruned the engine's images): not the Dockerfile's doing."""
        return any(_IMAGE_LOST.match(line) for line in self.lines)

    def failure(self) -> str:
        """Where the build stopped and the end of the output there, on lines of their own."""
        where = f"at step {self.step}" if self.step else "before its first step"
        ends = "\n".join(self.lines) if self.lines else "(no output)"
        return f"{where}. Its output there ends with:\n{ends}"


def _cut(text: str) -> str:
    return text if len(text) <= LINE_CHARS else text[: LINE_CHARS - 1] + "…"
