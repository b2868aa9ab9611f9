"""URLs as messages and logs may show them: never with the ``user:password@`` they may carry.

A server's URL can hold credentials (``ws://alice:s3cret@host/`` is sent as an HTTP basic
``Authorization`` header), and errors and log lines name the server they are about. They name it
through :func:`shown`, which keeps everything but the credentials.

Example:
    >>> shown("http://alice:s3cret@127.0.0.1:8000/ws")
    'http://***@127.0.0.1:8000/ws'
    >>> shown("127.0.0.1:8000")
    '127.0.0.1:8000'
    >>> hide_credentials("cannot reach alice:s3cret@host", "ws://alice:s3cret@host")
    'cannot reach ***@host'
    >>> hide_url_credentials("pip: fetching https://me:pw@pypi.example/simple")
    'pip: fetching https://***@pypi.example/simple'

Layer: core.
"""

from __future__ import annotations

import re

__all__ = ["hide_credentials", "hide_url_credentials", "shown"]

_URL_CREDENTIALS = re.compile(r"(?<=://)[^/\s]*@")  # to the last @: a password may hold one


def _credentials(url: str) -> str:
    """The ``user:password`` part of ``url``'s authority, or ``""``."""
    rest = url.partition("://")[2] or url
    authority = rest.split("/", 1)[0].split("?", 1)[0].split("#", 1)[0]
    return authority.rpartition("@")[0]


def shown(url: str) -> str:
    """``url`` with its credentials replaced by ``***`` (the rest as given)."""
    return hide_credentials(url, url)


def hide_credentials(text: str, url: str) -> str:
    """``text`` (a message about ``url``) with ``url``'s credentials replaced by ``***``."""
    credentials = _credentials(url)
    return text.replace(f"{credentials}@", "***@") if credentials else text


def hide_url_credentials(text: str) -> str:
    """``text`` (a log line, a tool's output) with the credentials of every URL in it replaced
    by ``***``."""
    return _URL_CREDENTIALS.sub("***@", text)
