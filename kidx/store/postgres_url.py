"""Store locations that are PostgreSQL URLs, and how to show them without their password.

Everything here is plain text work (no driver import), so a command can decide which
backend a store is, and print its location, without loading psycopg.
"""

from __future__ import annotations

import re

_SCHEMES = ("postgresql://", "postgres://")
_PASSWORD_IN_AUTHORITY = re.compile(r"^(postgres(?:ql)?://[^:@/?#]*:)([^@/?#]*)(@)", re.IGNORECASE)
_PASSWORD_IN_QUERY = re.compile(r"([?&]password=)([^&#]*)", re.IGNORECASE)
INSTALL_HINT = "pip install 'kidx[postgres]'"


def is_postgres_url(location: object) -> bool:
    return isinstance(location, str) and location.lower().startswith(_SCHEMES)


def masked(url: str) -> str:
    """The URL with any password replaced by ``***``: kidx never prints a password."""
    url = _PASSWORD_IN_AUTHORITY.sub(r"\1***\3", url)
    return _PASSWORD_IN_QUERY.sub(r"\1***", url)


def password_of(url: str) -> str | None:
    """The password written in the URL, if any (to scrub it from the driver's messages)."""
    from urllib.parse import unquote

    for pattern in (_PASSWORD_IN_AUTHORITY, _PASSWORD_IN_QUERY):
        match = pattern.search(url)
        if match and match.group(2):
            return unquote(match.group(2))
    return None


def scrubbed(message: str, url: str) -> str:
    """A driver message with the URL's password (raw or decoded) masked wherever it appears."""
    from urllib.parse import quote

    password = password_of(url)
    message = message.replace(url, masked(url))
    if password:
        for spelling in {password, quote(password, safe="")}:
            message = message.replace(spelling, "***")
    return message
