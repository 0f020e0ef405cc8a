"""kidx compare --aggregate KEY: the suite's answer in one table, on a small store built here."""

from __future__ import annotations

import json
import math
import statistics

import pytest
from conftest import RULE

T_975_2 = 4.302652729749464  # Student t, 0.975 quantile, 2 degrees of freedom
T_975_1 = 12.706204736174707  # and 1 degree of freedom

HEADER = ("kernel_name,kernel_provider,kernel_operation_mode,metric_name,metric_unit,x_name,x_label,x_value,"
          "y_value_50,y_value_20,y_value_80,extra_benchmark_config_str,gpu_name,timestamp,liger_version")
SESSIONS = ("2026-01-01 00:00:00", "2026-01-02 00:00:00")
# kernel, sequence length, Hugging Face's runs (ms), Liger's runs: alpha 20% slower at 1024,
# unchanged at 2048, 25% faster at 4096; beta twice as fast, at 1024 measured once
SHAPES = (
    ("alpha", 1024, (1.00, 1.01), (1.20, 1.21)),
    ("alpha", 2048, (2.00, 2.02), (2.02, 2.00)),
    ("alpha", 4096, (4.00, 4.04), (3.00, 3.03)),
    ("beta", 1024, (1.00, 1.01), (0.50,)),
    ("beta", 2048, (2.00, 2.02), (1.00, 1.01)),
)
RUN = "liger-{kernel}-forward-liger-nvidia-h100-80gb-hbm3-hidden64-seq{seq}-2026-01-02-00-00-00-{tail}"
ALPHA_1024 = RUN.format(kernel="alpha", seq=1024, tail="9d527ecd8a")
BETA_2048 = RUN.format(kernel="beta", seq=2048, tail="99eba50aed")



@pytest.fixture
def suite(kidx, tmp_path):
    lines = [HEADER]
    for kernel, seq, huggingface, liger in SHAPES:
        for provider, values in (("huggingface", huggingface), ("liger", liger)):
            for session, value in zip(SESSIONS, values, strict=False):
                lines.append(f'{kernel},{provider},forward,speed,ms,T,sequence length,{seq},{value},{value * 0.99},'
                             f'{value * 1.01},"{{""H"": 64}}",NVIDIA H100 80GB HBM3,{session},0.1.0')
    (tmp_path / "runs.csv").write_text("\n".join(lines) + "\n")
    code, _, err = kidx("import", "liger", str(tmp_path / "runs.csv"))
    assert code == 0, err
    return kidx


def _ratio(huggingface, liger) -> float:
    return statistics.median(liger) / statistics.median(huggingface)


def test_the_table_shows_the_aggregates_instead_of_the_rows(suite):
    code, out, err = suite("compare", "--baseline", "huggingface", "--aggregate", "operation")
    assert (code, err) == (0, "")
    assert out == (
        "OPERATION   IMPLEMENTATION             BASELINE                         CONFIGS   SLOWER   FASTER   SAME   "
        "INCONCLUSIVE   UNCONFIRMED   GEOMEAN   GEOMEAN-CI    WORST          WORST-RUN\n"
        "alpha       liger-alpha-liger-triton   liger-alpha-transformers-eager   3         1        1        0      "
        f"1              0             0.965     0.536-1.737   1.199 slower   {ALPHA_1024}\n"
        "beta        liger-beta-liger-triton    liger-beta-transformers-eager    2         0        1        0      "
        f"0              1             0.499     0.483-0.515   0.500 faster   {BETA_2048}\n"
        "\n"
        "suite: 1 of 5 configurations slower (2 faster, 0 same, 1 inconclusive, 1 unconfirmed); worst: "
        f"{ALPHA_1024}, ratio 1.199, slower; overall: geometric-mean ratio 0.741, 95% interval 0.452-1.216 "
        "(one configuration one vote)\n" + RULE + "summary: 1 slower, 2 faster, 0 same, 1 inconclusive, 1 unconfirmed\n"
    )


def test_json_aggregates_with_the_geomean_and_interval_computed_by_hand(suite):
    code, out, err = suite("compare", "--baseline", "huggingface", "--aggregate", "operation", "-o", "json")
    assert code == 0, err
    document = json.loads(out)
    assert document["aggregate"] == "operation"
    alpha, beta = document["aggregates"]
    assert set(alpha) == {"operation", "implementation", "label", "baseline", "metric", "configurations", "slower",
                          "faster", "same", "inconclusive", "unconfirmed", "geomeanRatio", "ciLow", "ciHigh", "worst"}
    assert {k: alpha[k] for k in ("operation", "implementation", "label", "baseline", "metric", "configurations",
                                  "slower", "faster", "same", "inconclusive", "unconfirmed")} == {
        "operation": "alpha", "implementation": "liger-alpha-liger-triton", "label": None,
        "baseline": "liger-alpha-transformers-eager", "metric": "latency", "configurations": 3, "slower": 1,
        "faster": 1, "same": 0, "inconclusive": 1, "unconfirmed": 0}
    # by hand: the ratio of the arms' medians per shape, their logs' mean and a t interval with 2 df
    logs = [math.log(_ratio(hf, lg)) for kernel, _, hf, lg in SHAPES if kernel == "alpha"]
    mean, sd = statistics.mean(logs), statistics.stdev(logs)
    assert alpha["geomeanRatio"] == pytest.approx(math.exp(mean), rel=1e-12)
    assert (alpha["ciLow"], alpha["ciHigh"]) == pytest.approx(
        (math.exp(mean - T_975_2 * sd / math.sqrt(3)), math.exp(mean + T_975_2 * sd / math.sqrt(3))), rel=1e-9)
    assert alpha["worst"] == {
        "run": ALPHA_1024, "protocol": "liger-bench-do-bench-forward", "workload": "liger-alpha-hidden64-seq1024",
        "environment": "liger-bench-nvidia-h100-80gb-hbm3", "implementation": "liger-alpha-liger-triton",
        "label": None, "ratio": pytest.approx(_ratio((1.00, 1.01), (1.20, 1.21)), rel=1e-12),
        "speedup": pytest.approx(1 / _ratio((1.00, 1.01), (1.20, 1.21)), rel=1e-12), "verdict": "slower",
        "withinRun": None, "judgedOn": "statistics"}
    beta_logs = [math.log(_ratio(hf, lg)) for kernel, _, hf, lg in SHAPES if kernel == "beta"]
    beta_mean, beta_sd = statistics.mean(beta_logs), statistics.stdev(beta_logs)
    assert (beta["configurations"], beta["faster"], beta["unconfirmed"]) == (2, 1, 1)
    assert (beta["ciLow"], beta["ciHigh"]) == pytest.approx(
        (math.exp(beta_mean - T_975_1 * beta_sd / math.sqrt(2)), math.exp(beta_mean + T_975_1 * beta_sd / math.sqrt(2))),
        rel=1e-9)
    [overall] = document["overall"]
    all_logs = [math.log(_ratio(hf, lg)) for _, _, hf, lg in SHAPES]
    assert (overall["metric"], overall["configurations"], overall["slower"]) == ("latency", 5, 1)
    assert overall["geomeanRatio"] == pytest.approx(math.exp(statistics.mean(all_logs)), rel=1e-12)
    assert overall["worst"]["run"] == ALPHA_1024
    # the document is compare's, with the aggregates beside its groups
    assert len(document["groups"]) == 5 and document["summary"]["slower"] == 1
    assert "one configuration one vote" in document["parameters"]["aggregate"]


def test_markdown_opens_with_the_headline_then_the_table(suite):
    code, out, err = suite("compare", "--baseline", "huggingface", "--aggregate", "operation", "-o", "markdown")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == (
        "**1 of 5 configurations slower (2 faster, 0 same, 1 inconclusive, 1 unconfirmed); worst: "
        f"{ALPHA_1024}, ratio 1.199, slower; overall: geometric-mean ratio 0.741, 95% interval 0.452-1.216 "
        "(one configuration one vote)**")
    assert lines[1:5] == [
        "",
        "| OPERATION | IMPLEMENTATION | BASELINE | CONFIGS | SLOWER | FASTER | SAME | INCONCLUSIVE | UNCONFIRMED | "
        "GEOMEAN | GEOMEAN-CI | WORST | WORST-RUN |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
        "| alpha | liger-alpha-liger-triton | liger-alpha-transformers-eager | 3 | 1 | 1 | 0 | 1 | 0 | 0.965 | "
        f"0.536-1.737 | 1.199 slower | {ALPHA_1024} |",
    ]
    # every configuration's table folded under it, the rule last
    assert lines[6:8] == ["", "<details><summary>every configuration</summary>"]
    assert out.count("| IMPLEMENTATION | MEDIAN |") == 5 and lines[-3:-1] == ["</details>", ""]
    assert lines[-1].startswith("rule: the threshold follows the evidence: a change counts when it exceeds 0.5%")


def test_csv_prints_the_aggregate_rows(suite):
    code, out, err = suite("compare", "--baseline", "huggingface", "--aggregate", "label=liger_version", "-o", "csv")
    assert code == 0, err
    header, alpha, beta = out.splitlines()
    assert header == ("liger_version,implementation,label,baseline,metric,configurations,slower,faster,same,"
                      "inconclusive,unconfirmed,geomeanRatio,ciLow,ciHigh,worstRun,worstRatio,worstVerdict")
    # each kernel's implementation is a row of its own, under the one release
    assert alpha.startswith("0.1.0,liger-alpha-liger-triton,,liger-alpha-transformers-eager,latency,3,1,1,0,1,0,")
    assert beta.startswith("0.1.0,liger-beta-liger-triton,,liger-beta-transformers-eager,latency,2,0,1,0,0,1,")
    *_, run, ratio, verdict = alpha.split(",")
    assert (run, float(ratio), verdict) == (ALPHA_1024, pytest.approx(_ratio((1.00, 1.01), (1.20, 1.21))), "slower")


def test_only_shows_fewer_rows_but_the_aggregates_count_every_row(suite):
    code, out, _ = suite("compare", "--baseline", "huggingface", "--aggregate", "operation", "--only", "slower",
                         "-o", "json")
    document = json.loads(out)
    assert code == 0 and len(document["groups"]) == 1
    assert [a["configurations"] for a in document["aggregates"]] == [3, 2]


def test_python_api_equals_the_json(suite, store):
    import kidx

    code, out, _ = suite("compare", "--baseline", "huggingface", "--aggregate", "implementation", "-o", "json")
    assert code == 0
    with kidx.open_store(store) as opened:
        comparison = opened.compare(baseline="huggingface", aggregate="implementation")
    assert comparison.to_dict() == json.loads(out)
    assert [row.result.configurations for row in comparison.aggregates] == [3, 2]
    # the key is the implementation: one field, by name
    first = comparison.to_dict()["aggregates"][0]
    assert first["implementation"] == "liger-alpha-liger-triton" and "operation" not in first


@pytest.mark.parametrize(("value", "message"), [
    ("kernel", 'invalid --aggregate value "kernel": use "operation", "implementation" or "label=KEY"'),
    ("label=", 'invalid --aggregate value "label=": use "operation", "implementation" or "label=KEY"'),
    ("label=worst", 'invalid --aggregate value "label=worst": "worst" is a field of the aggregate records; '
                    "aggregate by a label of another name"),
])
def test_a_bad_key_is_a_usage_error_naming_aggregate(suite, value, message):
    code, out, err = suite("compare", "--aggregate", value)
    assert (code, out, err) == (2, "", f"error: {message}\n")


def test_completion_offers_the_keys_and_the_stores_label_keys(suite, store):
    from kidx.cli.completion import candidates

    location = ["--store", str(store)]
    assert candidates([*location, "compare", "--aggregate"], "") == ["operation", "implementation", "label="]
    assert candidates([*location, "compare", "--aggregate"], "label=li") == ["label=liger_version"]
