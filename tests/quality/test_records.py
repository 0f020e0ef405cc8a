"""kidx.records.NamedTuple makes the classes typing.NamedTuple makes (it exists so that
the read path need not import typing)."""

from __future__ import annotations

import copy
import pickle
import typing

import pytest

from kidx import records
from kidx.store.catalog import Entry


def _pair(base):
    class Point(base):
        """A point."""

        x: int
        label: str = "origin"

        @property
        def shown(self) -> str:
            return f"{self.label}@{self.x}"

        def moved(self, by: int) -> Point:
            return self._replace(x=self.x + by)

    return Point


def test_a_class_statement_makes_what_typing_makes():
    ours, theirs = _pair(records.NamedTuple), _pair(typing.NamedTuple)
    for made in (ours, theirs):
        point = made(3)
        assert point == (3, "origin") and isinstance(point, tuple)
        assert repr(point) == "Point(x=3, label='origin')"
        assert point.shown == "origin@3" and point.moved(2) == (5, "origin")
        assert made._fields == ("x", "label") and made._field_defaults == {"label": "origin"}
        assert made.__doc__ == "A point." and made.__mro__[1:] == (tuple, object)
        assert made._make([1, "a"]) == made(1, "a") and made(1)._asdict() == {"x": 1, "label": "origin"}
    assert list(ours.__annotations__) == list(theirs.__annotations__) == ["x", "label"]


def test_a_record_type_of_the_store_pickles_and_compares():
    entry = Entry("BenchmarkRun", "r", "sha256:" + "0" * 64, None, {}, {}, "2026-01-01T00:00:00Z", 1)
    assert pickle.loads(pickle.dumps(entry)) == entry
    assert entry._replace(generation=2).generation == 2 and entry.id is None


def test_what_typing_refuses_it_refuses():
    with pytest.raises(TypeError, match="Non-default namedtuple field y cannot follow default field x"):
        class Late(records.NamedTuple):
            x: int = 0
            y: int
    with pytest.raises(AttributeError, match="Cannot overwrite NamedTuple attribute _replace"):
        class Replaced(records.NamedTuple):
            x: int

            def _replace(self):
                return self
    with pytest.raises(TypeError, match="offers the class syntax only"):
        records.NamedTuple("Point", [("x", int)])
    assert records.TYPE_CHECKING is False


def test_a_record_class_is_made_without_compiling_and_as_namedtuple_makes_it(monkeypatch):
    """collections.namedtuple compiles each class's ``__new__`` from source (``eval``), two
    thirds of the time of making it; kidx's records take a precompiled one, renamed."""
    import builtins
    import collections
    import inspect

    def no_eval(*arguments, **keywords):
        raise AssertionError("a record class was compiled")

    monkeypatch.setattr(builtins, "eval", no_eval)

    class Wide(records.NamedTuple):
        a: int
        b: str
        c: float = 1.5
        d: object = None

    monkeypatch.undo()
    theirs = collections.namedtuple("Wide", ["a", "b", "c", "d"], defaults=[1.5, None], module=__name__)
    for name in ("_fields", "_field_defaults", "__doc__", "__match_args__", "__module__"):
        assert getattr(Wide, name) == getattr(theirs, name), name
    assert Wide.__doc__ == "Wide(a, b, c, d)" and Wide._field_defaults == {"c": 1.5, "d": None}
    assert [(p.name, p.kind, p.default) for p in inspect.signature(Wide).parameters.values()] \
        == [(p.name, p.kind, p.default) for p in inspect.signature(theirs).parameters.values()]
    assert Wide.__new__.__doc__ == theirs.__new__.__doc__ and Wide.__new__.__qualname__ == "Wide.__new__"
    assert [Wide.__dict__[f].__doc__ for f in "abcd"] == [theirs.__dict__[f].__doc__ for f in "abcd"]
    wide = Wide(1, b="x")
    assert repr(wide) == "Wide(a=1, b='x', c=1.5, d=None)" and wide == theirs(1, "x")
    assert wide._asdict() == {"a": 1, "b": "x", "c": 1.5, "d": None} and copy.copy(wide) == wide
    for made in (Wide, theirs):
        with pytest.raises(TypeError, match="missing 1 required positional argument: 'b'"):
            made(1)
        with pytest.raises(ValueError, match=r"Got unexpected field names: \['e'\]"):
            made(1, "x")._replace(e=2)
        with pytest.raises(TypeError, match="Expected 4 arguments, got 1"):
            made._make([1])


def test_a_record_of_more_fields_than_the_precompiled_ones_is_still_made():
    names = [f"f{i}" for i in range(20)]
    source = "class Many(NamedTuple):\n" + "".join(f"    {name}: int = {i}\n" for i, name in enumerate(names))
    namespace: dict = {"NamedTuple": records.NamedTuple, "__name__": __name__}
    exec(source, namespace)  # noqa: S102 (the text above)
    many = namespace["Many"]
    assert many(*range(20)).f19 == 19 and many()._replace(f3=7)[3] == 7 and many._fields == tuple(names)
