"""kidx publish marks the points whose timing is likely the host's: the group pages, the
series pages and the index and kernel cells, by the host-bound evidence `kidx compare`
reports for the same runs (docs/analysis.md, "Is a timing the kernel's or the host's?").

Liger's published LayerNorm on the H100 (tests/data/liger): its backward is flat at
120 µs from hidden 1,024 to 2,048, its launch floor, below Hugging Face's 61 µs."""

from __future__ import annotations

import csv
import html as html_text
import json
import re
from pathlib import Path

import pytest
from conftest import LIGER_DATA
from markupsafe import escape

pytest.importorskip("jinja2")

RELEASE = "9.9.9"  # a second observation of each row, so that every point has a series
MARK = '<em class="host" title="'


def _layer_norm(folder: Path) -> list[Path]:
    """Liger's LayerNorm speed rows, as published, and the same rows again a year later
    under another release (a series of two points each)."""
    with (LIGER_DATA / "all_benchmark_data.csv").open(newline="", encoding="utf-8") as source:
        rows = list(csv.reader(source))
    header, kept = rows[0], [row for row in rows[1:] if row[0] == "layer_norm" and row[3] == "speed"]
    stamp, release = header.index("timestamp"), header.index("liger_version")
    again = [[*row[:stamp], str(int(row[stamp][:4]) + 1) + row[stamp][4:], RELEASE, *row[release + 1:]]
             for row in kept]
    files = []
    for name, body in (("published.csv", kept), ("again.csv", again)):
        path = folder / name
        with path.open("w", newline="", encoding="utf-8") as out:
            csv.writer(out).writerows([header, *body])
        files.append(path)
    return files


def _sections(site: Path, folder: str) -> list[dict]:
    from kidx.publish.tree import html, unpack

    found = []
    for page in sorted((site / folder).glob("*.html")):
        data = unpack(re.search(r'<div id="page-data" data-deflate="([A-Za-z0-9+/=]*)" hidden></div>',
                                page.read_text(encoding="utf-8"))[1])
        found += [{**section, "html": html(section["body"])} for section in data.values()]
    return found


def _marked(section_html: str) -> dict[str, str]:
    """Each table row's run (its link's text) and its mark's reason, for the rows marked."""
    found = {}
    for row in re.findall(r"<tr[^>]*>(.*?)</tr>", section_html):
        mark = re.search(r'<em class="host" title="([^"]*)">⚑ ([^<]*)</em>', row)
        if mark:
            run = re.findall(r'<a href="[^"]*/runs/[^"]*">([^<]*)</a>', row)[0]
            reason = html_text.unescape(mark[1])
            assert mark[2] == reason.partition(":")[0]  # the word shown: "likely host-bound"
            found[run] = reason
    return found


@pytest.fixture
def layer_norm_site(kidx, tmp_path):
    for path in _layer_norm(tmp_path):
        code, _, err = kidx("import", "liger", str(path))
        assert code == 0, err
    site = tmp_path / "site"
    code, _, err = kidx("publish", str(site), "--baseline", "transformers", "--release-label", "liger_version")
    assert code == 0, err
    # what compare says of the same runs: one row per run (an arm per release)
    code, out, err = kidx("compare", "--by", "label=liger_version", "-o", "json")
    assert code == 0, err
    rows = [row for group in json.loads(out)["groups"] for row in group["rows"]]
    assert len(rows) == 2 * 50  # each of the 50 speed rows twice
    flagged = {}
    for row in rows:
        assert row["hostBound"] is None  # no kernel-timer twin here: the data alone
        if row["likelyHostBound"]:
            flagged[row["run"]] = "likely host-bound: " + "; ".join(row["hostBoundReasons"])
    return site, flagged


def test_group_and_series_pages_mark_exactly_the_points_compare_calls_host_bound(layer_norm_site):
    site, flagged = layer_norm_site
    groups = _sections(site, "groups")
    drawn = {point["run"]: point for section in groups for line in section["data"]["lines"]
             for point in line["points"]}
    latest = {name: reason for name, reason in flagged.items() if name in drawn}
    # Liger's LayerNorm backward on the H100 at hidden 1,024 and 2,048 (its launch floor)
    backward = sorted(name for name in latest if "backward-liger-nvidia-h100" in name)
    assert [re.search(r"-n(\d+)-", name)[1] for name in backward] == ["1024", "2048"]
    marked = {}
    for section in groups:
        marked.update(_marked(section["html"]))
    assert marked == latest
    # the data, the chart's points (a dashed ring, the hover box's reason) and the list below it
    assert {name: point["host"] for name, point in drawn.items() if "host" in point} == latest
    for section in groups:
        body = section["html"]
        names = [point["run"] for line in section["data"]["lines"] for point in line["points"]]
        shown = [name for name in names if name in latest]
        assert body.count('<circle class="host"') == body.count("data-host=") == len(shown)
        for name in shown:
            assert f'data-host="{html_text.escape(latest[name])}"' in body
            assert f"</strong>: {html_text.escape(latest[name], quote=False)}</li>" in body
        assert ("Likely host-bound points" in body) == bool(shown)
        assert ("a dashed ring marks a point whose timing is likely the host" in body) == bool(shown)
    # the series pages: every observation, both releases'
    series = _sections(site, "series")
    marked = {}
    for section in series:
        marked.update(_marked(section["html"]))
    assert marked == flagged and len(flagged) == 2 * len(latest)
    assert sum(section["html"].count('<circle class="host"') for section in series) == len(flagged)


def test_index_and_kernel_cells_mark_those_with_host_bound_points(layer_norm_site):
    site, flagged = layer_norm_site
    index = (site / "index.html").read_text(encoding="utf-8")
    cells = re.findall(r'<td class="cell [^"]*"><a href="[^"]*" title="([^"]*)"><span class="v">[^<]*</span>'
                       r'(<span class="hb">⚑</span>)?', index)
    tips = [html_text.unescape(tip) for tip, mark in cells if mark]
    assert all("⚑" in html_text.unescape(tip) for tip, mark in cells if mark)
    assert not any("⚑" in html_text.unescape(tip) for tip, mark in cells if not mark)
    # Liger's LayerNorm backward on the H100: 2 of its 5 shapes, at hidden 1,024 first
    assert any(tip.startswith("0.88× the baseline's speed, geometric mean of 5 shapes") and tip.endswith(
        "; ⚑ 2 of 5 shapes' timings likely the host's, not the kernel's (hidden size 1024: likely host-bound: "
        "12.5% of the GPU's roofline (below 25%) at a working set of 48 MiB (at most 256 MiB))") for tip in tips)
    assert len(tips) == len({(name.split("-nvidia-")[0], name.split("-nvidia-")[1][:4])
                             for name in flagged})  # a cell per pass, implementation and GPU with a marked point
    assert "⚑: some of its shapes' timings are likely the host's" in index
    kernel = next((site / "kernels").glob("*.html")).read_text(encoding="utf-8")
    assert kernel.count('<span class="hb">⚑</span>') == index.count('<span class="hb">⚑</span>')


HOSTILE = '<img src=x onerror="alert(1)">&'


def test_a_hostile_parameter_in_the_reason_is_escaped(kidx, tmp_path):
    """The flat-sweep reason names the swept parameter, a stored string: escaped in the
    index's hover text and in the group page's elements, never markup."""
    documents = [
        {"kind": "BenchmarkProtocol", "metadata": {"name": "events"},
         "spec": {"harness": {"name": "bench.py"}, "measurement": {"metric": "latency", "timer": "cuda_events"}}},
        {"kind": "ExecutionEnvironment", "metadata": {"name": "h200"},
         "spec": {"hardware": {"vendor": "nvidia", "product": "H200 SXM 141GB"}}},
    ]
    for library in ("torch", "triton"):
        documents.append({"kind": "Implementation", "metadata": {"name": library}, "spec": {"library": library}})
    for size in (1024, 2048, 4096, 8192):
        documents.append({"kind": "Workload", "metadata": {"name": f"norm-{size}"},
                          "spec": {"operation": "norm", "parameters": {HOSTILE: size}}})
        for library in ("torch", "triton"):
            documents.append({"kind": "BenchmarkRun", "metadata": {"name": f"{library}-{size}"},
                              "spec": {"status": "passed", "protocolRef": {"name": "events"},
                                       "workloadRef": {"name": f"norm-{size}"}, "implementationRef": {"name": library},
                                       "environmentRef": {"name": "h200"}, "observedAt": "2026-12-01T10:00:00Z",
                                       "timing": {"primaryStatistic": "median", "latencyNs": {"median": 100000}}}})
    items = [{"apiVersion": "kernelindex.dev/v1alpha1", **document} for document in documents]
    code, _, err = kidx("apply", "-f", "-", stdin=json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    assert code == 0, err
    site = tmp_path / "site"
    code, _, err = kidx("publish", str(site), "--baseline", "torch")
    assert code == 0, err
    reason = f"likely host-bound: flat sweep: latency x1.00 while {HOSTILE} grows x8 from here (exponent 0.00, below 0.5)"
    index = (site / "index.html").read_text(encoding="utf-8")
    assert "<img" not in index
    assert str(escape(f"shapes' timings likely the host's, not the kernel's ({HOSTILE} 1024: {reason})")) in index
    [section] = _sections(site, "groups")
    assert "<img" not in section["html"]
    for ratio in (8, 4, 2):  # from 1024, 2048 and 4096 to 8192; both implementations'
        shown = html_text.escape(reason.replace("x8", f"x{ratio}"))
        assert section["html"].count(f'title="{shown}">⚑ likely host-bound</em>') == 2
    marked = [point["run"] for line in section["data"]["lines"] for point in line["points"] if "host" in point]
    assert sorted(marked) == [f"{library}-{size}" for library in ("torch", "triton") for size in (1024, 2048, 4096)]
