"""``NamedTuple`` and ``TYPE_CHECKING`` for kidx's record types, without importing typing.

Importing ``typing`` and building two dozen of its NamedTuple classes took 3.7 ms where a
bare interpreter started in 8.1 ms (the development machine, cold processes; the
commands themselves are measured by bench/bench_startup.py), and most record types on
the read path are NamedTuples. So the modules that every ``get``
and ``describe`` imports take both names from here:

    from kidx.records import TYPE_CHECKING, NamedTuple

    class Entry(NamedTuple):
        kind: str
        generation: int = 1

Type checkers see ``typing.NamedTuple`` itself. At run time a class statement makes what
``typing.NamedTuple`` makes in the same way, ``collections.namedtuple`` of the annotated
fields with their defaults, given the class body's methods, properties and docstring; only
its annotations stay the strings the source holds (``typing`` would wrap them), and only
the class syntax is offered. ``TYPE_CHECKING`` is False, as ``typing.TYPE_CHECKING`` is.
"""

TYPE_CHECKING = False

if TYPE_CHECKING:
    from typing import NamedTuple as NamedTuple
else:
    import collections

    # as typing.NamedTuple: what a class body may not replace, and what it does not copy
    _PROHIBITED = frozenset({"__new__", "__init__", "__slots__", "__getnewargs__", "_fields", "_field_defaults",
                             "_make", "_replace", "_asdict", "_source"})
    _SPECIAL = frozenset({"__module__", "__name__", "__annotations__"})

    class _NamedTupleMeta(type):
        def __new__(cls, typename, bases, namespace):
            if bases != (_NamedTupleBase,):
                raise TypeError("a kidx NamedTuple inherits from NamedTuple alone")
            annotations = namespace.get("__annotations__", {})
            defaulted = []
            for field in annotations:
                if field in namespace:
                    defaulted.append(field)
                elif defaulted:
                    raise TypeError(f"Non-default namedtuple field {field} cannot follow default field"
                                    f"{'s' if len(defaulted) > 1 else ''} {', '.join(defaulted)}")
            record = collections.namedtuple(typename, list(annotations), defaults=[namespace[f] for f in defaulted],
                                            module=namespace["__module__"])
            record.__annotations__ = record.__new__.__annotations__ = dict(annotations)
            for key, value in namespace.items():
                if key in _PROHIBITED:
                    raise AttributeError("Cannot overwrite NamedTuple attribute " + key)
                if key not in _SPECIAL and key not in record._fields:
                    setattr(record, key, value)
            return record

    _NamedTupleBase = type.__new__(_NamedTupleMeta, "NamedTuple", (), {})

    def NamedTuple(*arguments, **keywords):  # noqa: N802 (the name typing gives it)
        """Only a base in a class statement: ``class Entry(NamedTuple): …``."""
        raise TypeError("kidx.records.NamedTuple offers the class syntax only")

    NamedTuple.__mro_entries__ = lambda bases: (_NamedTupleBase,)

__all__ = ["TYPE_CHECKING", "NamedTuple"]
