"""kidx publish's pages opened in a real browser: Debian's Chromium (/usr/bin/chromium,
installed by .ci/run when missing) driven by Playwright, headless, with background
networking off. The pages are opened from file://, as a person opening the folder would.

Skipped when Chromium or Playwright is not installed.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest
from conftest import REPO
from test_publish import HOSTILE, hostile_bundle, sections

CHROMIUM = Path("/usr/bin/chromium")
H200 = REPO / "tests" / "data" / "h200"
BROWSER_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync",
]

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="no /usr/bin/chromium (apt-get install chromium)")


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(tmp_path_factory.mktemp("chromium-profile")), executable_path=str(CHROMIUM), headless=True,
            args=BROWSER_ARGS, viewport={"width": 1366, "height": 900},
        )
        yield context
        context.close()


class Visit:
    """A page opened in the browser, with every console message, page error and request."""

    def __init__(self, browser, site: Path, path: str):
        self.site = site.resolve()
        self.page = browser.new_page()
        self.console: list[str] = []
        self.errors: list[str] = []
        self.requests: list[str] = []
        self.dialogs: list[str] = []
        self.page.on("console", lambda m: self.console.append(f"{m.type}: {m.text}"))
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("request", lambda r: self.requests.append(r.url))
        self.page.on("dialog", lambda d: (self.dialogs.append(d.message), d.dismiss()))
        file, _, anchor = path.partition("#")  # a section of a shard page: page#id
        self.page.goto((self.site / file).as_uri() + (f"#{anchor}" if anchor else ""))
        self.page.wait_for_load_state("load")
        drawn(self.page)

    def outside(self) -> list[str]:
        """Requests for anything but a file inside the site's folder."""
        out = []
        for url in self.requests:
            parsed = urlparse(url)
            if parsed.scheme != "file" or not Path(unquote(parsed.path)).resolve().is_relative_to(self.site):
                out.append(url)
        return out

    def close(self) -> None:
        self.page.close()


def drawn(page) -> None:
    """Wait until a run page's script has drawn its runs from the page's data, or a shard
    page the section its address names (inflating the data is asynchronous)."""
    if page.locator("#run-data").count():
        page.wait_for_selector("#run-data[data-drawn]", state="attached", timeout=10_000)
    if page.locator("#page-data").count():
        page.wait_for_selector("#page-data[data-drawn]", state="attached", timeout=10_000)


def section_address(site: Path, folder: str, index: int = 0) -> str:
    """The address (page#id) of a site's group family or series, the ``index``-th by id."""
    name, section = list(sections(site, folder).items())[index]
    return f"{folder}/{section['page'].name}#{name}"


def file_of(base: Path, href: str) -> Path:
    """The file a relative link leads to, its anchor left off."""
    return (base / href.partition("#")[0]).resolve()


@pytest.fixture
def h200_site(kidx, tmp_path) -> Path:
    assert kidx("import", "liger", str(H200 / "all_benchmark_data.csv"), "--environment",
                str(H200 / "environment.yaml"))[0] == 0
    site = tmp_path / "site"
    code, _, err = kidx("publish", str(site), "--baseline", "transformers", "--title", "H200 benchmarks")
    assert code == 0, err
    return site


def test_every_kind_of_page_loads_cleanly_and_stays_in_its_folder(browser, h200_site):
    family = section_address(h200_site, "groups")
    shard = sorted((h200_site / "groups").glob("*.html"))[0].relative_to(h200_site)  # no section named: its list
    run = sorted((h200_site / "runs").glob("*.html"))[0].relative_to(h200_site)
    environment = sorted((h200_site / "environments").glob("*.html"))[0].relative_to(h200_site)
    for path in ["index.html", "regressions.html", family, str(shard), str(run), str(environment)]:
        visit = Visit(browser, h200_site, path)
        assert visit.console == [] and visit.errors == [], path
        assert visit.outside() == [], path
        assert any(url.endswith("/assets/site.js") for url in visit.requests), path  # the script did load
        visit.close()


def test_group_page_draws_a_line_per_implementation_and_hover_shows_the_run(browser, h200_site):
    name, section = next((name, s) for name, s in sections(h200_site, "groups").items()
                         if s["data"]["metric"] == "latency")
    data = section["data"]
    visit = Visit(browser, h200_site, f"groups/{section['page'].name}#{name}")
    page = visit.page
    # the section the address names is drawn from the page's data, the page titled by it
    assert page.locator(f"section[id='{name}'] svg.chart").count() == 1
    assert page.title() == f"{data['title']} · H200 benchmarks"
    assert page.locator("section.shard:visible").count() == 1
    lines = page.locator("svg.chart g.series")
    assert lines.count() == len(data["lines"]) == 2
    assert [lines.nth(i).get_attribute("data-line") for i in range(2)] == [line["label"] for line in data["lines"]]
    assert page.locator("svg.chart polyline.line").count() == 2
    assert page.locator("svg.chart polygon.band").count() == 2
    # markers differ per line, not colour alone: a circle for the first, a square for the second
    assert lines.nth(0).locator("a.pt circle:not(.host)").count() == 5
    assert lines.nth(1).locator("a.pt rect").count() == 5
    # a likely host-bound point also has its dashed ring: one for each point whose data says why
    assert page.locator("svg.chart a.pt circle.host").count() == page.locator("svg.chart a.pt[data-host]").count()
    last = data["lines"][1]["points"][-1]
    point = lines.nth(1).locator("a.pt").last
    point.hover()
    tip = page.locator("#tip")
    assert tip.is_visible()
    text = tip.inner_text()
    assert last["run"] in text
    assert last["digest"][:19] in text
    assert point.get_attribute("data-value") in text
    assert "p20–p80" in text
    href = point.get_attribute("href")
    assert href == f"../runs/{last['digest'][7:10]}.html#{last['digest'][7:]}"
    point.click()
    page.wait_for_load_state("load")
    drawn(page)
    assert page.url == (h200_site / "runs" / f"{last['digest'][7:10]}.html").resolve().as_uri() + href[href.index("#"):]
    assert last["run"] in page.locator(f"article[id='{last['digest'][7:]}']").inner_text()
    assert visit.console == [] and visit.errors == []
    visit.close()


def test_a_run_page_draws_each_run_from_its_data(browser, kidx, h200_site):
    """From file://, with no fetch: every run's title, figure, references, commands and
    manifest, drawn from the page's compressed data."""
    code, out, _ = kidx("get", "runs", "-o", "json")
    assert code == 0
    runs = json.loads(out)["items"]
    run = runs[0]
    digest = run["metadata"]["digest"]
    visit = Visit(browser, h200_site, f"runs/{digest[7:10]}.html")
    page = visit.page
    on_page = [r for r in runs if r["metadata"]["digest"][7:10] == digest[7:10]]
    assert page.locator("#run-data").get_attribute("data-drawn") == str(len(on_page))
    article = page.locator(f"article[id='{digest[7:]}']")
    assert article.locator("h1.runname").inner_text() == run["metadata"]["title"]
    lede = article.locator("p.lede").inner_text()
    assert lede.startswith(f"{run['metadata']['name']} · {digest} · passed · ")
    assert f" · observed {run['spec']['observedAt']}" in lede
    rows = article.locator("table.facts tr")
    assert [rows.nth(i).locator("th").inner_text() for i in range(rows.count())] == [
        "protocol", "workload", "environment", "implementation"]
    environment = rows.nth(2).locator("a")
    assert environment.get_attribute("href") == f"../environments/{run['spec']['environmentDigest'][7:]}.html"
    assert (h200_site / "runs" / environment.get_attribute("href")).resolve().is_file()
    assert run["spec"]["protocolDigest"] in rows.nth(0).inner_text()
    assert article.locator("pre.cli").inner_text() == (f"kidx describe run {run['metadata']['name']}\n"
                                                       f"kidx get run {digest} -o yaml")
    assert json.loads(article.locator("pre.manifest").inner_text()) == run
    group = article.locator("p.crumbs a").first
    assert group.inner_text() == "group family"
    assert file_of(h200_site / "runs", group.get_attribute("href")).is_file()
    group.click()  # on to the family's section of its groups/ page, drawn there
    page.wait_for_load_state("load")
    drawn(page)
    family = page.url.rpartition("#")[2]
    assert page.locator(f"section[id='{family}'] svg.chart g.series").count() == 2, family
    assert visit.console == [] and visit.errors == [] and visit.outside() == []
    visit.close()


def test_a_run_page_shows_its_manifest_s_numbers_as_stored(browser, kidx, tmp_path, seed_bundle):
    """The script indents the manifest's JSON text without parsing it: an integer beyond
    2**53 (2**63 - 1, the largest the store takes) and a float keep every digit they were stored with."""
    run = seed_bundle["run"]
    run["spec"]["sourceNative"]["metrics"] = {"count": 2**63 - 1, "ratio": 1e-07}
    run["spec"]["sourceNative"]["benchmark"] = "a \\\"quoted\\\" [word], {not: json}"
    assert kidx("apply", "-f", "-", stdin=json.dumps(seed_bundle))[0] == 0
    site = tmp_path / "site"
    assert kidx("publish", str(site))[0] == 0
    code, out, _ = kidx("get", "run", run["metadata"]["name"], "-o", "json")
    stored = json.loads(out)
    digest = stored["metadata"]["digest"][7:]
    visit = Visit(browser, site, f"runs/{digest[:3]}.html")
    text = visit.page.locator(f"article[id='{digest}'] pre.manifest").inner_text()
    assert json.loads(text) == stored
    assert '"count": 9223372036854775807,\n' in text and '"ratio": 1e-07\n' in text
    assert '"benchmark": "a \\\\\\"quoted\\\\\\" [word], {not: json}",' in text  # a string is left as it is
    assert visit.console == [] and visit.errors == []
    visit.close()


def test_every_link_on_the_group_and_index_pages_resolves(browser, h200_site):
    for path in ["index.html", section_address(h200_site, "groups")]:
        visit = Visit(browser, h200_site, path)
        hrefs = visit.page.eval_on_selector_all("a[href]", "els => els.map(e => new URL(e.getAttribute('href'), document.baseURI).href)")
        assert len(hrefs) > 5
        for href in hrefs:
            address, _, anchor = href.partition("#")
            target = Path(unquote(urlparse(address).path))
            assert target.is_file(), (path, href)
            assert target.resolve().is_relative_to(h200_site.resolve())
            if anchor:
                assert f'id="{anchor}"' in target.read_text(), (path, href)
        visit.close()


def test_index_filters_and_search(browser, h200_site):
    visit = Visit(browser, h200_site, "index.html")
    page = visit.page
    rows = page.locator("#matrix tbody tr")
    total = rows.count()
    assert total == 8  # four passes, two implementations each
    assert page.locator("#shown").inner_text() == f"{total} of {total} rows"
    page.select_option("select[data-key=provider]", "liger")
    assert page.locator("#shown").inner_text() == f"4 of {total} rows"
    page.select_option("select[data-key=provider]", "")
    page.fill("#search", "transformers backward")
    assert page.locator("#shown").inner_text() == f"1 of {total} rows"
    visit.close()


def test_a_store_of_hostile_strings_runs_no_script(browser, kidx, tmp_path, seed_bundle):
    bundle = hostile_bundle(seed_bundle)
    again = json.loads(json.dumps(bundle["run"]))  # measured again a day later: a series of two points
    again["metadata"]["name"] += "-again"
    again["spec"]["observedAt"] = "2025-08-02T10:00:00.000Z"
    again["spec"]["timing"]["latencyNs"]["median"] = 520000
    assert kidx("apply", "-f", "-", stdin=json.dumps(bundle))[0] == 0
    assert kidx("apply", "-f", "-", stdin=json.dumps(again))[0] == 0
    site = tmp_path / "site"
    assert kidx("publish", str(site), "--title", HOSTILE)[0] == 0
    pages = sorted(str(p.relative_to(site)) for p in site.rglob("*.html"))
    # each group family and series drawn by the script from its page's data, as its address names it
    drawn_sections = [section_address(site, folder, i) for folder in ("groups", "series")
                      for i in range(len(sections(site, folder)))]
    assert any(path.startswith("groups/") for path in drawn_sections)
    assert any(path.startswith("series/") for path in drawn_sections)
    for path in pages + drawn_sections:
        visit = Visit(browser, site, path)
        assert visit.page.evaluate("typeof window.__pwned") == "undefined", path
        assert visit.dialogs == [] and visit.errors == [], path
        assert visit.outside() == [], path  # the <img src=x> never became a request
        assert HOSTILE.split(">")[0] in visit.page.locator("body").inner_text(), path  # shown as text
        if "#" in path:
            section = visit.page.locator(f"section[id='{path.rpartition('#')[2]}']")
            assert section.locator("svg.chart").count() == 1, path
            assert HOSTILE in section.inner_text(), path  # the stored titles, whole, as text
            assert section.locator("script, img").count() == 0, path
            visit.page.screenshot(path=str(tmp_path / f"hostile-{path.partition('/')[0]}.png"), full_page=True)
        visit.close()


def documented_ci_commands() -> list[str]:
    """The ``run: kidx …`` steps of the GitHub Actions job in docs/publish.md, in order."""
    text = (REPO / "docs" / "publish.md").read_text(encoding="utf-8")
    job = text.split("```yaml\n", 1)[1].split("```", 1)[0]
    return [line.split("- run: ", 1)[1] for line in job.splitlines() if line.strip().startswith("- run: kidx ")]


def test_the_documented_ci_job(browser, tmp_path):
    """The job's kidx commands exactly as docs/publish.md shows them, with the H200 fixtures
    as the new results, in a fresh folder with the job's KIDX_STORE; then the site opens."""
    commands = documented_ci_commands()
    assert [c.split()[:2] for c in commands] == [["kidx", "import"], ["kidx", "publish"]]
    teams = (REPO / "docs" / "teams.md").read_text(encoding="utf-8")
    assert all(f"\n{command}\n" in teams for command in commands)  # docs/teams.md shows the same lines
    results = tmp_path / "results"
    results.mkdir()
    shutil.copy(H200 / "all_benchmark_data.csv", results)
    shutil.copy(H200 / "environment.yaml", results)
    environment = {**os.environ, "KIDX_STORE": "kidx-store", "NO_COLOR": "1",
                   "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    for command in commands:
        done = subprocess.run(["bash", "-e", "-c", command], cwd=tmp_path, env=environment, capture_output=True,
                              text=True)
        assert done.returncode == 0, (command, done.stderr)
    assert done.stderr == "site: 49 files (40 runs, 4 group families, 0 series); wrote 49, 0 unchanged, removed 0\n"
    visit = Visit(browser, tmp_path / "site", "index.html")
    assert visit.page.locator("#matrix tbody tr").count() == 8
    assert visit.console == [] and visit.errors == [] and visit.outside() == []
    visit.close()


def test_a_point_reached_by_keyboard_shows_its_run_and_says_what_it_is(browser, h200_site):
    visit = Visit(browser, h200_site, section_address(h200_site, "groups"))
    first = visit.page.locator("svg.chart a.pt").first
    label = first.get_attribute("aria-label")
    assert label.startswith("Hugging Face Transformers (eager) sequence length 1024 ")
    first.focus()
    tip = visit.page.locator("#tip")
    assert tip.is_visible() and first.get_attribute("data-run") in tip.inner_text()
    visit.page.keyboard.press("Tab")  # on to the next point: the box follows
    assert visit.page.locator("svg.chart a.pt").nth(1).get_attribute("data-run") in tip.inner_text()
    visit.close()


def test_series_and_kernel_pages_of_the_liger_history_load_cleanly(browser, kidx, history_store, tmp_path):
    site = tmp_path / "site"
    assert kidx("publish", str(site), "--baseline", "transformers", "--baseline", "torch", "--release-label",
                "liger_version", store_path=history_store)[0] == 0
    series = sections(site, "series")
    kernels = sorted((site / "kernels").glob("*.html"))
    assert len(series) == 89 and len(kernels) == 38
    for path in [site / section_address(site, "series"), site / section_address(site, "series", -1), kernels[0],
                 kernels[-1]]:
        visit = Visit(browser, site, str(path.relative_to(site)))
        assert visit.console == [] and visit.errors == [] and visit.outside() == [], path
        if path.parent.name == "series":  # a line per implementation, over the releases
            assert visit.page.locator("svg.chart g.series").count() == visit.page.locator("ul.legend li").count() >= 1
        else:  # the kernel's families, each cell a link to its group page
            assert visit.page.locator("#matrix tbody tr").count() >= 1
            href = visit.page.locator("td.cell a").first.get_attribute("href")
            assert href.startswith("../groups/") and file_of(path.parent, href).is_file()
        visit.close()


def test_the_gpu_filter_keeps_that_gpu_s_column_only(browser, kidx, history_store, tmp_path):
    """Choosing a GPU hides the other GPUs' columns as well as the rows without it; a
    release hides the columns of the GPUs it was not measured on."""
    site = tmp_path / "site"
    assert kidx("publish", str(site), "--baseline", "transformers", "--baseline", "torch", "--release-label",
                "liger_version", store_path=history_store)[0] == 0
    visit = Visit(browser, site, "index.html")
    page = visit.page
    columns = page.locator("#matrix thead th.env")
    total = columns.count()
    assert total == 8

    def shown() -> list[str]:
        return [columns.nth(i).inner_text() for i in range(total) if columns.nth(i).is_visible()]

    def widths() -> set[int]:  # the cells each shown row shows: kernel, implementation, a cell per column
        return set(page.eval_on_selector_all(
            "#matrix tbody tr:not([hidden])", "rows => rows.map(r => [...r.cells].filter(c => !c.hidden).length)"))

    everything = shown()
    page.select_option("select[data-key=gpu]", "nvidia-b200")
    assert shown() == ["B200"]
    assert widths() == {3}
    # each group's first shown row carries its heading, the group's first row shown or not
    headings = page.eval_on_selector_all("#matrix tbody tr", """rows => {
        let head = null, out = [];
        for (const row of rows) {
            if (row.classList.contains("head")) { head = row; out.push([head.cells[0].textContent, []]); }
            if (!row.hidden) out[out.length - 1][1].push(row.cells[0].textContent);
        }
        return out.filter(([, shown]) => shown.length);
    }""")
    assert len(headings) > 10 and any(shown for _, shown in headings)
    assert all(shown[0] == heading != "" and not any(shown[1:]) for heading, shown in headings), headings
    page.screenshot(path=str(tmp_path / "gpu-filter.png"), full_page=False)
    page.select_option("select[data-key=gpu]", "")
    assert shown() == everything and widths() == {2 + total}
    page.select_option("select[data-key=liger_version]", "0.3.0")  # measured on the H100 PCIe only
    assert shown() == [name for name in everything if "PCIe" in name]
    assert visit.console == [] and visit.errors == []
    visit.close()
