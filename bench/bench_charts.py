#!/usr/bin/env python3
"""Why kidx publish draws its charts as SVG: the same chart (five lines on log axes, a
marker per point) drawn by kidx's SVG (kidx/publish/charts.py) and by uPlot, loaded in
headless Chromium, at 1,000 and 10,000 points.

    .venv/bin/python bench/bench_charts.py [--uplot uPlot.iife.min.js] [--out bench/out]

uPlot is not part of the repository: ``npm pack uplot`` and pass ``dist/uPlot.iife.min.js``
with ``--uplot``; without it only kidx's SVG is measured. Each figure is the median of
--repeats loads (after one warm-up) of navigation start to the load event plus two
animation frames, and the page's size. The script always exits 0.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))

from kidx.publish import charts  # noqa: E402

BROWSER_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                "--disable-background-networking", "--disable-component-update", "--disable-sync"]
LINES = 5


def data(points_per_line: int) -> tuple[list[float], list[list[float]]]:
    rng = random.Random(1)
    xs = [2 ** (i / (points_per_line / 10)) for i in range(points_per_line)]
    return xs, [[(1 + line) * x * (1 + 0.05 * rng.random()) for x in xs] for line in range(LINES)]


def svg_page(xs, ys) -> str:
    lines = [charts.ChartLine(f"line {n}", [
        charts.ChartPoint(x, y, None, None, "run.html", {"value": f"{y:.4g}", "run": f"run-{n}-{i}"})
        for i, (x, y) in enumerate(zip(xs, values, strict=True))]) for n, values in enumerate(ys)]
    svg = charts.line_chart(lines, "x", "y", lambda v: f"{v:.3g}", "benchmark chart")
    return f"<!doctype html><html><head><meta charset=utf-8></head><body>{svg}</body></html>"


def uplot_page(xs, ys) -> str:
    payload = json.dumps([xs, *ys])
    series = ",".join(f"{{label:'line {n}',stroke:'#333',dash:[{2 * n},2],points:{{show:true}}}}" for n in range(LINES))
    return ("<!doctype html><html><head><meta charset=utf-8><link rel=stylesheet href=uPlot.min.css>"
            "<script src=uPlot.iife.min.js></script></head><body><div id=c></div><script>"
            f"new uPlot({{width:880,height:420,scales:{{x:{{distr:3}},y:{{distr:3}}}},series:[{{}},{series}]}},"
            f"{payload},document.getElementById('c'));</script></body></html>")


# milliseconds from navigation start until two animation frames after the load event
DRAWN = "() => new Promise(done => requestAnimationFrame(() => requestAnimationFrame(() => done(performance.now()))))"


def load_times(page, url: str, repeats: int) -> list[float]:
    """Milliseconds to load and draw ``url``, ``repeats`` times after one uncounted load."""
    times = []
    for _ in range(repeats + 1):
        page.goto("about:blank")
        page.goto(url, wait_until="load")
        times.append(page.evaluate(DRAWN))
    return times[1:]


def _code() -> str:
    import subprocess

    return subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True,
                          text=True).stdout.strip()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--uplot", type=Path, help="uPlot.iife.min.js (its uPlot.min.css beside it)")
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "out")
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    args.out.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="kidx-charts-", dir=args.out))
    if args.uplot:
        shutil.copy(args.uplot, work / "uPlot.iife.min.js")
        css = args.uplot.with_name("uPlot.min.css")
        if css.exists():
            shutil.copy(css, work / "uPlot.min.css")
    began = time.perf_counter()
    rows = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch_persistent_context(
            str(work / "profile"), executable_path="/usr/bin/chromium", headless=True, args=BROWSER_ARGS)
        page = browser.new_page()
        for per_line in (200, 2000):
            xs, ys = data(per_line)
            kinds = [("kidx SVG", svg_page)] + ([("uPlot", uplot_page)] if args.uplot else [])
            for name, make in kinds:
                path = work / f"{name.split()[0].lower()}-{per_line}.html"
                path.write_text(make(xs, ys), encoding="utf-8")
                size = path.stat().st_size + (
                    (work / "uPlot.iife.min.js").stat().st_size if name == "uPlot" else 0)
                median = statistics.median(load_times(page, path.as_uri(), args.repeats))
                rows.append([name, f"{LINES * per_line:,}", f"{median:.0f} ms", f"{size / 1000:.0f} KB"])
        browser.close()
    library = (f"{args.uplot.name} {(work / 'uPlot.iife.min.js').stat().st_size:,} bytes"
               if args.uplot else "uPlot not measured")
    report = {
        "meta": {"title": "Chart drawing in the browser", "script": "bench/bench_charts.py",
                 "date": time.strftime("%Y-%m-%d"), "cpus": os.cpu_count(), "python": platform.python_version(),
                 "code": _code(), "total_s": round(time.perf_counter() - began)},
        "tables": [{"section": f"One chart, {LINES} lines on log axes, a marker per point ({library})",
                    "header": ["drawn by", "points", "load and draw (median)", "page + library"], "rows": rows}],
        "summary": [],
    }
    write_report(args.out, "bench_charts", report)
    return 0


def write_report(out: Path, name: str, report: dict) -> None:
    """NAME-STAMP.json (what render_performance.py reads) and .txt (its tables' rows), and print them."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    (out / f"{name}-{stamp}.json").write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    rows = [row for table in report["tables"] for row in table["rows"]] + report["summary"]
    text = "\n".join(" | ".join(row) for row in rows) + "\n"
    (out / f"{name}-{stamp}.txt").write_text(text, encoding="utf-8")
    print(text, end="")
    print(f"report: {out / f'{name}-{stamp}.json'}")


if __name__ == "__main__":
    sys.exit(main())
