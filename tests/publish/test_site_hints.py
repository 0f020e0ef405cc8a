"""The site's series and regressions pages: each "In the CLI" command reproduces its page,
the filters offer every release, and repeated runs of one release are drawn each at its
own place."""

from __future__ import annotations

import html
import json
import re
import shlex

import pytest
from test_publish import LIGER_OPTIONS, sections, shifted_series

from kidx.output.comparison import summary_text

pytest.importorskip("jinja2")


def _hint(page: str) -> list[str] | None:
    found = re.search(r"In the CLI: <code>(.*?)</code>", page)
    return shlex.split(html.unescape(found.group(1))) if found else None


def _page_points(page: str) -> list[tuple[str, str, str]]:
    """Each table row of a series page: (run, verdict as printed, speedup)."""
    rows = []
    for row in re.findall(r'<tr class="verdict-\w+">(.*?)</tr>', page):
        cells = re.findall(r"<td[^>]*>(.*?)</td>", row)
        run = re.search(r">([^<]+)</a>$", cells[8]).group(1)
        rows.append((run, html.unescape(cells[4]), cells[6]))
    return rows


def _verdict(point: dict) -> str:
    if point["verdict"] == "unconfirmed" and point.get("withinRun"):
        return f"unconfirmed ({point['withinRun']})"
    return point["verdict"] or ""


@pytest.mark.parametrize("store_name", ["head_store", pytest.param("history_store", marks=pytest.mark.slow)])
def test_every_series_page_s_cli_hint_gives_that_page_s_points(kidx, store_name, request, tmp_path):
    """Run as printed (-o json added), each series page's command follows the same
    implementations through the same runs, with the same verdicts and speedups over the
    baseline the page uses (the first --baseline the group holds)."""
    store_path = request.getfixturevalue(store_name)
    site = tmp_path / "site"
    assert kidx("publish", str(site), *LIGER_OPTIONS, store_path=store_path)[0] == 0
    pages = sections(site, "series")
    assert len(pages) > 40
    for name, section in pages.items():
        page = section["page"].with_name(f"{section['page'].name}#{name}")
        text = section["html"]
        hint = _hint(text)
        assert hint is not None and hint[:2] == ["kidx", "series"], page.name
        assert "--references" in hint and "--label" in hint and "--baseline" in hint, hint
        code, out, err = kidx(*hint[1:], "-o", "json", store_path=store_path)
        assert code == 0, f"{page.name}: {shlex.join(hint)}: {err}"
        found = json.loads(out)["series"]
        printed = [(p["run"], _verdict(p), f"{p['speedup']:.2f}×" if p.get("speedup") else "")
                   for one in found for p in one["points"]]
        assert sorted(printed) == sorted(_page_points(text)), f"{page.name}: {shlex.join(hint)}"


def _regression_rows(page: str) -> list[tuple[str, str, str, str]]:
    """Each row of the regressions page: (run, verdict as printed, change, release)."""
    rows = []
    for row in re.findall(r'<tr class="verdict-\w+">(.*?)</tr>', page):
        cells = re.findall(r"<td[^>]*>(.*?)</td>", row)
        run = re.search(r'title="([^"]+)"', cells[9]).group(1)
        rows.append((html.unescape(run), html.unescape(cells[0]), cells[1], html.unescape(cells[7])))
    return rows


def test_the_regressions_page_s_cli_line_gives_that_page_s_rows(kidx, history_store, tmp_path):
    """Run as printed (-o json added), the page's command gives the page's rows: each
    release against the one before it, what got slower, confirmed or not, with the same
    verdicts (their direction shown) and changes; never "Nothing compared"."""
    site = tmp_path / "site"
    assert kidx("publish", str(site), *LIGER_OPTIONS, "--threshold", "10", store_path=history_store)[0] == 0
    page = (site / "regressions.html").read_text()
    hint = _hint(page)
    assert hint == ["kidx", "compare", "--by", "label=liger_version", "--baseline", "previous", "--only", "slower",
                    "--threshold", "10"]
    code, out, err = kidx(*hint[1:], "-o", "json", store_path=history_store)
    assert code == 0, err
    printed = [(row["run"], _verdict(row), f"{(row['ratio'] - 1) * 100:+.1f}%", row["label"])
               for group in json.loads(out)["groups"] for row in group["rows"] if row["verdict"] != "baseline"]
    shown = _regression_rows(page)
    assert len(shown) >= 10 and "Not listed here" not in page
    assert sorted(printed) == sorted(shown)
    # one run of each release: no slowdown is confirmed, and each says which way it went
    assert {verdict for _, verdict, _, _ in shown} == {"unconfirmed (slower)"}
    assert "Nothing compared" not in kidx(*hint[1:], store_path=history_store).err
    lede = re.search(r'<p class="lede">(.*?)</p>', page).group(1)
    every = [*hint[1:6], *hint[8:]]  # without --only: every step compared
    summary = json.loads(kidx(*every, "-o", "json", store_path=history_store).out)["summary"]
    assert lede.endswith(f" {sum(summary.values())} steps compared: {summary_text(summary)}; {len(shown)} got "
                         f"slower: {len(shown)} unconfirmed (slower).")

def test_the_release_filter_offers_superseded_releases_in_version_order(kidx, history_store, tmp_path):
    """0.3.0 and 0.5.3 were measured, then measured again by a later release: their runs
    are no point's latest, and the filter still offers them."""
    site = tmp_path / "site"
    assert kidx("publish", str(site), *LIGER_OPTIONS, store_path=history_store)[0] == 0
    code, out, _ = kidx("get", "runs", "-o", "jsonpath={.items[*].metadata.labels.liger_version}",
                        store_path=history_store)
    releases = sorted(set(out.split()), key=lambda v: [int(p) for p in v.split(".")])
    assert {"0.3.0", "0.5.3"} <= set(releases)
    index = (site / "index.html").read_text()
    options = re.search(r'<select data-key="liger_version">(.*?)</select>', index).group(1)
    assert re.findall(r"<option>([^<]+)</option>", options) == releases


def test_runs_of_one_release_each_have_their_own_place_on_the_series_chart(kidx, tmp_path, seed_bundle):
    bundle = shifted_series(seed_bundle)
    runs = bundle["items"][2:]
    for run in runs[4:7]:  # three runs of 0.4.0, observed one after the other
        run["metadata"]["labels"]["liger_version"] = "0.4.0"
    assert kidx("apply", "-f", "-", stdin=json.dumps(bundle))[0] == 0
    site = tmp_path / "site"
    assert kidx("publish", str(site), "--release-label", "liger_version")[0] == 0
    (section,) = sections(site, "series").values()
    text = section["html"]
    line = re.search(r'<polyline class="line"[^>]* points="([^"]+)"', text).group(1)
    xs = [float(pair.split(",")[0]) for pair in line.split()]
    assert len(xs) == 10
    assert all(a < b for a, b in zip(xs, xs[1:], strict=False)), xs  # no two runs at one x: no vertical segment
    ticks = re.findall(r'<text x="([0-9.]+)" y="[0-9.]+" text-anchor="middle">(0\.\d\.0)</text>', text)
    assert [name for _, name in ticks] == ["0.0.0", "0.1.0", "0.2.0", "0.3.0", "0.4.0", "0.7.0", "0.8.0", "0.9.0"]
    middle = float(dict((name, x) for x, name in ticks)["0.4.0"])
    assert xs[5] == pytest.approx(middle, abs=0.1) and xs[4] < middle < xs[6]  # the three around their release


def test_a_step_s_cause_names_the_baseline_s_move_by_the_request_s_threshold(kidx, head_store, tmp_path):
    """A series step says the speedup over the baseline moved where it moved by
    --threshold or more: at 50 %, a 10 % move is no cause."""
    moves = {}
    for threshold in ("5", "50"):
        site = tmp_path / threshold
        assert kidx("publish", str(site), "--baseline", "torch", "--threshold", threshold, store_path=head_store)[0] == 0
        moves[threshold] = [abs(float(found)) for section in sections(site, "series").values()
                            for found in re.findall(r"speedup over the baseline ([+-][0-9.]+)%", section["html"])]
    assert moves["5"] and min(moves["5"]) >= 5 and any(move < 50 for move in moves["5"])
    assert all(move >= 50 for move in moves["50"])


def test_a_series_across_two_environments_of_one_machine_is_followed_by_its_hardware(kidx, tmp_path, seed_bundle):
    """The driver changed half-way: one machine, two environments, one series; the hint
    names the machine by its hardware fields and follows every point."""
    bundle = shifted_series(seed_bundle)
    upgraded = json.loads(json.dumps(seed_bundle["environment"]))
    upgraded["metadata"]["name"] = "liger-bench-nvidia-h100-80gb-hbm3-driver-570"
    upgraded["spec"]["software"] = {"driver": "570.86"}
    assert kidx("apply", "-f", "-", stdin=json.dumps(upgraded))[0] == 0
    code, digest, _ = kidx("get", "executionenvironment", upgraded["metadata"]["name"], "-o",
                           "jsonpath={.metadata.digest}")
    assert code == 0 and digest.startswith("sha256:")
    for run in bundle["items"][7:]:
        run["spec"]["environmentDigest"] = digest
    assert kidx("apply", "-f", "-", stdin=json.dumps(bundle))[0] == 0
    site = tmp_path / "site"
    assert kidx("publish", str(site), "--release-label", "liger_version")[0] == 0
    (section,) = sections(site, "series").values()
    text = section["html"]
    hint = _hint(text)
    assert hint[:2] == ["kidx", "series"] and "--field-selector" in hint, hint
    assert not any(part.startswith("environment/") for part in hint)
    code, out, err = kidx(*hint[1:], "-o", "json")
    assert code == 0, err
    (found,) = json.loads(out)["series"]
    assert [p["run"] for p in found["points"]] == [f"shift-{n}" for n in range(10)]
    assert sorted((p["run"], _verdict(p), "") for p in found["points"]) == sorted(_page_points(text))
