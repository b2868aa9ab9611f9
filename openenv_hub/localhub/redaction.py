"""Credentials out of what LocalHub shows: its request log and the build arguments of Spaces.

A value whose name looks secret (``HF_TOKEN``, ``API_KEY``, ``password``, ``sig``...) is shown
as ``***``; any other value keeps everything but the ``user:password@`` of a URL in it.

Example:
    >>> redact_mapping({"BASE_IMAGE": "py:3.11", "HF_TOKEN": "hf_x"})
    {'BASE_IMAGE': 'py:3.11', 'HF_TOKEN': '***'}
    >>> redact_value("PIP_INDEX_URL", "https://me:pw@pypi.example/simple")
    'https://***@pypi.example/simple'
    >>> redact_query("token=hf_x&recursive=true")
    'token=%2A%2A%2A&recursive=true'

Layer: runtimes.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from urllib.parse import parse_qsl, urlencode

__all__ = ["HIDDEN", "redact_mapping", "redact_query", "redact_value"]

HIDDEN = "***"
_SECRET_NAME = re.compile(r"token|secret|passw|key|auth|credential|cookie|sig", re.IGNORECASE)
_URL_CREDENTIALS = re.compile(r"(?<=://)[^/@\s]+@")


def redact_value(name: str, value: str) -> str:
    """``value`` as it may be shown, given the ``name`` it goes by."""
    if _SECRET_NAME.search(name):
        return HIDDEN
    return _URL_CREDENTIALS.sub(f"{HIDDEN}@", value)


def redact_mapping(values: Mapping[str, str]) -> dict[str, str]:
    """Every value of ``values`` through :func:`redact_value`."""
    return {name: redact_value(name, value) for name, value in values.items()}


def redact_query(query: str) -> str:
    """A raw query string with its secret-looking parameters hidden."""
    if not query:
        return query
    pairs = parse_qsl(query, keep_blank_values=True)
    return urlencode([(name, redact_value(name, value)) for name, value in pairs])
