"""The storage boundary: what every store backend implements, and the typed queries it answers.

Everything above ``kidx/store/`` talks to a store through ``kidx.store.store.Store`` and
the types defined here; no SQL, driver or file layout leaks out. A backend is two parts:

- a **catalog** (``Catalog`` below): which object each (kind, name) currently is, with
  its metadata, labels, references and every revision it has had;
- an **object backend** (``kidx.store.objects.ObjectBackend``): the immutable canonical
  bytes of each object, keyed by digest. ``ObjectDB`` wraps one (digest checks,
  verification), as dvc-objects' ``ObjectDB(fs, path)`` wraps a filesystem.

``StoreBackend`` (below) bundles the two for ``Store``. Backends today: SQLite + object
files (``kidx.store.sqlite_catalog``, a folder). ``kidx.store.store.BACKENDS`` maps a
location's URL scheme (``postgresql://…``) to the module providing another one.

Contract of a catalog
---------------------
Reads (``get``, ``get_many``, ``list``, ``kinds_present``, ``digests_present``,
``referrer_counts``, ``referrer_names``, ``revisions``, ``label_keys``, ``label_values``)
may be called at any time; between ``begin_read()`` and
``rollback()`` they all see one consistent snapshot. A catalog opened for reading never
writes anything (no schema creation, no migration); a store that does not exist reads as
empty.

``list(query)`` answers a ``CatalogQuery`` exactly, compiled by the backend itself:
kind, exact names/digests, name and digest prefixes, label requirements (kubernetes
semantics: ``!=``/``notin``/``!`` also match objects without the key; ``gt``/``lt`` only
values that parse as int64), ``metadata.name``/``metadata.title`` field conditions,
reference conditions and reference-following conditions, ordered by name (``order``) or
most recently applied first (``RECENT``), and cut at ``limit``. Conditions on the
object's own ``spec`` are answered only by a backend whose ``answers_spec_fields`` is
True; otherwise ``Store.select`` removes them from the query and checks them on the
objects themselves.

Writes happen only inside ``begin_write()`` … ``commit()`` (or ``rollback()``), which
``Store.write()`` drives; operations never call these directly. ``begin_write`` takes the
store-wide write lock (writers serialise; readers never wait for them); ``commit`` makes
everything since ``begin_write`` durable at once, ``rollback`` (or a crash) discards it
all. ``put_many`` creates or replaces names and appends one ``applied`` revision each;
``delete`` removes a name and appends a ``deleted`` revision. Revisions are append-only
and never rewritten. ``generation`` and ``created`` are decided by the caller.

Durability order: ``Store.write()`` flushes the object backend (``ObjectDB.flush``)
before ``Catalog.commit``, so a committed name never points at an object that a crash
could lose. A backend whose objects live in the catalog's own database writes them in
the catalog's transaction (its ``open_catalog`` hands the connection to its object
backend) and may make ``flush`` a no-op.

Errors: every method raises only ``kidx.errors`` types: ``StoreBusy`` when the write
lock (or a lock needed to open the store) could not be had within the backend's
timeout, ``StoreError`` for anything else wrong with the store (unreachable, corrupt,
refused). Driver exceptions never escape.
"""

from __future__ import annotations

import builtins
import json
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping, Sequence

from kidx.errors import StoreError
from kidx.records import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from typing import Protocol

    from kidx.store.objects import ObjectDB


class Entry(NamedTuple):
    """A name's current state in the catalog."""

    kind: str
    name: str
    digest: str
    title: str | None
    labels: dict[str, str]
    annotations: dict[str, str]
    created: str
    generation: int
    id: int | None = None  # the backend's key for the row; None for a name not stored yet
    columns: str | None = None  # cached printer-column values (kidx.store.column_cache)

    def same_metadata(self, title, labels, annotations) -> bool:
        return self.title == title and self.labels == labels and self.annotations == annotations


class Revision(NamedTuple):
    kind: str
    name: str
    revision: int  # 1, 2, … in the order recorded
    event: str  # "applied" or "deleted"
    digest: str | None
    title: str | None
    labels: dict[str, str]
    annotations: dict[str, str]
    generation: int | None
    recorded: str = ""


class Change(NamedTuple):
    """One name to create or replace in ``put_many``.

    ``references``: (field, target digest) of each reference field the spec holds.
    ``spec``: the object's spec when its kind is one that references point at (Workload,
    Implementation, …), so the backend can index its scalar leaves for reference-following
    selection; None for other kinds.
    """

    entry: Entry
    references: Sequence[tuple[str, str]]
    spec: dict | None = None


# --- typed queries ----------------------------------------------------------------------

# CatalogQuery.order: the most recently applied name first, in the order the catalog added
# the names (its row key: SQLite's objects.id, PostgreSQL's entries.id). A name applied
# again (a new digest or new metadata) keeps its place; one deleted and applied again
# takes a new one, after every name present then.
RECENT = "recent"


if TYPE_CHECKING:  # a type for the checker only: at run time any object with these fields is one

    class LabelRequirement(Protocol):
        """One label requirement; ``kidx.query.label_selector.Requirement`` is one.

        ``operator`` is one of ``=``, ``!=``, ``in``, ``notin``, ``exists``, ``!``, ``gt``,
        ``lt``; ``values`` holds one value for ``=``/``!=``/``gt``/``lt``, none for
        ``exists``/``!``.
        """

        key: str
        operator: str
        values: tuple[str, ...]


class FieldCondition(NamedTuple):
    """``path = value`` or ``path != value`` on the object's own manifest.

    ``path`` starts with ``metadata`` (``name``, ``title``) or ``spec``. As with kubernetes
    field selectors, an absent field reads as ""; a mapping or list equals no value;
    numbers and booleans read as their JSON text (``16384``, ``true``).
    """

    path: tuple[str, ...]
    operator: str  # "=" or "!="
    value: str


class ReferenceCondition(NamedTuple):
    """The object refers (through ``field``, or any reference field when None) to

    - one of ``digests``; or
    - a digest starting with ``sha256:`` + ``digest_prefix``; or
    - a current object of ``target_kind`` whose labels satisfy ``target_labels``.
    Exactly one of the three forms is given.
    """

    digests: tuple[str, ...] = ()
    digest_prefix: str | None = None
    target_kind: str | None = None
    target_labels: tuple = ()  # LabelRequirement…
    field: str | None = None


class ReferencedFieldCondition(NamedTuple):
    """A condition on a field of the object a reference field points at.

    ``field`` is the reference field (``workloadDigest``), ``target_kind`` the kind it
    points at (``Workload``), ``path`` a path in that object's manifest:
    ``("spec", "parameters", "seq")`` or ``("metadata", "name")`` (any current name of
    the target digest). Read as FieldCondition reads, except that a mapping or list reads
    as absent; an object without the reference, or whose target is not in the store,
    reads the field as "". ``spec`` fields are those of the object stored under the
    target digest, whether or not a name points at it now; ``metadata`` fields are
    those of its current names of ``target_kind`` (``=`` holds when any name matches).
    A backend should index what this needs (SQLite: ``spec_leaves``) rather than read
    objects per row; ``Change.spec`` hands it the specs of the kinds references point at.
    """

    field: str
    target_kind: str
    path: tuple[str, ...]
    operator: str  # "=" or "!="
    value: str


class CatalogQuery(NamedTuple):
    """What ``Catalog.list`` selects; every given part must hold (AND)."""

    kind: str | None = None  # None: every kind
    names: tuple[str, ...] | None = None
    name_prefix: str | None = None
    digests: tuple[str, ...] | None = None
    digest_prefix: str | None = None  # hex digits after "sha256:"
    labels: tuple = ()  # LabelRequirement…
    fields: tuple[FieldCondition, ...] = ()
    references: tuple[ReferenceCondition, ...] = ()
    referenced_fields: tuple[ReferencedFieldCondition, ...] = ()
    order: str = "name"  # "name", "kind,name" (kind first), or RECENT
    limit: int | None = None
    # False when what reads the entries needs no annotations (a table of the CRD's
    # columns): each entry's annotations then read as {}, never to be written back
    annotations: bool = True
    # False when it needs no labels either (a table that shows none): a backend may then
    # read each entry's labels as {}, never to be written back (the SQLite catalog does,
    # except where label conditions are checked on the rows)
    read_labels: bool = True
    # False when it reads no reference among the cached printer columns (a table that
    # shows no reference column): a backend may then leave those values out (null) rather
    # than look up the digests its packed columns hold (the SQLite catalog does)
    column_references: bool = True


# --- shared semantics, so every backend reads values alike ------------------------------


def scalar_text(value: object) -> str | None:
    """A field's text for comparison; None for mappings and lists, which equal nothing."""
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    if isinstance(value, (bool, int, float)):
        return json.dumps(value)  # true / 3 / 0.5, as in the stored JSON
    return None


def field_text(obj: Mapping, path: Sequence[str]) -> str | None:
    """Follow ``path`` into a manifest; a path that cannot be followed reads as ""."""
    node: object = obj
    for segment in path:
        if not isinstance(node, dict):
            return ""
        node = node.get(segment)
        if node is None:
            return ""
    return scalar_text(node)


def decoded_together(texts: Sequence[str]) -> list | None:
    """The JSON values of many texts, decoded as one array (a decoder call per text costs
    more than the decoding in a long listing); None when that fails or gives another
    count than one value a text (a damaged ``{},{}`` would shift the rest), for the
    caller to read each alone and raise its own error."""
    try:
        values = json.loads("[" + ",".join(texts) + "]") if texts else []
    except ValueError:
        return None
    return values if len(values) == len(texts) else None


def condition_holds(condition, text: str | None) -> bool:
    equal = text == condition.value
    return equal if condition.operator == "=" else not equal


def scalar_leaves(spec: Mapping, prefix: str = "spec") -> Iterable[tuple[str, str]]:
    """(dotted path, text) of every scalar reachable through mappings: what a backend
    indexes for reference-following selection (lists are not descended into)."""
    for key, value in spec.items():
        path = f"{prefix}.{key}"
        if isinstance(value, dict):
            yield from scalar_leaves(value, path)
        elif not isinstance(value, list):
            text = scalar_text(value)
            if text is not None:
                yield path, text


def _int64(text: str) -> int | None:
    try:
        number = int(text, 10)
    except ValueError:
        return None
    if text.strip() != text or not -(2**63) <= number <= 2**63 - 1:
        return None
    return number


def label_holds(requirement: LabelRequirement, labels: Mapping[str, str]) -> bool:
    """Kubernetes label-selector semantics for one requirement."""
    operator, value = requirement.operator, labels.get(requirement.key)
    if operator in ("=", "in"):
        return value is not None and value in requirement.values
    if operator in ("!=", "notin"):
        return value is None or value not in requirement.values
    if operator == "exists":
        return value is not None
    if operator == "!":
        return value is None
    bound = _int64(requirement.values[0]) if len(requirement.values) == 1 else None
    number = None if value is None else _int64(value)
    if bound is None or number is None:
        return False
    return number > bound if operator == "gt" else number < bound


# --- the interfaces ---------------------------------------------------------------------


class Catalog(ABC):
    """The catalog half of a backend; see the module docstring for the contract."""

    #: True when ``list`` answers FieldConditions on ``spec`` itself (else Store does).
    answers_spec_fields: bool = False

    # transactions (driven by Store only)
    @abstractmethod
    def begin_read(self) -> None: ...

    @abstractmethod
    def begin_write(self) -> None: ...

    @abstractmethod
    def commit(self) -> None: ...

    @abstractmethod
    def rollback(self) -> None: ...

    @abstractmethod
    def close(self) -> None: ...

    # reads
    @abstractmethod
    def get(self, kind: str, name: str) -> Entry | None: ...

    @abstractmethod
    def get_many(self, kind: str, names: Iterable[str]) -> dict[str, Entry]: ...

    @abstractmethod
    def list(self, query: CatalogQuery) -> list[Entry]: ...

    @abstractmethod
    def kinds_present(self) -> set[str]: ...

    @abstractmethod
    def digests_present(self, digests: Iterable[str]) -> set[str]:
        """Which of ``digests`` some current name has."""

    @abstractmethod
    def referrer_counts(self, digest: str) -> builtins.list[tuple[str, int]]:
        """(kind, number of current objects referring to ``digest``), by kind."""

    @abstractmethod
    def referrer_names(self, digest: str, kind: str, limit: int) -> builtins.list[str]:
        """The first ``limit`` names (in name order) of ``kind`` referring to ``digest``."""

    @abstractmethod
    def revisions(self, kind: str, name: str) -> builtins.list[Revision]:
        """Every revision of a name, oldest first, numbered from 1; [] if it never existed."""

    @abstractmethod
    def names_with_history(self, kind: str) -> builtins.list[str]:
        """Every name of ``kind`` that has revisions (deleted ones too), sorted."""

    @abstractmethod
    def label_keys(self, prefix: str = "") -> builtins.list[str]:
        """Distinct label keys of current objects starting with ``prefix``, sorted."""

    @abstractmethod
    def label_values(self, key: str, prefix: str = "") -> builtins.list[str]:
        """Distinct values of label ``key`` starting with ``prefix``, sorted."""

    # writes (between begin_write and commit)
    @abstractmethod
    def put_many(self, changes: Sequence[Change], now: str) -> None: ...

    @abstractmethod
    def delete(self, entry: Entry, now: str) -> None: ...

    # maintenance: fsck, gc, export and restore (kidx.operations.maintain.fsck/gc/export). A backend
    # that does not provide one of these makes that command say so, nothing else.
    def all_entries(self) -> Iterable[Entry]:
        """Every current name, ordered by kind and name."""
        return self.list(CatalogQuery(order="kind,name"))

    def all_revisions(self) -> Iterable[Revision]:
        """Every revision of every name in the order recorded, numbered per name."""
        raise self._unsupported("reading every revision")

    def index_rows(self) -> tuple[dict[tuple[str, str], tuple[dict[str, str], set[tuple[str, str]]]], int, int]:
        """What the label and reference indexes hold: per current (kind, name) its indexed
        labels and (field, target) pairs; then how many label and reference rows belong to
        no current name."""
        raise self._unsupported("checking indexes")

    def integrity_problems(self) -> builtins.list[str]:
        """What the database's own consistency check reports; [] when sound."""
        return []

    def rebuild_indexes(self) -> None:  # noqa: B027  (an optional hook: a no-op where the database has no indexes)
        """Rebuild the database's own indexes from its tables (repair)."""

    def reindex(self, change: Change) -> None:
        """Rewrite one existing name's label and reference rows and cached columns (repair:
        no revision is recorded)."""
        raise self._unsupported("repairing indexes")

    def drop_stray_index_rows(self) -> None:
        """Remove label and reference rows that belong to no current name (repair)."""
        raise self._unsupported("repairing indexes")

    def restore(self, changes: Sequence[Change], revisions: Sequence[Revision]) -> None:
        """Insert names and revisions exactly as given (restore from a bundle): times,
        generations and creation times are kept; ``Revision.revision`` is ignored, the
        order given is the order recorded."""
        raise self._unsupported("restoring a bundle")

    def _unsupported(self, what: str) -> StoreError:
        return StoreError(f"this store's backend does not support {what}")

    # derived reads, in terms of list(); a backend may answer them faster
    def by_digest(self, digest: str) -> builtins.list[Entry]:
        return self.list(CatalogQuery(digests=(digest,), order="kind,name"))

    def by_digests(self, digests: Iterable[str], kind: str | None = None) -> dict[str, builtins.list[Entry]]:
        """Current names of many digests at once (custom columns through references)."""
        found: dict[str, list[Entry]] = {}
        wanted = tuple(dict.fromkeys(digests))
        if wanted:
            for entry in self.list(CatalogQuery(kind=kind, digests=wanted, order="kind,name")):
                found.setdefault(entry.digest, []).append(entry)
        return found

    def by_digest_prefix(self, prefix: str, kind: str | None = None) -> builtins.list[Entry]:
        """Current objects whose digest starts with ``sha256:<prefix>``."""
        return self.list(CatalogQuery(kind=kind, digest_prefix=prefix, order="kind,name"))

    def with_name_prefix(self, kind: str, prefix: str) -> builtins.list[Entry]:
        return self.list(CatalogQuery(kind=kind, name_prefix=prefix))


class StoreBackend(ABC):
    """A catalog and an object database that live together (one location)."""

    #: where the store is, as shown in messages (a folder, a URL without its password)
    location: str
    #: the object database
    objects: ObjectDB

    @abstractmethod
    def exists(self) -> bool:
        """Whether the store has been created (a first write creates it)."""

    @abstractmethod
    def open_catalog(self, write: bool) -> Catalog:
        """A catalog connection. ``write``: create the store (and migrate it) if needed.
        Not ``write``: never create or change anything; an absent store reads as empty."""

    @abstractmethod
    def check_writable(self) -> None:
        """Raise StoreError (StoreReadOnly when it is read-only) when a write would fail to
        open the store: a location that cannot be reached or created, or that may not be
        written. Creates and changes nothing (kidx record asks before it runs a harness)."""

    def lost_catalog(self, catalog: Catalog) -> str | None:
        """Why ``catalog`` (opened for reading and found empty) cannot stand for the
        store although its objects exist, or None. Reads then refuse to answer: an empty
        answer ("No resources found") would hide the loss."""
        return None

    def close(self) -> None:  # noqa: B027  (an optional hook: connections are closed through the catalog)
        pass
