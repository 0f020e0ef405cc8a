"""The installed package must carry what it needs: run it away from the source tree."""

from __future__ import annotations

import os
import subprocess
import sys


def test_installed_kidx_finds_its_crds_from_any_folder(tmp_path):
    environment = {**os.environ, "KIDX_NO_CACHE": "1", "KIDX_STORE": str(tmp_path / "store")}
    environment.pop("PYTHONPATH", None)
    completed = subprocess.run(
        [sys.executable, "-m", "kidx", "api-resources", "-o", "name"],
        cwd=tmp_path, capture_output=True, env=environment, timeout=120,
    )
    assert completed.returncode == 0, completed.stderr.decode()
    assert completed.stdout.decode() == (
        "benchmarkprotocols.kernelindex.dev\n"
        "benchmarkruns.kernelindex.dev\n"
        "executionenvironments.kernelindex.dev\n"
        "implementations.kernelindex.dev\n"
        "workloads.kernelindex.dev\n"
    )
    located = subprocess.run(
        [sys.executable, "-c", "import kidx.kinds.crd_files as c; print(c.crd_folder())"],
        cwd=tmp_path, capture_output=True, env=environment, timeout=60,
    )
    assert located.stdout.decode().strip().endswith("crds")
