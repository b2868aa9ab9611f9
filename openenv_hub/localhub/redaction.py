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

from collections.abc import Mapping
from urllib.parse import parse_qsl, urlencode

from openenv_hub.docker.build_output import HIDDEN, SECRET_NAME
from openenv_hub.shown_urls import hide_url_credentials

__all__ = ["HIDDEN", "redact_mapping", "redact_query", "redact_value"]


def redact_value(name: str, value: str) -> str:
    """``value`` as it may be shown, given the ``name`` it goes by."""
    if SECRET_NAME.search(name):
        return HIDDEN
    return hide_url_credentials(value)


def redact_mapping(values: Mapping[str, str]) -> dict[str, str]:
    """Every value of ``values`` through :func:`redact_value`."""
    return {name: redact_value(name, value) for name, value in values.items()}


def redact_query(query: str) -> str:
    """A raw query string with its secret-looking parameters hidden."""
    if not query:
        return query
    pairs = parse_qsl(query, keep_blank_values=True)
    return urlencode([(name, redact_value(name, value)) for name, value in pairs])
