"""What holds for every module of kidx.formats: its size."""

from __future__ import annotations

import pytest
from conftest import REPO

FORMATS = REPO / "kidx" / "formats"
MODULES = sorted(FORMATS.rglob("*.py"))
LIMIT = 700


def test_there_are_modules_to_check():
    assert {"framework.py", "liger.py", "bmf/importer.py", "bmf/exporter.py"} <= {
        path.relative_to(FORMATS).as_posix() for path in MODULES}


@pytest.mark.parametrize("path", MODULES, ids=lambda path: path.relative_to(FORMATS).as_posix())
def test_no_module_is_over_700_lines(path):
    lines = len(path.read_text(encoding="utf-8").splitlines())
    assert lines <= LIMIT, f"{path.name} has {lines} lines; split it (at most {LIMIT})"


def test_a_format_read_and_written_keeps_both_directions_in_one_package():
    """Where a maintainer looks for a format's name: a format ``kidx export`` writes and
    ``kidx import`` reads is a package with its importer beside its exporter; one written
    only is a module of its own."""
    from kidx.formats.framework import IMPORTERS
    from kidx.operations.export.exporting import FORMATS as WRITTEN

    both = sorted(name for name in WRITTEN if name in IMPORTERS)
    assert both == ["bmf", "pytorch-benchmark"]
    for name in both:
        package = name.replace("-", "_")
        assert IMPORTERS[name].module == f"kidx.formats.{package}.importer"
        assert (FORMATS / package / "exporter.py").is_file()
    assert [name for name in WRITTEN if name not in IMPORTERS and name != "bundle"] == ["parquet"]
    assert (FORMATS / "parquet.py").is_file()
