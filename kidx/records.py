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
    import keyword
    import sys
    from _collections import _tuplegetter

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
            record = _record_type(typename, tuple(annotations), tuple(namespace[f] for f in defaulted),
                                  namespace["__module__"])
            record.__annotations__ = record.__new__.__annotations__ = dict(annotations)
            for key, value in namespace.items():
                if key in _PROHIBITED:
                    raise AttributeError("Cannot overwrite NamedTuple attribute " + key)
                if key not in _SPECIAL and key not in record._fields:
                    setattr(record, key, value)
            return record

    _NamedTupleBase = type.__new__(_NamedTupleMeta, "NamedTuple", (), {})

    _tuple_new = tuple.__new__
    # ``__new__`` of a record of 1 to 16 fields, whose parameters are renamed to the fields'
    # names (``CodeType.replace``): collections.namedtuple compiles a new one from source for
    # every class, which took 60 of its 90 microseconds, and a cold ``describe`` makes 29
    _NEW = (
        lambda _cls, _0: _tuple_new(_cls, (_0,)),
        lambda _cls, _0, _1: _tuple_new(_cls, (_0, _1)),
        lambda _cls, _0, _1, _2: _tuple_new(_cls, (_0, _1, _2)),
        lambda _cls, _0, _1, _2, _3: _tuple_new(_cls, (_0, _1, _2, _3)),
        lambda _cls, _0, _1, _2, _3, _4: _tuple_new(_cls, (_0, _1, _2, _3, _4)),
        lambda _cls, _0, _1, _2, _3, _4, _5: _tuple_new(_cls, (_0, _1, _2, _3, _4, _5)),
        lambda _cls, _0, _1, _2, _3, _4, _5, _6: _tuple_new(_cls, (_0, _1, _2, _3, _4, _5, _6)),
        lambda _cls, _0, _1, _2, _3, _4, _5, _6, _7: _tuple_new(_cls, (_0, _1, _2, _3, _4, _5, _6, _7)),
        lambda _cls, _0, _1, _2, _3, _4, _5, _6, _7, _8: _tuple_new(_cls, (_0, _1, _2, _3, _4, _5, _6, _7, _8)),
        lambda _cls, _0, _1, _2, _3, _4, _5, _6, _7, _8, _9: _tuple_new(_cls, (_0, _1, _2, _3, _4, _5, _6, _7, _8,
                                                                               _9)),
        lambda _cls, _0, _1, _2, _3, _4, _5, _6, _7, _8, _9, _10: _tuple_new(_cls, (_0, _1, _2, _3, _4, _5, _6, _7,
                                                                                    _8, _9, _10)),
        lambda _cls, _0, _1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11: _tuple_new(_cls, (_0, _1, _2, _3, _4, _5, _6,
                                                                                         _7, _8, _9, _10, _11)),
        lambda _cls, _0, _1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12: _tuple_new(
            _cls, (_0, _1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12)),
        lambda _cls, _0, _1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, _13: _tuple_new(
            _cls, (_0, _1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, _13)),
        lambda _cls, _0, _1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, _13, _14: _tuple_new(
            _cls, (_0, _1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, _13, _14)),
        lambda _cls, _0, _1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, _13, _14, _15: _tuple_new(
            _cls, (_0, _1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, _13, _14, _15)),
    )

    def _record_type(typename: str, fields: tuple, defaults: tuple, module: str) -> type:
        """What ``collections.namedtuple(typename, fields, defaults=defaults, module=module)``
        makes (its class namespace and methods, made the same way), without compiling."""
        if not 0 < len(fields) <= len(_NEW) or any(f.startswith("_") or keyword.iskeyword(f) for f in fields) \
                or len(set(fields)) != len(fields) or not typename.isidentifier():
            return collections.namedtuple(typename, fields, defaults=defaults, module=module)  # its checks, its errors
        typename = sys.intern(typename)
        fields = tuple(map(sys.intern, fields))
        count = len(fields)
        arguments = ", ".join(fields) + ("," if count == 1 else "")
        repr_format = "(" + ", ".join(f"{name}=%r" for name in fields) + ")"
        template = _NEW[count - 1]
        new = type(template)(template.__code__.replace(co_varnames=("_cls", *fields), co_name="__new__"),
                             template.__globals__, "__new__", defaults)
        new.__doc__ = f"Create new instance of {typename}({arguments})"

        @classmethod  # type: ignore[misc]
        def _make(cls, iterable):
            result = _tuple_new(cls, iterable)
            if len(result) != count:
                raise TypeError(f"Expected {count} arguments, got {len(result)}")
            return result

        _make.__func__.__doc__ = f"Make a new {typename} object from a sequence or iterable"

        def _replace(self, /, **keywords):
            result = self._make(map(keywords.pop, fields, self))
            if keywords:
                raise ValueError(f"Got unexpected field names: {list(keywords)!r}")
            return result

        _replace.__doc__ = f"Return a new {typename} object replacing specified fields with new values"

        def __repr__(self):
            "Return a nicely formatted representation string"
            return self.__class__.__name__ + repr_format % self

        def _asdict(self):
            "Return a new dict which maps field names to their values."
            return dict(zip(self._fields, self))

        def __getnewargs__(self):
            "Return self as a plain tuple.  Used by copy and pickle."
            return tuple(self)

        for method in (new, _make.__func__, _replace, __repr__, _asdict, __getnewargs__):
            method.__qualname__ = f"{typename}.{method.__name__}"
        namespace = {"__doc__": f"{typename}({arguments})", "__slots__": (), "_fields": fields,
                     "_field_defaults": dict(zip(fields[count - len(defaults):], defaults)) if defaults else {},
                     "__new__": new, "_make": _make, "_replace": _replace, "__repr__": __repr__, "_asdict": _asdict,
                     "__getnewargs__": __getnewargs__, "__match_args__": fields}
        for index, name in enumerate(fields):
            namespace[name] = _tuplegetter(index, sys.intern(f"Alias for field number {index}"))
        record = type(typename, (tuple,), namespace)
        record.__module__ = module
        return record

    def NamedTuple(*arguments, **keywords):  # noqa: N802 (the name typing gives it)
        """Only a base in a class statement: ``class Entry(NamedTuple): …``."""
        raise TypeError("kidx.records.NamedTuple offers the class syntax only")

    NamedTuple.__mro_entries__ = lambda bases: (_NamedTupleBase,)

__all__ = ["TYPE_CHECKING", "NamedTuple"]
