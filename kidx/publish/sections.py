"""Shard pages: the group families and the series, many to a page.

A store of 100,000 runs has some fifteen thousand group families and as many series
pages; a page each, with its chart and table as HTML, was most of a site's bytes and of
its files. So the families (``groups/``) and the series (``series/``) whose ids share
their first ``SECTION_SHARD`` hex digits share one page, ``groups/AB.html``: its HTML is
the site's frame and, for each section, an element whose id is the section's id (a
section's address is ``groups/AB.html#ID``) holding a link with its title; the sections
themselves (crumbs, chart, tables, the CLI command) are elements as data
(``kidx.publish.tree``) in the page's compressed data, which the site's script inflates
and builds, the one the address names, through ``createElement`` and ``textContent``.
Nothing is fetched, so the pages open from ``file://`` too.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from typing import NamedTuple, TypeVar

from markupsafe import Markup, escape

from kidx.publish.tree import Element, pack

SECTION_SHARD = 2  # hex digits: 256 pages of each kind at most
T = TypeVar("T")


class Section(NamedTuple):
    id: str  # hex digits
    title: str  # the page's title while it shows this section
    body: Element  # what the script draws
    data: dict | None = None  # the section's figures, as data (a group family's points)


def section_path(folder: str, section_id: str) -> str:
    """A section's address from the site's root: its shard page and its id as the anchor."""
    return f"{folder}/{section_id[:SECTION_SHARD]}.html#{section_id}"


def shard_jobs(site, folder: str, heading: str, items: Iterable[tuple[str, T]],
               section: Callable[[T], Section]) -> list[Callable[[], list[tuple[str, str]]]]:
    """A job (``workers``) per page: ``items`` (each a section's id and what ``section`` makes
    it from) in the order of their ids, those that share a page made into its sections when
    the job runs."""
    shards: dict[str, list[T]] = {}
    for section_id, item in items:
        shards.setdefault(section_id[:SECTION_SHARD], []).append(item)
    return [functools.partial(_shard_page, site, folder, heading, members, section) for members in shards.values()]


def _shard_page(site, folder: str, heading: str, members: list[T], section: Callable[[T], Section]
                ) -> list[tuple[str, str]]:
    return [_page(site, folder, heading, [section(member) for member in members])]


def _page(site, folder: str, heading: str, sections: list[Section]) -> tuple[str, str]:
    prefix = sections[0].id[:SECTION_SHARD]
    listing = "".join(f'<section class="shard" id="{escape(s.id)}"><p><a href="#{escape(s.id)}">{escape(s.title)}'
                      f'</a></p></section>\n' for s in sections)
    document = {s.id: {"title": s.title, "body": s.body, **({"data": s.data} if s.data is not None else {})}
                for s in sections}
    return site.page("sections.html", f"{folder}/{prefix}.html", heading=heading, prefix=prefix,
                     sections=Markup(listing), data=Markup(pack(document)))  # base64: nothing to escape
