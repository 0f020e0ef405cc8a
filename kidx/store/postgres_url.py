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
# libpq's keyword/value connection strings (host=db dbname=team …): never a folder's name
_LIBPQ_KEYWORDS = ("host", "hostaddr", "port", "dbname", "user", "password", "passfile", "service", "sslmode",
                   "connect_timeout", "options", "application_name", "target_session_attrs", "sslcert", "sslkey",
                   "sslrootcert", "requiressl", "channel_binding", "gssencmode", "krbsrvname")
_KEYWORD_VALUE = re.compile(r"^\s*(?:" + "|".join(_LIBPQ_KEYWORDS) + r")\s*=", re.IGNORECASE)
_KEYWORD_PAIR = re.compile(r"(\w+)(\s*=\s*)('(?:[^'\\]|\\.)*'?|\S*)")
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
    if _KEYWORD_VALUE.match(url):  # password=… of a keyword/value string
        return _KEYWORD_PAIR.sub(lambda m: m.group(0) if m.group(1).lower() != "password"
                                 else m.group(1) + m.group(2) + "***", url)
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


def keyword_value_refusal(location: str) -> str | None:
    """Why ``location`` is refused when it is a libpq keyword/value connection string
    (``host=db dbname=team user=kidx password=…``), which would otherwise be taken for a
    folder's path (named with the password); None when it is not one."""
    if not _KEYWORD_VALUE.match(location):
        return None
    pairs = {m.group(1).lower(): m.group(3).strip("'") for m in _KEYWORD_PAIR.finditer(location)}
    user = pairs.get("user", "")
    credentials = (user + (":***" if "password" in pairs else "") + "@") if user else ""
    host, port = pairs.get("host", ""), (":" + pairs["port"] if "port" in pairs else "")
    if host.startswith("/"):  # a socket folder goes in the query
        suggestion = (f"postgresql://{credentials}/{pairs.get('dbname', '')}?host={host}"
                      + (f"&port={port[1:]}" if port else ""))
    else:
        suggestion = f"postgresql://{credentials}{host}{port}/{pairs.get('dbname', '')}"
    return (f"{masked(location)!r} is a PostgreSQL keyword/value connection string, not a store location: "
            f"write it as a URL, {suggestion}")


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
