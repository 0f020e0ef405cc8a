"""kidx publish: the site's files, their determinism, re-publishing, and escaping.

The pages are opened in a real browser by tests/publish/test_publish_browser.py; here the files
themselves are checked.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from conftest import REPO, SEED_RUN_NAME

pytest.importorskip("jinja2")

H200 = REPO / "tests" / "data" / "h200"
LIGER_OPTIONS = ("--baseline", "transformers", "--baseline", "torch", "--release-label", "liger_version")


def tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def run_data(page: str) -> dict:
    """A run page's data: the JSON its script draws the runs' sections from."""
    from kidx.publish.run_shards import read_data

    return read_data(re.search(r'<div id="run-data" data-deflate="([A-Za-z0-9+/=]*)" hidden></div>', page)[1])


def sections(site: Path, folder: str) -> dict[str, dict]:
    """The sections of a site's shard pages (``groups/``, ``series/``) by id, in the order
    of their ids: each one's title, data (a family's points), its elements written as HTML
    (``html``) and the page it is on (``page``)."""
    from kidx.publish.tree import html, unpack

    found = {}
    for page in sorted((site / folder).glob("*.html")):
        text = page.read_text()
        data = unpack(re.search(r'<div id="page-data" data-deflate="([A-Za-z0-9+/=]*)" hidden></div>', text)[1])
        assert re.findall(r'<section class="shard" id="([0-9a-f]+)">', text) == list(data), page
        for sid, section in data.items():
            assert sid.startswith(page.stem) and len(sid) == 16, (page, sid)
            found[sid] = {**section, "html": html(section["body"]), "page": page}
    return found


def publish(kidx, site: Path, *args: str, store_path=None):
    return kidx("publish", str(site), *args, store_path=store_path)


def test_liger_head_site_has_every_kind_of_page(kidx, head_store, tmp_path):
    site = tmp_path / "site"
    code, out, err = publish(kidx, site, *LIGER_OPTIONS, "--title", "Liger-Kernel", store_path=head_store)
    assert code == 0, err
    assert out == ""
    files = tree(site)
    runs = [p for p in files if p.startswith("runs/")]
    # runs whose digests share their first three hex digits share a page; each run is its anchor
    assert all(re.fullmatch(r"runs/[0-9a-f]{3}\.html", p) for p in runs)
    anchors = [m for p in runs for m in re.findall(r'<article class="run" id="([0-9a-f]{64})">', files[p].decode())]
    assert len(anchors) == len(set(anchors)) == 3897
    assert all(f"runs/{a[:3]}.html" in files for a in anchors)
    # the group families and the series: many to a page, each a section of it
    assert all(re.fullmatch(r"(groups|series)/[0-9a-f]{2}\.html", p) for p in files if p.startswith(("groups/", "series/")))
    groups = sections(site, "groups")
    assert len(sections(site, "series")) == 44  # 88 series, a page for each comparable group
    assert len([p for p in files if p.startswith("environments/")]) == 6
    assert {"index.html", "regressions.html", "assets/site.css", "assets/site.js", ".kidx-site"} <= set(files)
    assert err == (f"{site}: {len(files) - 1} files (3897 runs, {len(groups)} group families, 88 series); "
                   f"wrote {len(files) - 1}, 0 unchanged, removed 0\n")
    index = files["index.html"].decode()
    assert "<title>Index · Liger-Kernel</title>" in index
    assert "H100 80GB HBM3" in index  # column headers from the environments' stored titles
    # the seed's run page: its manifest, references and the commands that show it
    code, digest, _ = kidx("get", "run", SEED_RUN_NAME, "-o", "jsonpath={.metadata.digest}", store_path=head_store)
    hexdigits = digest.removeprefix("sha256:")
    seed = files[f"runs/{hexdigits[:3]}.html"].decode()
    assert f'<article class="run" id="{hexdigits}">\n<p class="lede"><code>{SEED_RUN_NAME}</code></p>\n</article>' in seed
    # the rest of each run's section is the page's data, which the site's script draws
    data = run_data(seed)
    assert [run["anchor"] for run in data["runs"]] == re.findall(r'<article class="run" id="([^"]+)">', seed)
    record = next(run for run in data["runs"] if run["anchor"] == hexdigits)
    assert (record["name"], record["digest"], record["status"]) == (SEED_RUN_NAME, digest, "passed")
    assert record["references"][0] == [
        "protocol", "sha256:080e6e66e4ec75a131aa0c9121c74b8e8eed64e7b6d621d567c6a28f79548be8"]
    environment = record["references"][2][1]
    assert data["objects"][environment][2] == (
        "environments/2750ae381d6de582f1eb6b9008e0987463d19ede8af127d97d76c5ae09121393.html")
    code, stored, _ = kidx("get", "run", SEED_RUN_NAME, "-o", "json", store_path=head_store)
    assert json.loads(record["manifest"]) == json.loads(stored)
    assert "\n" not in record["manifest"] and '"spec":{' in record["manifest"]  # compact: the script indents it
    # its speed of light (docs/speed-of-light.md): 553,648,128 B in 417.5 µs on an H100 SXM
    assert (record["measure"], record["sol"]) == ("417.5µs", "1.326TB/s, 39.6% of the H100 SXM 80GB HBM3's peak")


def test_group_page_curves_use_the_harness_axis_and_stored_titles(kidx, tmp_path):
    assert kidx("import", "liger", str(H200 / "all_benchmark_data.csv"), "--environment",
                str(H200 / "environment.yaml"))[0] == 0
    site = tmp_path / "site"
    code, _, err = publish(kidx, site, "--baseline", "transformers")
    assert code == 0, err
    families = [section["data"] for section in sections(site, "groups").values()]
    # four passes and metrics (forward, backward, full speed; full memory), each swept over seq
    assert sorted(f["x"]["parameter"] for f in families) == ["seq"] * 4
    assert {f["x"]["label"] for f in families} == {"sequence length"}
    for family in families:
        assert family["title"] == "Llama 4 rotary position embedding · hidden 8192 · kv_heads 8 · q_heads 32 · bf16"
        assert [(line["label"], line["baseline"], [p["x"] for p in line["points"]]) for line in family["lines"]] == [
            ("Hugging Face Transformers (eager)", True, [1024, 2048, 4096, 8192, 16384]),
            ("Liger (Triton)", False, [1024, 2048, 4096, 8192, 16384]),
        ]
    page = next(iter(sections(site, "groups").values()))["html"]
    assert "sequence length (log₂ scale)" in page
    assert page.count('<g class="series"') == 2
    assert page.count('<a class="pt"') == 10


def test_h200_nvbench_runs_publish_without_a_harness_axis(kidx, tmp_path):
    """NVBench states carry no axis label: the swept parameter is the one that varies."""
    assert kidx("import", "nvbench", str(H200 / "nvbench.json"), "--environment", str(H200 / "environment.yaml"))[0] == 0
    site = tmp_path / "site"
    assert publish(kidx, site)[0] == 0
    families = [section["data"] for section in sections(site, "groups").values()]
    assert len(families) == 2
    assert all(len(f["lines"]) == 1 and len(f["lines"][0]["points"]) == 2 for f in families)


@pytest.mark.slow
def test_the_same_store_gives_byte_identical_sites(kidx, history_store, tmp_path):
    first, second = tmp_path / "one", tmp_path / "two"
    assert publish(kidx, first, *LIGER_OPTIONS, store_path=history_store)[0] == 0
    assert publish(kidx, second, *LIGER_OPTIONS, store_path=history_store)[0] == 0
    assert tree(first) == tree(second)
    code, _, err = publish(kidx, first, *LIGER_OPTIONS, store_path=history_store)
    assert code == 0
    assert err.endswith(f"wrote 0, {len(tree(first)) - 1} unchanged, removed 0\n")


def test_history_has_sparklines_series_and_regressions(kidx, history_store, tmp_path):
    site = tmp_path / "site"
    assert publish(kidx, site, *LIGER_OPTIONS, store_path=history_store)[0] == 0
    index = (site / "index.html").read_text()
    assert index.count('<svg class="spark"') > 0
    regressions = (site / "regressions.html").read_text()
    rows = re.findall(r'<tr class="verdict-(\w+)"><td>([^<]*)</td><td class="num">([^<]*)</td>', regressions)
    # what got slower, confirmed or not, the largest change first
    assert rows and {text for _, text, _ in rows} <= {"slower", "unconfirmed (slower)"}
    changes = [float(change.rstrip("%")) for _, _, change in rows]
    assert changes == sorted(changes, reverse=True) and changes[-1] > 0
    # jsd on the H100 PCIe, 0.3.0 → 0.3.1: a release step on the page
    assert re.search(r"<td>0\.3\.0</td><td>0\.3\.1</td>", regressions)
    assert f"; {len(rows)} got slower: {len(rows)} unconfirmed (slower).</p>" in regressions
    assert "Not listed here" not in regressions  # fewer than the page's 1,000 rows


def test_republishing_rewrites_what_changed_and_removes_deleted_runs(kidx, tmp_path, seed_bundle):
    assert kidx("apply", "-f", "-", stdin=json.dumps(seed_bundle))[0] == 0
    assert kidx("import", "liger", str(H200 / "all_benchmark_data.csv"), "--environment",
                str(H200 / "environment.yaml"))[0] == 0
    site = tmp_path / "site"
    assert publish(kidx, site)[0] == 0
    (site / "CNAME").write_text("bench.example.org\n")  # the user's file: never touched
    before = tree(site)
    seed_page = "runs/6e7.html"
    assert 'id="6e70abf28bfccdbc8dde69ec6347a8f22a416952374d02a065d78a2cb9973cba"' in before[seed_page].decode()
    code, out, err = kidx("delete", "run", SEED_RUN_NAME)
    assert code == 0, err
    code, _, err = publish(kidx, site)
    assert code == 0, err
    after = tree(site)
    assert seed_page not in after and not (site / seed_page).exists()
    assert after["CNAME"] == b"bench.example.org\n"
    changed = sorted(p for p in after if p in before and after[p] != before[p])
    # the index and regressions pages lose the seed's row; its group family and environment go
    assert "index.html" in changed and ".kidx-site" in changed
    assert all(p in ("index.html", ".kidx-site") for p in changed), changed
    removed = sorted(set(before) - set(after))
    assert seed_page in removed
    assert err.endswith(f"wrote 1, {len(after) - 3} unchanged, removed {len(removed)}\n")


def test_a_folder_kidx_did_not_write_is_refused(kidx, tmp_path, seed_bundle):
    assert kidx("apply", "-f", "-", stdin=json.dumps(seed_bundle))[0] == 0
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "notes.md").write_text("mine\n")
    code, out, err = publish(kidx, folder)
    assert (code, out) == (1, "")
    assert err == (f"error: {folder} holds files that kidx publish did not write (no .kidx-site list there): "
                   "publish into an empty or new folder\n")
    assert sorted(p.name for p in folder.iterdir()) == ["notes.md"]
    # a checkout of a pages branch: only hidden entries, so the site may go there
    (folder / "notes.md").unlink()
    (folder / ".git").mkdir()
    assert publish(kidx, folder)[0] == 0
    assert (folder / "index.html").is_file() and (folder / ".git").is_dir()


def test_dry_run_writes_nothing(kidx, tmp_path, seed_bundle):
    assert kidx("apply", "-f", "-", stdin=json.dumps(seed_bundle))[0] == 0
    code, _, err = publish(kidx, tmp_path / "site", "--dry-run")
    assert code == 0
    assert "would write" in err and not (tmp_path / "site").exists()


HOSTILE = "<script>window.__pwned=1</script><img src=x onerror=window.__pwned=2>\"'&"


def hostile_bundle(seed_bundle: dict) -> dict:
    """The seed with a hostile string in every free-text place a store can hold one."""
    bundle = json.loads(json.dumps(seed_bundle))
    items = [item for item in bundle.values() if isinstance(item, dict) and "kind" in item]
    for item in items:
        metadata = item["metadata"]
        metadata["title"] = HOSTILE + " " + item["kind"]
        metadata.setdefault("annotations", {})["note"] = HOSTILE + "</pre></td></table>"
        metadata.setdefault("labels", {})["suite"] = "x-onmouseover-alert-1"
    run = next(item for item in items if item["kind"] == "BenchmarkRun")
    run["spec"]["sourceNative"]["benchmark"] = HOSTILE
    return bundle


def test_hostile_strings_are_escaped_everywhere(kidx, tmp_path, seed_bundle):
    code, _, err = kidx("apply", "-f", "-", stdin=json.dumps(hostile_bundle(seed_bundle)))
    assert code == 0, err
    site = tmp_path / "site"
    assert publish(kidx, site, "--title", HOSTILE)[0] == 0
    pages = {p: data.decode() for p, data in tree(site).items() if p.endswith(".html")}
    assert len(pages) >= 4
    for path, text in pages.items():
        assert "<script>window" not in text, path
        assert "<img src=x" not in text, path
        assert text.count("<script") == 1, path  # the site's own script only
    assert "&lt;script&gt;window.__pwned=1&lt;/script&gt;" in pages["index.html"]


def test_run_page_data_keeps_each_manifest_on_its_own_line(kidx, tmp_path, seed_bundle):
    """A run page's data is its document, then each run's manifest as JSON text, a line
    each: line breaks in a stored string stay escaped inside its manifest's line."""
    import base64
    import zlib

    bundle = json.loads(json.dumps(seed_bundle))
    run = next(item for item in bundle.values() if isinstance(item, dict) and item.get("kind") == "BenchmarkRun")
    note = "one\ntwo\r\nthree\u2028four\u0085five"
    run["metadata"].setdefault("annotations", {})["note"] = note
    assert kidx("apply", "-f", "-", stdin=json.dumps(bundle))[0] == 0
    site = tmp_path / "site"
    assert publish(kidx, site)[0] == 0
    page = (site / "runs" / "6e7.html").read_text(encoding="utf-8")  # the seed run's digest: sha256:6e70abf2…
    encoded = re.search(r'<div id="run-data" data-deflate="([A-Za-z0-9+/=]*)" hidden></div>', page)[1]
    document, *manifests = zlib.decompress(base64.b64decode(encoded)).decode("utf-8").split("\n")
    assert [record["name"] for record in json.loads(document)["runs"]] == [SEED_RUN_NAME]
    assert "manifest" not in json.loads(document)["runs"][0]
    code, stored, _ = kidx("get", "run", SEED_RUN_NAME, "-o", "json")
    assert code == 0 and len(manifests) == 1
    assert json.loads(manifests[0]) == json.loads(stored)
    assert json.loads(manifests[0])["metadata"]["annotations"]["note"] == note
    assert run_data(page)["runs"][0]["manifest"] == manifests[0]


def test_missing_runs_named_are_an_error(kidx, tmp_path, seed_bundle):
    assert kidx("apply", "-f", "-", stdin=json.dumps(seed_bundle))[0] == 0
    code, out, err = publish(kidx, tmp_path / "site", "no-such-run")
    assert (code, out) == (1, "")
    assert err == 'Error (NotFound): benchmarkruns.kernelindex.dev "no-such-run" not found\n'  # as get says it
    assert not (tmp_path / "site").exists()


def test_without_jinja2_the_error_says_what_to_install(kidx, tmp_path, seed_bundle, monkeypatch):
    import importlib.util

    assert kidx("apply", "-f", "-", stdin=json.dumps(seed_bundle))[0] == 0
    found = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *rest: None if name == "jinja2" else found(name, *rest))
    code, out, err = publish(kidx, tmp_path / "site")
    assert (code, out) == (1, "")
    assert err == "error: kidx publish renders its pages with Jinja2: pip install '.[publish]' from a checkout of kidx\n"
    assert not (tmp_path / "site").exists()


def test_base_url_names_each_page_s_canonical_address(kidx, tmp_path, seed_bundle):
    assert kidx("apply", "-f", "-", stdin=json.dumps(seed_bundle))[0] == 0
    site = tmp_path / "site"
    assert publish(kidx, site, "--base-url", "https://bench.example.org/kidx/")[0] == 0
    assert '<link rel="canonical" href="https://bench.example.org/kidx/index.html">' in (site / "index.html").read_text()
    assert '<link rel="canonical" href="https://bench.example.org/kidx/runs/6e7.html">' in (site / "runs/6e7.html").read_text()


def shifted_series(seed_bundle: dict) -> dict:
    """Ten releases of the seed's run, the latency a quarter higher from 0.5.0 on."""
    items = [seed_bundle["protocol"], seed_bundle["environment"]]
    values = [417000, 418000, 416500, 417500, 417200, 520000, 521000, 519500, 520500, 519800]
    for number, value in enumerate(values):
        run = json.loads(json.dumps(seed_bundle["run"]))
        run["metadata"]["name"] = f"shift-{number}"
        run["metadata"].setdefault("labels", {})["liger_version"] = f"0.{number}.0"
        run["spec"]["timing"]["latencyNs"]["median"] = value
        run["spec"]["measurements"] = [{"metric": "latency", "statistic": "p20", "unit": "ns", "value": value - 300},
                                       {"metric": "latency", "statistic": "p80", "unit": "ns", "value": value + 300}]
        run["spec"]["observedAt"] = f"2025-08-{number + 1:02d}T10:00:00.000Z"
        items.append(run)
    return {"apiVersion": "v1", "kind": "List", "items": items}


def test_series_pages_show_change_points_with_their_cause(kidx, tmp_path, seed_bundle):
    assert kidx("apply", "-f", "-", stdin=json.dumps(shifted_series(seed_bundle)))[0] == 0
    site = tmp_path / "site"
    assert publish(kidx, site, "--release-label", "liger_version")[0] == 0
    (section,) = sections(site, "series").values()
    text = section["html"]
    assert "<strong>Change point at 0.5.0</strong>: the level moved +24.7%" in text
    assert "cause: liger_version 0.4.0 → 0.5.0" in text
    assert text.count('<circle class="ring"') == 1  # the point after the change, ringed


def test_the_regressions_page_lists_at_most_its_rows_and_counts_the_rest(kidx, history_store, tmp_path, monkeypatch):
    from kidx.publish import site as pages

    monkeypatch.setattr(pages, "REGRESSION_ROWS", 10)
    site = tmp_path / "site"
    assert publish(kidx, site, *LIGER_OPTIONS, store_path=history_store)[0] == 0
    regressions = (site / "regressions.html").read_text()
    rows = re.findall(r'<tr class="verdict-(\w+)"><td>([^<]*)</td>', regressions)
    assert len(rows) == 10
    total = re.search(r"; ([0-9,]+) got slower: ([^<]*)\.</p>", regressions)
    counts = {verdict: int(n.replace(",", "")) for n, verdict in re.findall(r"([0-9,]+) ([a-z]+(?: \([a-z]+\))?)",
                                                                            total.group(2))}
    assert int(total.group(1).replace(",", "")) == sum(counts.values()) > 10
    listed = [text for _, text in rows]
    left = {verdict: n - listed.count(verdict) for verdict, n in counts.items() if n - listed.count(verdict)}
    assert "Not listed here: " + ", ".join(f"{n:,} {verdict}" for verdict, n in left.items()) in regressions


def test_without_a_release_label_the_regressions_page_follows_the_series(kidx, history_store, tmp_path):
    """Each series' latest step, its verdict with its direction, and no command line."""
    site = tmp_path / "site"
    assert publish(kidx, site, "--baseline", "torch", store_path=history_store)[0] == 0
    regressions = (site / "regressions.html").read_text()
    rows = re.findall(r'<tr class="verdict-(\w+)"><td>([^<]*)</td>', regressions)
    assert rows and rows == sorted(rows, key=lambda r: ["slower", "unconfirmed", "inconclusive", "same",
                                                        "faster"].index(r[0]))
    assert all(text == word or text.startswith(f"{word} (") for word, text in rows)
    assert any(text == "unconfirmed (slower)" for _, text in rows)
    assert "In the CLI" not in regressions


def _hint(page: str) -> list[str] | None:
    import html
    import shlex

    found = re.search(r"In the CLI: <code>(.*?)</code>", page)
    return shlex.split(html.unescape(found.group(1))) if found else None


@pytest.mark.parametrize("store_name", ["head_store", pytest.param("history_store", marks=pytest.mark.slow)])
def test_every_group_page_s_cli_hint_draws_that_page_s_chart(kidx, store_name, request, tmp_path):
    """Each group page's "In the CLI" command, run as printed (CSV instead of the SVG),
    gives exactly the points the page draws: same implementations, x values and runs.
    Only a page whose axis is not a number (Liger's model names) has none: plot draws
    numeric axes."""
    store_path = request.getfixturevalue(store_name)
    site = tmp_path / "site"
    assert publish(kidx, site, *LIGER_OPTIONS, store_path=store_path)[0] == 0
    pages = sections(site, "groups")
    assert len(pages) > 100
    hints = 0
    for name, section in pages.items():
        page = Path(f"{section['page'].name}#{name}")
        family = section["data"]
        hint = _hint(section["html"])
        numeric = all(isinstance(p["x"], (int, float)) for line in family["lines"] for p in line["points"])
        assert (hint is not None) == numeric, page
        if hint is None:
            continue
        assert hint[:2] == ["kidx", "plot"] and hint[-2:] == ["-o", "chart.svg"]
        csv_path = tmp_path / "chart.csv"
        code, _, err = kidx(*hint[1:-1], str(csv_path), store_path=store_path)
        assert code == 0, f"{page.name}: {' '.join(hint)}: {err}"
        import csv
        with csv_path.open() as handle:
            drawn = sorted((row["line"], float(row["x"]), row["run"]) for row in csv.DictReader(handle))
        assert len({row[0] for row in drawn}) == len(family["lines"])
        expected = sorted((line["implementation"], float(point["x"]) if family["x"]["parameter"] else drawn[0][1],
                           point["run"]) for line in family["lines"] for point in line["points"])
        assert drawn == expected, f"{page.name}: {' '.join(hint)}"
        hints += 1
    assert hints >= len(pages) - 10


def test_every_baseline_given_holds_on_series_pages(kidx, history_store, tmp_path):
    """--baseline transformers --baseline torch: a group without transformers is set
    against torch on its series page too, as kidx series --baseline torch sets it."""
    site = tmp_path / "site"
    assert publish(kidx, site, *LIGER_OPTIONS, store_path=history_store)[0] == 0
    pages = sections(site, "series")
    assert len(pages) == 89
    speedups = {name: re.findall(r'<td class="num">(\d+\.\d\d)×</td>', page["html"]) for name, page in pages.items()}
    assert [name for name, found in speedups.items() if not found] == []


def _cells(page: str) -> list[tuple[str, float]]:
    return [(cls, float(value)) for cls, value in
            re.findall(r'<td class="cell (\w+)"><a [^>]*><span class="v">([0-9.]+)×</span>', page)]


def test_cells_are_coloured_by_the_analysis_verdict_under_the_request_s_threshold(kidx, head_store, tmp_path):
    """A cell is faster or slower only where every shape is, by compare's rule under
    --threshold: at 50% no 1.3× is faster; one run a side is at most unconfirmed."""
    default, loose = tmp_path / "default", tmp_path / "loose"
    assert publish(kidx, default, "--baseline", "torch", store_path=head_store)[0] == 0
    code, _, err = publish(kidx, loose, "--baseline", "torch", "--threshold", "50", store_path=head_store)
    assert code == 0, err
    for site, threshold in ((default, 0.05), (loose, 0.5)):
        cells = [cell for page in [site / "index.html", *sorted((site / "kernels").glob("*.html"))]
                 for cell in _cells(page.read_text())]
        assert {cls for cls, _ in cells} <= {"faster", "slower", "same", "mixed", "inconclusive", "unconfirmed"}
        # a verdict beyond "same" needs the change beyond the threshold (rounded to two digits)
        assert all(abs(value - 1) > threshold - 0.01 or (1 / value - 1) > threshold - 0.01
                   for cls, value in cells if cls in ("faster", "slower"))
        assert all(value >= 0.99 for cls, value in cells if cls == "faster")
    loud = [cell for cell in _cells((default / "index.html").read_text()) if cell[0] in ("faster", "slower")]
    quiet = [cell for cell in _cells((loose / "index.html").read_text()) if cell[0] in ("faster", "slower")]
    assert len(quiet) < len(loud)
    assert "threshold 50%" in (loose / "index.html").read_text()
    code, _, err = publish(kidx, tmp_path / "bad", "--threshold", "100", store_path=head_store)
    assert (code, err) == (1, "error: invalid --threshold 100: a percentage from 0 up to, not including, 100\n")


def _sampled_run(name: str, implementation: str, workload: str, median: float, day: int) -> str:
    """A run of one shape with eight samples around ``median`` (µs), 1% apart."""
    samples = [median * (1 + 0.01 * (i - 4)) for i in range(8)]
    measurements = "".join(f"\n    - {{metric: latency, statistic: sample, unit: us, value: {v}}}" for v in samples)
    return f"""apiVersion: kernelindex.dev/v1alpha1
kind: BenchmarkRun
metadata: {{name: {name}}}
spec:
  status: passed
  observedAt: "2026-01-{day:02d}T00:00:00Z"
  timing: {{latencyNs: {{median: {median * 1000}}}, primaryStatistic: median}}
  protocolDigest: sha256:{"1" * 64}
  workloadDigest: sha256:{workload * 64}
  environmentDigest: sha256:{"3" * 64}
  implementationDigest: sha256:{implementation * 64}
  measurements:{measurements}
"""


def test_a_cell_judges_each_shape_as_compare_does(kidx, tmp_path):
    """Two shapes of one family, b against the baseline a: one run a side on shape 2 (its
    samples say faster; compare: unconfirmed, one run is no evidence of a change), three
    runs a side on shape 4 (faster, confirmed). The cell counts the verdicts compare prints
    for the same runs, and is coloured by neither."""
    manifests = [_sampled_run("a2", "a", "2", 100, 1), _sampled_run("b2", "b", "2", 80, 2)]
    manifests += [_sampled_run(f"a4-{i}", "a", "4", 100 + i, 3 + i) for i in range(3)]
    manifests += [_sampled_run(f"b4-{i}", "b", "4", 80 + i, 6 + i) for i in range(3)]
    assert kidx("apply", "-f", "-", stdin="---\n".join(manifests)).code == 0
    baseline = "sha256:" + "a" * 64
    code, out, err = kidx("compare", "--baseline", baseline, "-o", "json")
    assert code == 0, err
    printed = {}
    for group in json.loads(out)["groups"]:
        for row in group["rows"]:
            if row["verdict"] != "baseline":
                verdict = row["verdict"] + (f" ({row['withinRun']})" if row["withinRun"] else "")
                printed[verdict] = printed.get(verdict, 0) + 1
    assert printed == {"faster": 1, "unconfirmed (faster)": 1}
    site = tmp_path / "site"
    assert publish(kidx, site, "--baseline", baseline)[0] == 0
    cell = re.search(r'<td class="cell (\w+)"><a [^>]*title="([^"]*)"><span class="v">1\.2[0-9]×',
                     (site / "index.html").read_text())
    assert cell is not None
    assert cell.group(1) == "mixed"
    assert "; " + ", ".join(f"{n} {verdict}" for verdict, n in sorted(printed.items())) + "; 4 days" in cell.group(2)


def test_site_words_agree_with_the_cli(kidx, history_store, tmp_path):
    """Series verdicts keep their direction, memory says reduction, counts agree with
    publish's own line, releases sort as versions, run pages claim nothing untrue."""
    site = tmp_path / "site"
    code, _, err = publish(kidx, site, *LIGER_OPTIONS, store_path=history_store)
    assert code == 0, err
    series = re.search(r"(\d+) series\)", err).group(1)
    index = (site / "index.html").read_text()
    assert f"{series} series on 89 pages" in index
    pages = {name: section["html"] for name, section in sections(site, "series").items()}
    verdicts = {v for text in pages.values() for v in re.findall(r"<td>(unconfirmed[^<]*)</td>", text)}
    assert verdicts and all(re.fullmatch(r"unconfirmed \((faster|slower|same)\)", v) for v in verdicts)
    memory = [text for text in pages.values() if "peak memory of" in text]
    assert memory and all('<th scope="col">reduction</th>' in text and '<th scope="col">speedup</th>' not in text
                          for text in memory)
    options = re.search(r'<select data-key="liger_version">(.*?)</select>', index).group(1)
    versions = re.findall(r"<option>([^<]+)</option>", options)
    assert versions == sorted(versions, key=lambda v: [int(p) for p in v.split(".")])
    runs = [p.read_text() for p in (site / "runs").glob("*.html")]
    assert not any("Nothing in the published selection refers" in text for text in runs)


def test_two_runs_with_one_digest_have_anchors_of_their_own(kidx, tmp_path, seed_bundle):
    """One spec under two names is one digest: each run still has its own section id, and
    every link to a run leads to its own."""
    assert kidx("apply", "-f", "-", stdin=json.dumps(seed_bundle))[0] == 0
    code, out, _ = kidx("get", "run", SEED_RUN_NAME, "-o", "json")
    assert code == 0
    twin = json.loads(out)
    twin["metadata"] = {"name": "a-twin-of-the-seed"}
    assert kidx("apply", "-f", "-", stdin=json.dumps(twin))[0] == 0
    site = tmp_path / "site"
    code, _, err = publish(kidx, site)
    assert code == 0, err
    page = (site / "runs" / "6e7.html").read_text()
    digest = "6e70abf28bfccdbc8dde69ec6347a8f22a416952374d02a065d78a2cb9973cba"
    ids = re.findall(r'<article class="run" id="([^"]+)"', page)
    assert ids == [digest, f"{digest}-{SEED_RUN_NAME}"]  # the first name (a-twin…) keeps the digest's anchor
    assert len(set(re.findall(r'id="([^"]+)"', page))) == len(re.findall(r'id="([^"]+)"', page))
