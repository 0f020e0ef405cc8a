"""A throwaway PostgreSQL cluster for the tests: started once per test session, stopped at the end.

The server binaries come from the system packages (Debian keeps ``initdb`` and ``pg_ctl``
in ``/usr/lib/postgresql/<version>/bin``, outside PATH). ``initdb`` refuses to run as
root, so as root the cluster runs as the ``postgres`` system user, in a fresh temporary
folder that user owns. The server listens only on a unix socket in that folder (no TCP
port to collide with anything), trusts local connections, and trades durability for speed
(``fsync=off``): it holds nothing but test data.

If the test process dies without its teardown (SIGKILL), a small watchdog process stops
the cluster and removes its folder, so no server outlives the tests.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

SUPERUSER = "postgres"
_WATCHDOG = r"""
import os, shutil, subprocess, sys, time
parent, prefix, data, folder = int(sys.argv[1]), sys.argv[2:-3], sys.argv[-2], sys.argv[-1]
pg_ctl = sys.argv[-3]
while True:
    try:
        os.kill(parent, 0)
    except ProcessLookupError:
        break
    if not os.path.isdir(folder):
        sys.exit(0)  # stopped and removed by the tests themselves
    time.sleep(1)
subprocess.run([*prefix, pg_ctl, "-D", data, "-m", "immediate", "-w", "stop"], capture_output=True)
shutil.rmtree(folder, ignore_errors=True)
"""


def server_binaries() -> Path | None:
    """The folder holding ``initdb``, ``pg_ctl`` and ``postgres``, newest version first."""
    candidates = []
    found = shutil.which("pg_ctl")
    if found:
        candidates.append(Path(found).parent)
    versions = glob.glob("/usr/lib/postgresql/*/bin")
    versions.sort(key=lambda path: int(Path(path).parent.name) if Path(path).parent.name.isdigit() else 0, reverse=True)
    candidates.extend(Path(path) for path in versions)
    for folder in candidates:
        if all((folder / tool).is_file() for tool in ("initdb", "pg_ctl", "postgres")):
            return folder
    return None


def runuser() -> str:
    """``runuser``'s path: on PATH, else in the system folders (``/usr/sbin``, ``/sbin``)
    that a plain ``PATH=/usr/bin:/bin`` leaves out."""
    found = shutil.which("runuser")
    if found:
        return found
    for folder in ("/usr/sbin", "/sbin"):
        candidate = Path(folder) / "runuser"
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    raise FileNotFoundError("runuser (util-linux) is needed to run the PostgreSQL cluster as root: not found on "
                            "PATH, in /usr/sbin or in /sbin")


class PostgresServer:
    """One cluster: ``start()``, ``create_database(name)`` -> URL, ``stop()``."""

    def __init__(self, binaries: Path, durable: bool = False):
        self.binaries = binaries
        self.durable = durable  # keep PostgreSQL's default durability (the benchmark wants it)
        self.folder: Path | None = None
        self._prefix: list[str] = []
        self._watchdog: subprocess.Popen | None = None

    @property
    def data(self) -> Path:
        assert self.folder is not None
        return self.folder / "data"

    def url(self, database: str) -> str:
        return f"postgresql://{SUPERUSER}@/{database}?host={self.folder}"

    def _run(self, *arguments: str) -> None:
        completed = subprocess.run([*self._prefix, *arguments], capture_output=True, text=True, cwd="/")
        if completed.returncode != 0:
            raise RuntimeError(f"{' '.join(arguments)} failed:\n{completed.stdout}{completed.stderr}")

    def start(self) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="kidx-pg-"))  # short: socket paths are limited
        if os.geteuid() == 0:
            import pwd

            account = pwd.getpwnam(SUPERUSER)  # KeyError: no such user
            os.chown(self.folder, account.pw_uid, account.pw_gid)
            self._prefix = [runuser(), "-u", SUPERUSER, "--"]
        self._watchdog = subprocess.Popen(
            [sys.executable, "-c", _WATCHDOG, str(os.getpid()), *self._prefix, str(self.binaries / "pg_ctl"),
             str(self.data), str(self.folder)],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
        )
        self._run(
            str(self.binaries / "initdb"), "-D", str(self.data), "-U", SUPERUSER, "-A", "trust",
            "-E", "UTF8", "--locale=C.UTF-8", "--no-sync",
        )
        options = " ".join(
            f"-c {setting}"
            for setting in (
                "listen_addresses=''",
                f"unix_socket_directories={self.folder}",
                *(() if self.durable else ("fsync=off", "full_page_writes=off", "synchronous_commit=off")),
                "max_connections=200",
                "shared_buffers=64MB",
            )
        )
        self._run(
            str(self.binaries / "pg_ctl"), "-D", str(self.data), "-l", str(self.folder / "server.log"),
            "-o", options, "-w", "-t", "60", "start",
        )

    def execute(self, statement: str) -> None:
        import psycopg

        with psycopg.connect(self.url("postgres"), autocommit=True) as connection:
            connection.execute(statement)

    def create_database(self, name: str) -> str:
        self.execute(f'CREATE DATABASE "{name}" TEMPLATE template0')
        return self.url(name)

    def drop_database(self, name: str) -> None:
        self.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    def stop(self) -> None:
        if self.folder is None:
            return
        try:
            if (self.data / "postmaster.pid").exists():
                self._run(str(self.binaries / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w", "stop")
        finally:
            shutil.rmtree(self.folder, ignore_errors=True)
            self.folder = None
            if self._watchdog is not None:
                self._watchdog.wait(timeout=10)  # it sees the folder gone and exits
                self._watchdog = None
