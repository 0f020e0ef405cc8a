"""Schema 3 of the SQLite catalog packs what an index already holds (kidx.store.catalog_packing):
the printer columns' reference digests as target ids, annotations deflated with the store's
dictionary, a revision's time when it is the creation time. Reads give back exactly what
was given; a damaged packed value is a clear error."""

from __future__ import annotations

import json
import sqlite3
import sys

import pytest
from conftest import REPO, SEED_BUNDLE
from hypothesis import given, settings
from hypothesis import strategies as st

from kidx.store.catalog_packing import (
    DICTIONARY_BYTES,
    PackedValueError,
    TextPacker,
    make_dictionary,
    pack_columns,
    pack_reference_values,
    pack_replacing,
    reference_replacements,
    unpack_columns,
    unpack_text,
)

pytestmark = pytest.mark.sqlite_only

A, B = "a" * 64, "b" * 64


def test_only_whole_reference_values_are_packed_and_unpacked_as_they_were():
    columns = json.dumps(["x", f"sha256:{A}", f',"sha256:{A}",', f"sha256:{B}", f"sha256:{A}"], separators=(",", ":"))
    packed = pack_columns("0badf00d:" + columns, {A: 7})
    # the string that holds a quoted digest inside it, and a digest that is no reference, stay as they are
    assert packed == ('0badf00d:["x",\x017\x01,",\\"sha256:' + A + '\\",",' + f'"sha256:{B}",\x017\x01]')
    assert unpack_columns(packed, {"7": f"sha256:{A}"}) == "0badf00d:" + columns
    assert pack_columns("0badf00d:" + columns, {}) == "0badf00d:" + columns
    with pytest.raises(PackedValueError, match="reference target '7'"):
        unpack_columns(packed, {})


# printer-column values as column_values writes them: scalars, some of them digests or
# strings that hold a quoted digest, commas, brackets, quotes and backslashes
_DIGESTS = [A, B, "c" * 64]
_VALUE = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from([f"sha256:{d}" for d in _DIGESTS]),
    st.builds(lambda left, d, right: f"{left}sha256:{d}{right}", st.sampled_from(['"', ',"', '["', '\\"', "", "x"]),
              st.sampled_from(_DIGESTS), st.sampled_from(['"', '",', '"]', "", '\\'])),
    st.text(alphabet='ab,[]"\\:\x01', max_size=8),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_VALUE, max_size=8), st.dictionaries(st.sampled_from(_DIGESTS), st.integers(1, 999)))
def test_a_rows_reference_values_are_packed_as_pack_columns_packs_them(values, ids):
    columns = "0badf00d:" + json.dumps(values, separators=(",", ":"), ensure_ascii=False)
    assert pack_reference_values(columns, ids) == pack_columns(columns, ids)
    assert pack_replacing(columns, reference_replacements(ids)) == pack_columns(columns, ids)


def test_texts_are_deflated_with_the_dictionary_only_where_that_is_shorter():
    texts = [json.dumps({"kernelindex.dev/source-line": str(n), "row": f"cross_entropy,liger,{n * 7}"}) for n in range(64)]
    dictionary = make_dictionary(texts)
    assert dictionary is not None and len(dictionary) <= DICTIONARY_BYTES
    assert make_dictionary(texts[:31]) is None and make_dictionary(["{}"] * 100) is None
    with_dictionary, plain = TextPacker(1, dictionary), TextPacker()
    for text in texts:
        packed = with_dictionary.pack(text)
        assert isinstance(packed, bytes) and packed[0] == 1 and len(packed) < len(plain.pack(text))
        assert unpack_text(packed, {1: dictionary}.get) == text
        assert unpack_text(plain.pack(text), {}.get) == text
    assert plain.pack("{}") == "{}" and plain.pack('{"a":"' + "é" * 40 + '"}') is not None
    short_random = json.dumps({"k": "q9Zx!7#Lm2@Vb8$Wn4%Tc6^Yr1&Hs3*Jd5(Kf0)Gg"})
    assert plain.pack(short_random) == short_random  # deflating would make it longer
    for damaged in (b"", b"\x00\xff\xff", b"\x02" + plain.pack(texts[0])[1:], with_dictionary.pack(texts[0])[:-3]):
        with pytest.raises(PackedValueError):
            unpack_text(damaged, {1: dictionary}.get)


def test_a_store_keeps_its_runs_packed_and_reads_them_as_given(kidx, store, tmp_path):
    sys.path.append(str(REPO / "bench"))
    from bench_store import generate  # the benchmarks' generator: runs with long annotations

    data = generate(40, 20261202, n_workloads=2, n_impls=2)
    listing = json.dumps({"apiVersion": "v1", "kind": "List", "items": data.shared + data.runs})
    assert kidx("apply", "-f", "-", stdin=listing).code == 0
    as_yaml = kidx("get", "runs", "-o", "yaml")
    wide = kidx("get", "runs", "-o", "wide")
    connection = sqlite3.connect(store / "catalog.sqlite")
    try:
        (dictionaries,) = connection.execute("SELECT count(*) FROM text_dictionaries").fetchone()
        rows = connection.execute("SELECT annotations, columns, created, recorded FROM objects "
                                  "WHERE kind='BenchmarkRun'").fetchall()
    finally:
        connection.close()
    assert dictionaries == 1 and len(rows) == 40
    assert all(isinstance(a, bytes) and a[0] == 1 and "sha256:" not in c and r is None for a, c, _, r in rows)
    # every manifest as applied: the yaml of each run names its annotations and references in full
    for run in data.runs:
        assert run["metadata"]["annotations"]["liger.kernelindex.dev/row"].split(",")[0] in as_yaml.out
        assert run["spec"]["workloadDigest"] in as_yaml.out
    # the same run applied again with a label changed: a new revision, recorded later than created
    run = data.runs[0]
    run["metadata"]["labels"]["suite"] = "s-relabeled"
    assert kidx("apply", "-f", "-", stdin=json.dumps(run)).code == 0
    assert kidx("get", "runs", "-l", "suite=s-relabeled", "-o", "name").out.strip().endswith(run["metadata"]["name"])
    history = kidx("history", "run", run["metadata"]["name"]).out.splitlines()
    assert [line.split()[:2] for line in history[1:]] == [["1", "applied"], ["2", "applied"]]
    assert kidx("get", "runs", "-o", "wide").out.count("\n") == wide.out.count("\n")
    assert kidx("fsck").code == 0
    # a bundle restored into a new store: packed there too, with a dictionary of its own, read the same
    bundle, restored = tmp_path / "bundle.json", tmp_path / "restored"
    assert kidx("export", "-o", str(bundle)).code == 0
    assert kidx("import", "bundle", str(bundle), store_path=restored).code == 0
    assert kidx("get", "runs", "-o", "yaml", store_path=restored).out == kidx("get", "runs", "-o", "yaml").out
    connection = sqlite3.connect(restored / "catalog.sqlite")
    try:
        assert connection.execute("SELECT count(*) FROM text_dictionaries").fetchone() == (1,)
        assert connection.execute("SELECT count(*) FROM objects WHERE kind='BenchmarkRun' AND typeof(annotations)='blob' "
                                  "AND substr(annotations, 1, 1) = x'01'").fetchone() == (40,)
    finally:
        connection.close()


def test_a_damaged_packed_value_is_a_clear_error(kidx, store):
    assert kidx("apply", "-f", str(SEED_BUNDLE)).code == 0
    connection = sqlite3.connect(store / "catalog.sqlite")
    try:
        connection.execute("UPDATE objects SET annotations = x'00ffff' WHERE kind='BenchmarkRun'")
        connection.execute("UPDATE objects SET columns = '483a39ed:[' || char(1) || '999999' || char(1) || ']' "
                           "WHERE kind='BenchmarkRun'")
        connection.commit()
    finally:
        connection.close()
    for command in (("get", "runs"), ("get", "runs", "-o", "yaml")):
        result = kidx(*command)
        assert result.code == 1 and result.out == "", (command, result)
        assert "catalog" in result.err and "is damaged (a packed value cannot be read" in result.err, (command, result)
        assert "Traceback" not in result.err


_PIECES = st.sampled_from(["\x01", "\x02", "1", "2", "99", "x", '"', ",", "[", "]", "9edfe0b4:", "\x01" + "1" + "\x01"])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.none(), st.lists(_PIECES, max_size=8).map("".join)), max_size=6),
       st.lists(st.booleans(), min_size=6, max_size=6))
def test_rows_unpacked_together_are_the_rows_unpacked_one_by_one(columns, packed_annotations):
    """A listing unpacks its rows' printer columns as one text (PackedRows._unpacked): the
    same rows as one at a time, and the same error where a value is damaged (a stray MARK,
    the separator inside a value, an id that is not there)."""
    from kidx.store.sqlite_catalog import SQLiteCatalog

    catalog = SQLiteCatalog(None)  # in memory: its ref_targets are empty, its digests given here
    catalog._target_digests.update({"1": "sha256:" + A, "2": "sha256:" + B})
    annotations = TextPacker().pack(json.dumps({"note": "n" * 80}))
    rows = [(index, "BenchmarkRun", f"run-{index}", b"\0" * 32, None, "{}",
             annotations if packed else "{}", "2026-01-01T00:00:00Z", 1, text)
            for index, (text, packed) in enumerate(zip(columns, packed_annotations, strict=False))]

    def outcome(unpack):
        try:
            return list(unpack(rows))
        except PackedValueError as exc:
            return str(exc)

    assert outcome(catalog._unpacked) == outcome(catalog._unpacked_each)


def test_a_table_that_shows_neither_reads_no_labels_and_no_reference_digests(kidx, store):
    """A query that reads no labels and no reference among the cached columns (the default
    table of ``get``) is answered without them: labels {} (unless label conditions are
    checked on the rows) and the columns' references null; every other query reads both.
    Their targets are still looked up: a damaged packed value is an error whatever reads it
    (test_a_damaged_packed_value_is_a_clear_error)."""
    sys.path.append(str(REPO / "bench"))
    from bench_store import generate

    from kidx.api.arguments import parse_selector
    from kidx.store.catalog import CatalogQuery
    from kidx.store.sqlite_catalog import SQLiteCatalog

    data = generate(6, 20261207, n_workloads=2, n_impls=2)
    for rank, run in enumerate(data.runs):
        run["metadata"]["labels"]["rank"] = str(rank)
    listing = json.dumps({"apiVersion": "v1", "kind": "List", "items": data.shared + data.runs})
    assert kidx("apply", "-f", "-", stdin=listing).code == 0
    catalog = SQLiteCatalog(store / "catalog.sqlite", write=False)
    try:
        statements: list[str] = []
        catalog.connection.set_trace_callback(statements.append)
        table = CatalogQuery(kind="BenchmarkRun", annotations=False, read_labels=False, column_references=False)
        narrow = catalog.list(table)
        assert any("title, '{}', '{}', created" in statement for statement in statements)  # neither read
        full = catalog.list(table._replace(read_labels=True, column_references=True))
        assert [entry.name for entry in narrow] == [entry.name for entry in full] and len(full) == 6
        assert all(entry.labels == {} and entry.columns.count("sha256:") == 0 and entry.columns.count("null") >= 4
                   for entry in narrow)
        assert all(entry.labels and entry.columns.count("sha256:") == 4 for entry in full)
        assert [entry._replace(labels={}, columns=None) for entry in narrow] == [
            entry._replace(labels={}, columns=None) for entry in full]
        # labels checked on the rows (a numeric comparison) are read whatever the query says
        checked = catalog.list(table._replace(labels=tuple(parse_selector("rank>0").requirements)))
        assert [entry.labels for entry in checked] == [entry.labels for entry in full if entry.labels["rank"] != "0"]
    finally:
        catalog.close()
