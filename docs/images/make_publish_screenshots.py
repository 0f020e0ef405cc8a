#!/usr/bin/env python3
"""Make the screenshots docs/publish.md shows: the Liger history (tests/data/liger/history)
imported into a fresh store, published, and three pages photographed in headless Chromium.

    .venv/bin/python docs/images/make_publish_screenshots.py

Needs /usr/bin/chromium and the test extras (Playwright, Jinja2).
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
KIDX = [sys.executable, "-m", "kidx"]
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
        "--disable-component-update", "--disable-sync"]
# what the pictures show: jsd on the H100 PCIe across Liger 0.3.0 → 0.3.1, and a curve of five implementations
INDEX_SEARCH = "jensen"
GROUP_TITLE = "Tiled SwiGLU MLP"
SERIES_TITLE = "Jensen–Shannon divergence · batch 4 · seq 2048 · vocab 32768"


def _sections(site: Path, folder: str) -> list[tuple[str, str]]:
    """Each group family's or series' address (page#id) and its elements as HTML."""
    import re

    from kidx.publish.tree import html, unpack

    found = []
    for page in sorted((site / folder).glob("*.html")):
        data = unpack(re.search(r'data-deflate="([^"]*)"', page.read_text())[1])
        found += [(f"{page.as_uri()}#{name}", html(section["body"])) for name, section in data.items()]
    return found


def main() -> int:
    from playwright.sync_api import sync_playwright

    work = Path(tempfile.mkdtemp(prefix="kidx-shots-"))
    store, site = work / "store", work / "site"
    history = sorted(str(p) for p in (REPO / "tests" / "data" / "liger" / "history").glob("*.csv"))
    subprocess.run([*KIDX, "import", "liger", *history, "--store", str(store)], check=True, stdout=subprocess.DEVNULL)
    subprocess.run([*KIDX, "publish", str(site), "--store", str(store), "--title", "Liger-Kernel benchmarks",
                    "--baseline", "transformers", "--baseline", "torch", "--release-label", "liger_version"],
                   check=True)
    group = next(address for address, text in _sections(site, "groups")
                 if GROUP_TITLE in text and "B200" in text and "latency against" in text and "forward pass" in text)
    series = next(address for address, text in _sections(site, "series")
                  if SERIES_TITLE in text and "forward pass" in text and "memory" not in text)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch_persistent_context(
            str(work / "profile"), executable_path="/usr/bin/chromium", headless=True, args=ARGS,
            viewport={"width": 1366, "height": 860}, device_scale_factor=1)
        page = browser.new_page()
        page.goto((site / "index.html").as_uri())
        page.fill("#search", INDEX_SEARCH)
        page.screenshot(path=str(HERE / "publish-index.png"))
        page.goto(group)
        page.wait_for_selector("#page-data[data-drawn]", state="attached")
        page.locator("svg.chart g.series").nth(0).locator("a.pt").last.hover()
        page.screenshot(path=str(HERE / "publish-group.png"))
        page.goto(series)
        page.wait_for_selector("#page-data[data-drawn]", state="attached")
        page.locator("svg.chart g.series").nth(0).locator("a.pt").last.hover()
        page.screenshot(path=str(HERE / "publish-series.png"))
        browser.close()
    print(f"wrote {HERE / 'publish-index.png'}, publish-group.png, publish-series.png (site in {site})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
