"""The suite passes in a plain environment: only PATH=/usr/bin:/bin and HOME set, as a
fresh machine's shell or a CI runner has it (no PYTHONUNBUFFERED, no virtual
environment's bin on PATH, no /usr/sbin). A representative part of the suite runs again
under ``env -i``: the shell pipelines (``| head`` closing the pipe on buffered output among
them) and a PostgreSQL store, whose throwaway cluster needs ``runuser`` from /usr/sbin
when the tests run as root."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO

PLAIN_PATH = "/usr/bin:/bin"
POSTGRES_TEST = "tests/store/test_postgres.py::test_the_store_can_come_from_the_environment"


@pytest.mark.slow
def test_pipelines_and_a_postgres_store_pass_under_env_i(tmp_path):
    env = shutil.which("env", path=PLAIN_PATH)
    if env is None:
        pytest.skip("no env(1) in /usr/bin or /bin")
    from pg_server import server_binaries

    postgres = server_binaries() is not None
    home = tmp_path / "home"
    home.mkdir()
    done = subprocess.run(
        [env, "-i", f"PATH={PLAIN_PATH}", f"HOME={home}",
         sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rs",
         f"--basetemp={tmp_path / 'inner'}", "tests/cli/test_pipelines.py", POSTGRES_TEST],
        capture_output=True, text=True, cwd=REPO, stdin=subprocess.DEVNULL, timeout=1200,
    )
    summary = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert re.search(r"\b\d+ passed\b", summary), summary
    assert "failed" not in summary and "error" not in summary, summary
    if postgres:  # the server is there: the PostgreSQL test must have run, not skipped
        assert "skipped" not in summary, done.stdout[-2000:]
    assert not (Path(home) / ".local" / "share" / "kidx").exists()  # no test wrote to the default store
