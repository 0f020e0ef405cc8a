#!/usr/bin/env python3
"""kidx publish at scale: a generated store of N runs (bench_store.py's generator),
published into an empty folder, published again unchanged, and its index page opened in
headless Chromium.

    .venv/bin/python bench/bench_publish.py [--runs 100000] [--out bench/out]

Figures, each from this one run:
- ``kidx publish`` of the whole store into an empty folder, a cold process (wall time);
- the same again into the same folder (nothing changed: every file compared, none written);
- the index page in headless Chromium (/usr/bin/chromium, Playwright): navigation start
  to the load event plus two animation frames (the matrix laid out and painted),
  median of --repeats loads.
Targets: publish <= 60 s at 100,000 runs; index load and draw <= 1 s. The report goes to
``--out`` as bench_publish-STAMP.{txt,json}; the script always exits 0.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

from bench_charts import BROWSER_ARGS, load_times, write_report  # noqa: E402
from bench_store import generate, kidx_command  # noqa: E402

SEED = 20261130
PUBLISH_TARGET_S = 60.0
INDEX_TARGET_S = 1.0


def build_store(n: int, work: Path, kidx: list[str]) -> Path:
    store = work / f"publish-store-{n}"
    if (store / "catalog.sqlite").exists():
        return store
    data = generate(n, SEED)
    listing = work / f"publish-store-{n}.json"
    listing.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": data.documents}), encoding="utf-8")
    subprocess.run([*kidx, "apply", "-f", str(listing), "--store", str(store)], check=True, stdout=subprocess.DEVNULL)
    listing.unlink()
    return store


def timed(argv: list[str]) -> tuple[float, str]:
    start = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, check=True)
    return time.perf_counter() - start, done.stderr.strip()


def index_load_times(site: Path, repeats: int) -> list[float]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch_persistent_context(
            tempfile.mkdtemp(prefix="kidx-bench-chromium-"), executable_path="/usr/bin/chromium", headless=True,
            args=BROWSER_ARGS, viewport={"width": 1366, "height": 900})
        times = load_times(browser.new_page(), (site / "index.html").as_uri(), repeats)
        browser.close()
    return [t / 1000 for t in times]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=100_000)
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "out")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    kidx = kidx_command()
    began = time.perf_counter()
    load_before = os.getloadavg()[0]
    store = build_store(args.runs, args.out, kidx)
    site = Path(tempfile.mkdtemp(prefix="kidx-bench-site-", dir=args.out)) / "site"
    options = ["--store", str(store), "--baseline", "transformers", "--release-label", "liger_version"]
    first, first_note = timed([*kidx, "publish", str(site), *options])
    again, again_note = timed([*kidx, "publish", str(site), *options])
    index_bytes = (site / "index.html").stat().st_size
    loads = index_load_times(site, args.repeats)
    load = statistics.median(loads)
    n = f"{args.runs:,}"
    summary = [
        [f"kidx publish, {n} runs, empty folder", f"{first:.1f} s", f"<= {PUBLISH_TARGET_S:.0f} s",
         "PASS" if first <= PUBLISH_TARGET_S else "FAIL"],
        [f"kidx publish again, {n} runs, nothing changed", f"{again:.1f} s", "info", "info"],
        [f"index page load and draw in headless Chromium, {n} runs", f"{load * 1000:.0f} ms",
         f"<= {INDEX_TARGET_S * 1000:.0f} ms", "PASS" if load <= INDEX_TARGET_S else "FAIL"],
    ]
    tables = [{
        "section": f"{n} runs: kidx publish",
        "header": ["measure", "figure", "note"],
        "rows": [
            ["publish into an empty folder", f"{first:.1f} s", first_note.split("; ")[0].split(": ", 1)[-1]],
            ["publish again (nothing changed)", f"{again:.1f} s", again_note.split("; ")[-1]],
            ["index.html", f"{index_bytes / 1e6:.2f} MB", ""],
            ["index load and draw (median)", f"{load * 1000:.0f} ms",
             f"{len(loads)} loads: " + ", ".join(f"{t * 1000:.0f}" for t in loads) + " ms"],
            ["machine load (1-minute average), before and after", f"{load_before:.1f}, {os.getloadavg()[0]:.1f}",
             f"on {os.cpu_count()} CPUs shared with other work"],
        ],
    }]
    code = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True,
                          text=True).stdout.strip()
    report = {
        "meta": {"title": "Publishing a site", "script": "bench/bench_publish.py", "date": time.strftime("%Y-%m-%d"),
                 "cpus": os.cpu_count(), "python": platform.python_version(), "code": code, "sizes": [args.runs],
                 "total_s": round(time.perf_counter() - began)},
        "tables": tables, "summary": summary,
    }
    write_report(args.out, "bench_publish", report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
