"""jsonschema is the validator of record: its verdicts, with format checking, reach the user;
the fast path only spares valid documents the cost, and keeps jsonschema off start-up."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from conftest import REPO, SEED_BUNDLE

from kidx.kinds.schema import is_date_time


def run_with_observed_at(value: str) -> str:
    run = json.loads(SEED_BUNDLE.read_text(encoding="utf-8"))["run"]
    run["spec"]["observedAt"] = value
    return json.dumps(run, ensure_ascii=False)


@pytest.mark.parametrize(
    "value, message",
    [
        # Arabic-Indic digits: Python's \d takes them, RE2's (the CRD dialect's) does not
        ("٢٠٢٥-08-07T21:42:15Z", "does not match '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}(\\.\\d+)?(Z|[+-]\\d{2}:\\d{2})$'"),
        ("2025-13-99T99:99:99Z", "is not a 'date-time'"),
        ("2025-02-29T12:00:00Z", "is not a 'date-time'"),
        ("2025-04-31T12:00:00Z", "is not a 'date-time'"),
        ("2025-08-07T24:00:00Z", "is not a 'date-time'"),
        ("2025-08-07T21:60:00Z", "is not a 'date-time'"),
        ("2025-08-07T21:42:60Z", "is not a 'date-time'"),
        ("2025-08-07T21:42:15+24:00", "is not a 'date-time'"),
        ("2025-08-07T21:42:15+02:60", "is not a 'date-time'"),
    ],
)
def test_impossible_or_foreign_digit_timestamps_are_refused(kidx, store, value, message):
    code, out, err = kidx("apply", "-f", "-", stdin=run_with_observed_at(value))
    assert (code, out) == (1, "")
    assert err == f"error: STDIN, document 1, line 1: spec.observedAt: Invalid value: {json.dumps(value, ensure_ascii=False)} {message}\n"
    assert not store.exists()


@pytest.mark.parametrize(
    "value", ["2024-02-29T00:00:00Z", "2025-08-07T21:42:15.123456789+05:30", "2016-12-31T23:59:60Z",
              "2017-01-01T01:59:60+02:00", "0000-01-01T00:00:00-23:59"],
)
def test_real_timestamps_are_accepted(kidx, value):
    code, out, err = kidx("digest", "-f", "-", stdin=run_with_observed_at(value))
    assert (code, err) == (0, "")
    assert out.startswith("sha256:") and out.endswith("  BenchmarkRun/liger-llama4-rope-backward-liger-nvidia-h100-80gb-hbm3-hidden8192-kv-heads8-q-heads32-seq16384-bf16-\n")


@pytest.mark.parametrize(
    "text, valid",
    [
        ("2025-08-07T21:42:15Z", True), ("2025-08-07t21:42:15z", True), ("2024-02-29T23:59:59-00:00", True),
        ("1900-02-29T00:00:00Z", False), ("2000-02-29T00:00:00Z", True), ("2025-00-10T00:00:00Z", False),
        ("2025-01-00T00:00:00Z", False), ("2025-01-32T00:00:00Z", False), ("2025-06-31T00:00:00Z", False),
        ("2016-12-31T23:58:60Z", False), ("2016-12-31T23:59:61Z", False), ("2025-08-07T21:42:15", False),
        ("2025-08-07 21:42:15Z", False), ("2025-08-07T21:42:15.Z", False), ("2025-8-07T21:42:15Z", False),
        ("٢٠٢٥-08-07T21:42:15Z", False), ("2025-08-07T21:42:15Z\n", False), ("２０２５-08-07T21:42:15Z", False),
        ("2025-08-07T21:42:15.٥Z", False), (5, True), (None, True),
    ],
)
def test_the_date_time_checker(text, valid):
    assert is_date_time(text) is valid


def _modules_after(*commands: list[str], store) -> set[str]:
    """Which of jsonschema and the compiled schema a fresh process had imported after ``commands``."""
    script = (
        "import sys, io\n"
        "from kidx.cli.app import run\n"
        f"for argv in {[list(c) for c in commands]!r}:\n"
        "    sys.stdout = sys.stderr = io.StringIO()\n"
        "    run(argv)\n"
        "sys.__stdout__.write(' '.join(sorted(m for m in ('jsonschema', 'kidx.kinds.schema') if m in sys.modules)))\n"
    )
    completed = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=REPO, timeout=120,
                               env={"KIDX_STORE": str(store), "PATH": "/usr/bin:/bin", "NO_COLOR": "1"})
    assert completed.returncode == 0, completed.stderr
    return set(completed.stdout.split())


def test_jsonschema_is_imported_only_for_a_document_the_fast_path_rejects(store, tmp_path):
    seed = str(SEED_BUNDLE)
    assert _modules_after(["apply", "-f", seed], ["get", "runs"], store=store) == {"kidx.kinds.schema"}
    assert _modules_after(["get", "runs"], ["describe", "runs"], store=store) == set()
    bad = tmp_path / "bad.json"
    bad.write_text(run_with_observed_at("2025-13-99T99:99:99Z"), encoding="utf-8")
    assert _modules_after(["apply", "-f", str(bad)], store=store) == {"jsonschema", "kidx.kinds.schema"}
