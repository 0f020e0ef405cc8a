"""get -o csv / -o tsv: the -o wide columns with a header row and raw values."""

from __future__ import annotations

import csv
import io

SEED_RUN = "liger-llama4-rope-backward-liger-nvidia-h100-80gb-hbm3-hidden8192-kv-heads8-q-heads32-seq16384-bf16-"
WIDE_HEADER = ["NAME", "BENCHMARK", "STATUS", "MEDIAN", "OBSERVED", "AGE", "PEAK-MEMORY", "PROTOCOL",
               "ENVIRONMENT", "IMPLEMENTATION", "WORKLOAD"]
SOL_HEADER = ["BANDWIDTH", "FLOPS", "SOL", "SOL-MEASURED"]


def test_csv_has_the_wide_columns_with_raw_values(kidx, head_store):
    code, out, err = kidx("get", "run", SEED_RUN, "-o", "csv", "-L", "liger_version", store_path=head_store)
    assert (code, err) == (0, "")
    header, row = list(csv.reader(io.StringIO(out)))
    # the four speed-of-light columns follow the wide ones, empty where unknown (docs/speed-of-light.md)
    assert header == [*WIDE_HEADER, *SOL_HEADER, "LIGER_VERSION"]
    record = dict(zip(header, row, strict=True))
    # 553,648,128 B in 417.536 µs, and its share of the H100 SXM's 3.35 TB/s: raw, as fractions
    assert (record["BANDWIDTH"], record["SOL"]) == ("1325988963825.8735", "0.3958176011420518")
    assert (record["FLOPS"], record["SOL-MEASURED"]) == ("", "")
    assert record["MEDIAN"] == "417536"  # nanoseconds, not 417.5µs
    assert record["OBSERVED"] == "2025-08-07T21:42:15.000Z"
    assert record["AGE"].endswith("Z")  # the timestamp as written, not an age
    assert record["PEAK-MEMORY"] == ""
    assert record["IMPLEMENTATION"] == "liger-llama4-rope-liger-triton"
    assert record["LIGER_VERSION"] == "0.6.1"
    assert out.endswith("\n") and "\r" not in out


def test_memory_runs_give_bytes(kidx, head_store):
    code, out, _ = kidx("get", "runs", "--references", "workload/liger-llama4-rope-hidden8192-kv-heads8-q-heads32-seq16384-bf16",
                        "--field-selector", "spec.sourceNative.benchmark=llama4_rope/full/memory", "-o", "csv",
                        store_path=head_store)
    records = list(csv.DictReader(io.StringIO(out)))
    assert sorted(r["PEAK-MEMORY"] for r in records) == ["2399273472", "734134784"]
    assert {r["MEDIAN"] for r in records} == {""}


def test_csv_quotes_per_rfc_4180_and_tsv_escapes(kidx, head_store):
    spec = "NAME:.metadata.name,TITLE:.metadata.title,ROW:.metadata.annotations.liger\\.kernelindex\\.dev/row"
    code, out, _ = kidx("get", "run", SEED_RUN, "-o", f"csv={spec}", store_path=head_store)
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "NAME,TITLE,ROW"
    # the source row holds commas and double quotes: quoted, quotes doubled
    assert lines[1].startswith(f'{SEED_RUN},Llama 4 rotary position embedding · liger · backward,"llama4_rope,liger,')
    assert '""{""""dtype""""' in lines[1]
    [[name, title, row]] = list(csv.reader(io.StringIO(out)))[1:]
    assert row.startswith('llama4_rope,liger,backward,speed,ms,T,sequence length,16384,') and '"{""dtype""' in row
    code, out, _ = kidx("get", "run", SEED_RUN, "-o", "tsv=NAME:.metadata.name,MEDIAN:.spec.timing.latencyNs.median",
                        store_path=head_store)
    assert out == f"NAME\tMEDIAN\n{SEED_RUN}\t417536\n"


def test_tsv_wide_and_no_headers(kidx, head_store):
    code, out, _ = kidx("get", "run", SEED_RUN, "-o", "tsv", "--no-headers", store_path=head_store)
    [line] = out.splitlines()
    assert line.split("\t")[:5] == [SEED_RUN, "llama4_rope/backward", "passed", "417536", "2025-08-07T21:42:15.000Z"]


def test_csv_of_several_kinds_is_refused(kidx, head_store):
    code, out, err = kidx("get", "envs,protocols", "-o", "csv", store_path=head_store)
    assert (code, out) == (1, "")
    assert err == ("error: -o csv prints one kind at a time (one header row); this selection holds "
                   "executionenvironments, benchmarkprotocols\n")


def test_runs_have_one_column_set_whatever_the_selection(kidx, head_store):
    # memory runs have no speed of light, latency runs of a costed workload have some: one header
    headers = set()
    for benchmark in ("llama4_rope/full/memory", "llama4_rope/backward"):
        code, out, err = kidx("get", "runs", "--field-selector", f"spec.sourceNative.benchmark={benchmark}", "-o",
                              "csv", store_path=head_store)
        assert (code, err) == (0, "")
        headers.add(out.split("\n", 1)[0])
    code, out, err = kidx("get", "runs", "-l", "kernel=nothing", "-o", "csv", store_path=head_store)
    assert code == 0
    headers.add(out.split("\n", 1)[0])
    assert headers == {",".join(["NAME", *WIDE_HEADER[1:], *SOL_HEADER])}


def test_empty_selection_still_prints_the_header(kidx, head_store):
    code, out, err = kidx("get", "envs", "-l", "nothing=here", "-o", "csv", store_path=head_store)
    assert (code, out, err) == (0, "NAME,VENDOR,PRODUCT,FORM-FACTOR,ARCH,AGE\n", "No resources found\n")


def test_csv_equals_nothing_is_a_usage_error(kidx, head_store):
    code, _, err = kidx("get", "envs", "-o", "csv=", store_path=head_store)
    assert code == 1 and "csv format specified with '=' but no custom columns given" in err


def test_delimited_quoting_and_escapes():
    from kidx.output.delimited import render_delimited

    rows = [["a,b", 'say "hi"', "two\nlines", "tab\there", "back\\slash", ""]]
    assert render_delimited("csv", ["H1", "H2", "H3", "H4", "H5", "H6"], rows) == (
        'H1,H2,H3,H4,H5,H6\n"a,b","say ""hi""","two\nlines",tab\there,back\\slash,\n')
    assert render_delimited("tsv", None, rows) == 'a,b\tsay "hi"\ttwo\\nlines\ttab\\there\tback\\\\slash\t\n'
