"""Store locations that are URLs, and how to show them without their password.

Everything here is plain text work (no driver import), so a command can decide which
backend a store is, and print its location, without loading psycopg.

A location that starts like a URL (``word://`` or ``word:/``, the scheme in any case, as
RFC 3986 allows) is a URL: kidx never takes it for a folder, since a mistyped scheme
would otherwise become a folder whose path holds the password. A folder whose name
looks like that is written ``./word:/…``.
"""

from __future__ import annotations

import re

from kidx.errors import install_hint

POSTGRES_SCHEMES = ("postgresql", "postgres")
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]+):(/{1,2})")
_PASSWORD_IN_QUERY = re.compile(r"([?&]password=)([^&]*)", re.IGNORECASE)
INSTALL_HINT = install_hint("postgres")


def url_scheme(location: object) -> tuple[str, str] | None:
    """(scheme in lower case, the slashes after it) when ``location`` starts like a URL."""
    if not isinstance(location, str):
        return None
    match = _SCHEME.match(location)
    return (match.group(1).lower(), match.group(2)) if match else None


def is_postgres_url(location: object) -> bool:
    found = url_scheme(location)
    return found is not None and found[1] == "//" and found[0] in POSTGRES_SCHEMES


def _password_span(url: str) -> tuple[int, int] | None:
    """Where the password of ``scheme://user:password@host…`` is. A password may hold
    ``?``, ``#``, ``/`` and ``@`` unencoded: it runs from the first ``:`` after the
    scheme to the last ``@`` (masking a little too much beats printing a password)."""
    match = _SCHEME.match(url)
    if match is None:
        return None
    at = url.rfind("@")
    if at < match.end():
        return None
    colon = url.find(":", match.end(), at)
    return (colon + 1, at) if colon >= 0 else None


def masked(url: str) -> str:
    """The URL with any password replaced by ``***``: kidx never prints a password."""
    span = _password_span(url)
    if span is not None:
        url = url[: span[0]] + "***" + url[span[1]:]
    return _PASSWORD_IN_QUERY.sub(r"\1***", url)


def password_of(url: str) -> str | None:
    """The password written in the URL, if any (to scrub it from the driver's messages)."""
    from urllib.parse import unquote

    span = _password_span(url)
    if span is not None and span[1] > span[0]:
        return unquote(url[span[0]: span[1]])
    match = _PASSWORD_IN_QUERY.search(url)
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


def normalised(url: str) -> str:
    """The URL with its scheme in lower case (the driver reads only that spelling)."""
    found = url_scheme(url)
    return url if found is None else found[0] + url[len(found[0]):]


def refusal(location: str, known: tuple[str, ...]) -> str | None:
    """Why ``location``, which starts like a URL, is no store location kidx knows (None:
    it is one). ``known``: the URL schemes of the store backends."""
    found = url_scheme(location)
    if found is None:
        return None
    scheme, slashes = found
    shown = masked(location)
    folder = f"a folder of that name is written ./{location[: len(scheme)]}:…"
    if scheme in known:
        return None if slashes == "//" else f"{shown} is not a store URL: write {scheme}://… ({folder})"
    guess = _nearest(scheme, known)
    hint = f"; did you mean {guess}://?" if guess else ""
    return (f"unknown store URL scheme {location[: len(scheme)]!r} in {shown}: a store is a folder or a "
            f"{known[0]}:// URL{hint} ({folder})")


def _nearest(scheme: str, known: tuple[str, ...]) -> str | None:
    import difflib

    close = difflib.get_close_matches(scheme, known, n=1, cutoff=0.5)
    if close:
        return close[0]
    return known[0] if scheme.startswith("pg") or "sql" in scheme else None
