#!/usr/bin/env python3
"""kidx publish at scale: a generated store of N runs (bench_store.py's generator),
published into an empty folder, published again unchanged, and its index page opened in
headless Chromium.

    .venv/bin/python bench/bench_publish.py [--runs 100000] [--out bench/out]

Figures, each from this one run:
- ``kidx publish`` of the whole store into an empty folder, a cold process: wall time,
  CPU time (user and system, its worker processes' included: ``wait4`` counts the
  children it waited for) and peak resident memory (the child's ``ru_maxrss``: the
  largest of it and its worker processes, each counting the memory it shares);
- the same again into the same folder (nothing changed: every file compared, none written);
- the site's bytes (every file's size, its list .kidx-site included), in all and per kind
  of page;
- the index page in headless Chromium (/usr/bin/chromium, Playwright): navigation start
  to the load event plus two animation frames (the matrix laid out and painted),
  median of --repeats loads; a run page's sections drawn from its data; and the largest
  page of groups/ and of series/ with the section its address names drawn from its data.
Targets at 100,000 runs: publish <= 30 s, the site <= 200 MB, index load and draw <= 1 s.
The report goes to ``--out`` as bench_publish-STAMP.{txt,json}; the script always exits 0.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
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
PUBLISH_TARGET_S = 30.0
SITE_TARGET_BYTES = 200e6
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


def timed(argv: list[str]) -> tuple[float, str, int, float]:
    """Wall seconds, standard error, peak resident bytes and CPU seconds (user and system)
    of one command."""
    with tempfile.TemporaryFile() as errors:
        start = time.perf_counter()
        child = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=errors)
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - start
        child.returncode = os.waitstatus_to_exitcode(status)
        errors.seek(0)
        text = errors.read().decode("utf-8", "replace").strip()
    if child.returncode:
        raise SystemExit(f"{' '.join(argv)}: exit {child.returncode}: {text}")
    return wall, text, usage.ru_maxrss * 1024, usage.ru_utime + usage.ru_stime  # ru_maxrss: KiB on Linux


def page_kind(path: str) -> str:
    """``runs/*.html``, ``groups/*.json``, ``index.html``: what a file of the site is."""
    folder, _, name = path.rpartition("/")
    return f"{folder}/*{Path(name).suffix}" if folder else name


def site_bytes(site: Path) -> dict[str, tuple[int, int]]:
    """Files and bytes per kind of page, largest first."""
    kinds: dict[str, list[int]] = {}
    for path in site.rglob("*"):
        if path.is_file():
            counts = kinds.setdefault(page_kind(str(path.relative_to(site))), [0, 0])
            counts[0] += 1
            counts[1] += path.stat().st_size
    return {kind: (n, size) for kind, (n, size) in sorted(kinds.items(), key=lambda item: -item[1][1])}


# a run page is drawn once its script has drawn the runs from its data (a page without
# data, as the run pages of kidx before 2026-12-02 are, once it has loaded); null when
# the runs are not drawn within 30 s
RUNS_DRAWN = ("() => new Promise(done => { const wait = () => { const data = document.getElementById('run-data')"
              " || document.getElementById('page-data');"
              " if (!data || data.hasAttribute('data-drawn'))"
              " requestAnimationFrame(() => requestAnimationFrame(() => done(performance.now())));"
              " else if (performance.now() > 30000) done(null); else setTimeout(wait, 5); }; wait(); })")


def drawn_times(page, address: str, repeats: int) -> list[float]:
    """Seconds to load a page that draws from its data (a run page, or a shard page at one
    section's address) until it has drawn, ``repeats`` times after a first load."""
    times = []
    for _ in range(repeats + 1):
        page.goto("about:blank")
        page.goto(address, wait_until="load")
        drawn = page.evaluate(RUNS_DRAWN)
        if drawn is None:
            raise SystemExit(f"{address}: not drawn within 30 s")
        times.append(drawn / 1000)
    return times[1:]


def section_address(site: Path, folder: str) -> str | None:
    """The address of the first section of the largest page of ``folder`` (groups/, series/)."""
    pages = sorted((site / folder).glob("*.html"), key=lambda p: p.stat().st_size)
    if not pages:
        return None
    found = re.search(r'<section class="shard" id="([0-9a-f]+)">', pages[-1].read_text(encoding="utf-8"))
    return f"{pages[-1].as_uri()}#{found[1]}" if found else None


def browser_times(site: Path, repeats: int) -> tuple[list[float], list[float], dict[str, list[float]]]:
    """Seconds to load and draw the index, the largest run page with its sections drawn,
    and the largest page of groups/ and of series/ with a section drawn."""
    from playwright.sync_api import sync_playwright

    run_page = max((site / "runs").glob("*.html"), key=lambda p: p.stat().st_size)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch_persistent_context(
            tempfile.mkdtemp(prefix="kidx-bench-chromium-"), executable_path="/usr/bin/chromium", headless=True,
            args=BROWSER_ARGS, viewport={"width": 1366, "height": 900})
        page = browser.new_page()
        index = load_times(page, (site / "index.html").as_uri(), repeats)
        runs = drawn_times(page, run_page.as_uri(), repeats)
        sections = {}
        for folder in ("groups", "series"):
            address = section_address(site, folder)
            if address:
                sections[folder] = drawn_times(page, address, repeats)
        browser.close()
    return [t / 1000 for t in index], runs, sections


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
    first, first_note, first_rss, first_cpu = timed([*kidx, "publish", str(site), *options])
    again, again_note, again_rss, again_cpu = timed([*kidx, "publish", str(site), *options])
    kinds = site_bytes(site)
    total = sum(size for _, size in kinds.values())
    loads, run_loads, section_loads = browser_times(site, args.repeats)
    load = statistics.median(loads)
    run_load = statistics.median(run_loads)
    n = f"{args.runs:,}"
    summary = [
        [f"kidx publish, {n} runs, empty folder", f"{first:.1f} s", f"<= {PUBLISH_TARGET_S:.0f} s",
         "PASS" if first <= PUBLISH_TARGET_S else "FAIL"],
        [f"the site's bytes, {n} runs", f"{total / 1e6:.0f} MB", f"<= {SITE_TARGET_BYTES / 1e6:.0f} MB",
         "PASS" if total <= SITE_TARGET_BYTES else "FAIL"],
        [f"kidx publish again, {n} runs, nothing changed", f"{again:.1f} s", "info", "info"],
        [f"index page load and draw in headless Chromium, {n} runs", f"{load * 1000:.0f} ms",
         f"<= {INDEX_TARGET_S * 1000:.0f} ms", "PASS" if load <= INDEX_TARGET_S else "FAIL"],
    ]
    runs_per_page = args.runs / kinds["runs/*.html"][0] if "runs/*.html" in kinds else 0
    tables = [{
        "section": f"{n} runs: kidx publish",
        "header": ["measure", "figure", "note"],
        "rows": [
            ["publish into an empty folder", f"{first:.1f} s", first_note.split("; ")[0].split(": ", 1)[-1]],
            ["its CPU time (user and system)", f"{first_cpu:.1f} s",
             "what the publish costs a CPU; the wall time is that plus waiting for a CPU and the disk"],
            ["its peak resident memory", f"{first_rss / 1e6:.0f} MB", ""],
            ["publish again (nothing changed)", f"{again:.1f} s", again_note.split("; ")[-1]],
            ["its CPU time (user and system)", f"{again_cpu:.1f} s", ""],
            ["its peak resident memory", f"{again_rss / 1e6:.0f} MB", ""],
            ["index load and draw (median)", f"{load * 1000:.0f} ms",
             f"{len(loads)} loads: " + ", ".join(f"{t * 1000:.0f}" for t in loads) + " ms"],
            ["the largest run page: load, inflate its data and draw its runs (median)", f"{run_load * 1000:.0f} ms",
             f"{len(run_loads)} loads: " + ", ".join(f"{t * 1000:.0f}" for t in run_loads) + " ms"],
            *([f"the largest page of {folder}/: load, inflate its data and draw one section (median)",
               f"{statistics.median(times) * 1000:.0f} ms",
               f"{len(times)} loads: " + ", ".join(f"{t * 1000:.0f}" for t in times) + " ms"]
              for folder, times in section_loads.items()),
            ["machine load (1-minute average), before and after", f"{load_before:.1f}, {os.getloadavg()[0]:.1f}",
             f"on {os.cpu_count()} CPUs shared with other work"],
        ],
    }, {
        "section": f"{n} runs: the site's bytes by kind of page",
        "header": ["files", "count", "bytes", "per file", "note"],
        "rows": [[kind, f"{count:,}", f"{size / 1e6:.2f} MB", f"{size / count / 1e3:.1f} kB",
                  f"{runs_per_page:.1f} runs a page on average" if kind == "runs/*.html" else ""]
                 for kind, (count, size) in kinds.items()]
                + [["all", f"{sum(c for c, _ in kinds.values()):,}", f"{total / 1e6:.2f} MB",
                    f"{total / args.runs:.0f} B per run", ""]],
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
