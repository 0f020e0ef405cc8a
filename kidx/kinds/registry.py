"""The kind registry: every kind's names, schema, printer columns and reference fields.

Built from the CRDs alone (nothing about a kind is hard-coded here). Refuses two kinds
that claim the same name, so a type argument always resolves to exactly one kind.
"""

from __future__ import annotations

from kidx.errors import UsageError
from kidx.records import NamedTuple

REFERENCE_MARK = "x-kidx-reference"
NAME_REFERENCE_MARK = "x-kidx-name-reference"


class UnknownTypeError(UsageError):
    """A resource type kidx does not have (``kidx get kernels``)."""

    def __init__(self, name: str, types: tuple[str, ...] = (), spellings: tuple[str, ...] = ()):
        super().__init__(f'kidx doesn\'t have a resource type "{name}"')
        self.name = name
        self.hint = None  # a second line: the nearest type and every type, for the command line
        if types:
            import difflib

            close = difflib.get_close_matches(name.lower(), spellings or types, n=1, cutoff=0.6)
            nearest = f"did you mean {close[0]}? " if close else ""
            self.hint = (f"{nearest}the resource types are {', '.join(types[:-1])} and {types[-1]} "
                         "('kidx api-resources' lists their short names)")


def simple_path_keys(json_path: str) -> list[str] | None:
    """The keys of a printer column's ``jsonPath`` when it is a simple field path, names
    after dots as ``^(\\.[A-Za-z_][A-Za-z0-9_-]*)+$`` reads them (``.spec.status``:
    ``["spec", "status"]``), but checked without compiling a pattern, which would cost a
    cold ``get`` more than its use; None for any other JSONPath (and for one with a line
    break, which re's ``$`` would let end the path)."""
    if not json_path.startswith("."):
        return None
    keys = json_path[1:].split(".")
    for key in keys:
        # ASCII letters, digits, "_" and "-", the first a letter or "_"
        if not (key.isascii() and key.replace("-", "").replace("_", "a").isalnum()) or key[0] in _NOT_FIRST:
            return None
    return keys


_NOT_FIRST = frozenset("-0123456789")


class PrinterColumn(NamedTuple):
    name: str
    type: str
    json_path: str
    priority: int = 0
    format: str | None = None
    description: str | None = None


class ReferenceField(NamedTuple):
    """A spec field holding the digest of another kind's object."""

    field: str  # name of the digest field in spec, e.g. protocolDigest
    target_kind: str
    name_field: str | None = None  # the by-name alternative, e.g. protocolRef


class KindInfo(NamedTuple):
    kind: str
    group: str
    version: str
    plural: str
    singular: str
    short_names: tuple[str, ...]
    list_kind: str
    categories: tuple[str, ...]
    scope: str
    schema: dict
    columns: tuple[PrinterColumn, ...]
    references: tuple[ReferenceField, ...]

    @property
    def default_columns(self) -> tuple[PrinterColumn, ...]:
        """The columns of the default table (priority 0); ``-o wide`` shows every column."""
        return tuple(column for column in self.columns if column.priority == 0)

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}"

    @property
    def qualified_name(self) -> str:
        """``benchmarkrun.kernelindex.dev``: the prefix of ``-o name`` and apply lines."""
        return f"{self.kind.lower()}.{self.group}"

    @property
    def resource(self) -> str:
        """``benchmarkruns.kernelindex.dev``: how NotFound errors name the kind."""
        return f"{self.plural}.{self.group}"

    @property
    def spec_schema(self) -> dict:
        return self.schema.get("properties", {}).get("spec", {})


def _kind_from_crd(crd: dict) -> KindInfo:
    spec = crd["spec"]
    names = spec["names"]
    version = next(v for v in spec["versions"] if v.get("storage", True))
    schema = version["schema"]["openAPIV3Schema"]
    columns = tuple(
        PrinterColumn(
            name=c["name"],
            type=c.get("type", "string"),
            json_path=c["jsonPath"],
            priority=int(c.get("priority", 0)),
            format=c.get("format"),
            description=c.get("description"),
        )
        for c in version.get("additionalPrinterColumns", ())
    )
    return KindInfo(
        kind=names["kind"],
        group=spec["group"],
        version=version["name"],
        plural=names["plural"],
        singular=names.get("singular", names["kind"].lower()),
        short_names=tuple(names.get("shortNames", ())),
        list_kind=names.get("listKind", names["kind"] + "List"),
        categories=tuple(names.get("categories", ())),
        scope=spec.get("scope", "Cluster"),
        schema=schema,
        columns=columns,
        references=_reference_fields(schema.get("properties", {}).get("spec", {})),
    )


def _reference_fields(spec_schema: dict) -> tuple[ReferenceField, ...]:
    properties = spec_schema.get("properties", {})
    by_name = {
        prop[NAME_REFERENCE_MARK]: field
        for field, prop in properties.items()
        if NAME_REFERENCE_MARK in prop
    }
    return tuple(
        ReferenceField(field, prop[REFERENCE_MARK], by_name.get(field))
        for field, prop in properties.items()
        if REFERENCE_MARK in prop
    )


class KindRegistry:
    def __init__(self, kinds: list[KindInfo]):
        self.kinds = tuple(kinds)
        self._by_kind: dict[str, KindInfo] = {}
        self._by_spelling: dict[str, KindInfo] = {}
        for info in kinds:
            if info.kind in self._by_kind:
                raise ValueError(f"two CRDs declare kind {info.kind}")
            self._by_kind[info.kind] = info
            spellings = {info.plural, info.singular, info.kind.lower(), *info.short_names}
            spellings |= {f"{s}.{info.group}"
                          for s in (info.plural, info.singular, info.kind.lower(), *info.short_names)}
            spellings |= {
                f"{s}.{info.version}.{info.group}"
                for s in (info.plural, info.singular, info.kind.lower(), *info.short_names)
            }
            for spelling in spellings:
                owner = self._by_spelling.get(spelling)
                if owner is not None and owner is not info:
                    raise ValueError(f'"{spelling}" names both {owner.kind} and {info.kind}')
                self._by_spelling[spelling] = info

    @classmethod
    def from_crds(cls, crds: list[dict]) -> KindRegistry:
        return cls([_kind_from_crd(crd) for crd in crds])

    def by_kind(self, kind: str) -> KindInfo | None:
        return self._by_kind.get(kind)

    def resolve(self, spelling: str) -> KindInfo:
        """Any spelling of a type: plural, singular, short name, Kind, with or without group."""
        info = self._by_spelling.get(spelling.lower())
        if info is None:
            raise UnknownTypeError(spelling, tuple(info.plural for info in self.kinds),
                                   tuple(sorted(s for s in self._by_spelling if "." not in s)))
        return info


_registry: KindRegistry | None = None


def registry() -> KindRegistry:
    """The process-wide registry, built once from the installed CRDs."""
    global _registry
    if _registry is None:
        from kidx.kinds.crd_files import load_crds

        _registry = KindRegistry.from_crds(load_crds())
    return _registry
