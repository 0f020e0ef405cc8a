"""kidx plot: real images with the expected panels and lines, the points as csv, and
clear refusals."""

from __future__ import annotations

import csv
import io
import re
import sys
import xml.etree.ElementTree as ElementTree

import pytest

pytest.importorskip("matplotlib", reason="the test extra installs matplotlib (kidx[plot])")

H100 = "environment/liger-bench-nvidia-h100-80gb-hbm3"
LLAMA4_BACKWARD = "spec.sourceNative.benchmark=llama4_rope/backward"
SVG = "{http://www.w3.org/2000/svg}"


def _plot(kidx, store, path, *extra):
    return kidx("plot", "--x", "workload.spec.parameters.seq", "--references", H100,
                "--field-selector", LLAMA4_BACKWARD, "-o", str(path), *extra, store_path=store)


def test_svg_has_a_line_and_a_band_per_implementation_in_each_panel(kidx, head_store, tmp_path):
    path = tmp_path / "llama4_rope.svg"
    code, out, err = _plot(kidx, head_store, path)
    assert (code, out) == (0, "")
    assert err == (f"wrote {path}: 3 panels, 6 lines, 14 points\n"
                   "2 points were measured more than once: the latest observation is drawn\n")
    root = ElementTree.parse(path).getroot()
    assert root.tag == f"{SVG}svg"
    ids = sorted(element.get("id") for element in root.iter() if re.match(r"panel\d-(line|band)-", element.get("id") or ""))
    assert ids == sorted(f"panel{n}-{what}-liger-llama4-rope-{impl}" for n in (1, 2, 3) for what in ("line", "band")
                         for impl in ("liger-triton", "transformers-eager"))
    texts = [element.text for element in root.iter(f"{SVG}text") if element.text and element.text.strip()]
    # legends name implementations by their titles, less what both lines share (not by their slugs)
    assert texts.count("Liger (Triton)") == texts.count("Hugging Face Transformers (eager)") == 3
    assert not [text for text in texts if "liger-llama4-rope-liger-triton" in text]
    assert "llama4_rope bf16: hidden=8192, kv_heads=8, q_heads=32" in texts
    assert texts.count("median latency (ms)") == 3
    # the x axis: Liger's own label where its rows sweep seq (panel 3), else the path given
    assert texts.count("workload.spec.parameters.seq") == 2 and texts.count("sequence length") == 1
    # the seq-sweep panel's liger line goes through five points
    line = next(e for e in root.iter() if e.get("id") == "panel3-line-liger-llama4-rope-liger-triton")
    path_data = next(e for e in line.iter(f"{SVG}path")).get("d")
    assert len(re.findall(r"[ML]", path_data)) == 5
    # each line of a panel has its own marker and dash, as the published site draws them
    styles = {}
    for name in ("liger-triton", "transformers-eager"):
        group = next(e for e in root.iter() if e.get("id") == f"panel3-line-liger-llama4-rope-{name}")
        style = next(group.iter(f"{SVG}path")).get("style")
        markers = {use.get("{http://www.w3.org/1999/xlink}href") for use in group.iter(f"{SVG}use")}
        styles[name] = ("stroke-dasharray" in style, len(markers))
    assert styles == {"liger-triton": (False, 1), "transformers-eager": (True, 1)}
    definitions = {e.get("id"): e.get("d") for e in root.iter(f"{SVG}path") if e.get("id")}
    marker_shapes = {definitions[use.get("{http://www.w3.org/1999/xlink}href")[1:]]
                     for group in root.iter() if (group.get("id") or "").startswith("panel3-line-")
                     for use in group.iter(f"{SVG}use")}
    assert len(marker_shapes) == 2


def test_png_is_a_png(kidx, head_store, tmp_path):
    path = tmp_path / "llama4_rope.png"
    code, _, _ = _plot(kidx, head_store, path, "--title", "llama4_rope backward on the H100")
    assert code == 0
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000
    width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    assert (width, height) == (1800, 450)


def test_points_as_csv_the_latency_curve(kidx, head_store, tmp_path):
    path = tmp_path / "curve.csv"
    code, _, _ = _plot(kidx, head_store, path)
    assert code == 0
    rows = [r for r in csv.DictReader(io.StringIO(path.read_text())) if r["panel"] == "3"]
    curve = [(r["x"], r["value"]) for r in rows if r["line"] == "liger-llama4-rope-transformers-eager"]
    assert curve == [("1024", "118912"), ("2048", "210112"), ("4096", "397408"), ("8192", "754016"),
                     ("16384", "1482272")]


def test_lines_per_release_label(kidx, history_store, tmp_path):
    path = tmp_path / "jsd.svg"
    code, out, err = kidx("plot", "--x", "workload.spec.parameters.vocab", "-l", "liger_version in (0.3.0,0.3.1)",
                          "--by", "label=liger_version", "--references", "implementation/liger-jsd-liger-triton",
                          "--field-selector", "spec.sourceNative.benchmark=jsd/forward", "-o", str(path),
                          store_path=history_store)
    assert code == 0, err
    assert err == f"wrote {path}: 1 panel, 2 lines, 12 points\n"
    ids = {element.get("id") for element in ElementTree.parse(path).getroot().iter()}
    assert {"panel1-line-0.3.0", "panel1-line-0.3.1"} <= ids


def test_lines_per_release_never_mix_implementations(kidx, history_store, tmp_path):
    path = tmp_path / "jsd.csv"
    code, out, err = kidx("plot", "--x", "workload.spec.parameters.vocab", "-l", "liger_version in (0.3.0,0.3.1)",
                          "--by", "label=liger_version", "--field-selector", "spec.sourceNative.benchmark=jsd/forward",
                          "-o", str(path), store_path=history_store)
    assert code == 0, err
    assert err == f"wrote {path}: 2 panels, 4 lines, 24 points\n"
    rows = list(csv.DictReader(io.StringIO(path.read_text())))
    assert {(r["panel"], r["implementation"]) for r in rows} == {
        ("1", "liger-jsd-liger-triton"), ("2", "liger-jsd-torch-eager")}


def test_too_many_groups_are_refused_not_mixed(kidx, head_store, tmp_path):
    code, _, err = kidx("plot", "--x", "workload.spec.parameters.seq", "-o", str(tmp_path / "all.svg"),
                        store_path=head_store)
    assert code == 1
    assert err.startswith("error: the selection holds ")
    assert "plot draws at most 12 panels and never mixes groups in one" in err
    assert not (tmp_path / "all.svg").exists()


@pytest.mark.parametrize("args, message", [
    (["-o", "x.svg"], "--x is required"),
    (["--x", "workload.spec.parameters.seq"], "-o FILE is required, ending in .svg, .png or .csv"),
    (["--x", "workload.spec.parameters.seq", "-o", "x.pdf"], "-o FILE is required, ending in .svg, .png or .csv"),
    (["--x", "seq", "-o", "x.svg"], 'invalid field path "seq"'),
    (["--x", "workload.spec.dtype", "-o", "x.svg", "--field-selector", LLAMA4_BACKWARD],
     "--x workload.spec.dtype must be a number"),
])
def test_bad_arguments(kidx, head_store, tmp_path, monkeypatch, args, message):
    monkeypatch.chdir(tmp_path)
    code, out, err = kidx("plot", *args, store_path=head_store)
    assert (code, out) == (1, "") and message in err


def test_without_matplotlib_says_how_to_get_it(kidx, head_store, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib now raises ImportError
    code, out, err = _plot(kidx, head_store, tmp_path / "x.svg")
    assert (code, out, err) == (1, "", "error: kidx plot needs matplotlib: pip install '.[plot]' from a checkout of kidx\n")


@pytest.mark.parametrize("name", ["points.csv", "figure.svg"])
def test_a_plot_that_fails_while_written_leaves_the_earlier_file_as_it_was(kidx, head_store, tmp_path, monkeypatch,
                                                                           name):
    """The file is written beside its place and renamed: a failure half way (here, the
    writer breaks after its first bytes) keeps the earlier plot whole and leaves nothing
    else behind."""
    from matplotlib.figure import Figure

    from kidx.output import delimited

    def broken_csv(*arguments, **options):
        raise OSError("disk full")

    def broken_figure(self, target, **options):
        target.write(b"<svg") if hasattr(target, "write") else open(target, "wb").write(b"<svg")
        raise OSError("disk full")

    monkeypatch.setattr(delimited, "render_delimited", broken_csv)
    monkeypatch.setattr(Figure, "savefig", broken_figure)
    path = tmp_path / name
    path.write_text("the earlier plot\n", encoding="utf-8")
    code, out, err = _plot(kidx, head_store, path)
    assert code == 1 and out == "" and "disk full" in err
    assert path.read_text(encoding="utf-8") == "the earlier plot\n"
    assert sorted(entry.name for entry in tmp_path.iterdir() if entry.name != "store") == [name]


@pytest.mark.parametrize("name", ["points.csv", "figure.svg"])
def test_a_plot_into_a_named_pipe_is_written_into_it(kidx, head_store, tmp_path, name):
    """A named pipe called points.csv is written into, never replaced by a regular file."""
    import os
    import stat
    import threading

    pipe = tmp_path / name
    os.mkfifo(pipe)
    got: list[bytes] = []

    def read() -> None:
        with open(pipe, "rb") as stream:
            got.append(stream.read())

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    code, out, err = _plot(kidx, head_store, pipe)
    reader.join(timeout=60)
    assert (code, out) == (0, ""), err
    assert stat.S_ISFIFO(os.lstat(pipe).st_mode) and os.listdir(tmp_path) == [name]
    [data] = got
    assert data.startswith(b"panel,") if name.endswith(".csv") else b"<svg" in data
