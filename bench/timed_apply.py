#!/usr/bin/env python3
"""One `kidx apply`, run exactly as the console script runs it, that also writes where
its time went: bench_scale.py applies each chunk through it.

    python bench/timed_apply.py STAGES.json -- apply -f chunk.json -o name --store STORE

It hands the arguments after `--` to the console script's own entry point
(kidx.cli.app.main), unchanged, with two of the command's calls wrapped in timers:
reading the files (read_manifest_files: read, parse, check) and applying them
(apply_documents, whose ApplyReport.timings say what the validation, digests, object
writes, their flush, the catalog rows and the commit took). Just before the process
ends (main ends with os._exit) it writes STAGES.json: those seconds, the wall time
from the interpreter's first line here, and the process's own CPU time (user and
system), so that what the process waited for (a database server, the disk) is the wall
time less its CPU time. The command's exit status is the process's.
"""

from __future__ import annotations

import json
import os
import resource
import sys
import time

STARTED = time.perf_counter()


def main() -> None:
    if len(sys.argv) < 3 or sys.argv[2] != "--":
        sys.exit("usage: timed_apply.py STAGES.json -- apply -f FILE ... --store STORE")
    stages_path, argv = sys.argv[1], sys.argv[3:]
    stages: dict[str, float] = {}

    import kidx.api.applying as applying
    import kidx.operations.maintain.apply as applying_operation
    from kidx.cli.app import main as console_script

    read_manifest_files = applying.read_manifest_files
    apply_documents = applying_operation.apply_documents

    def timed_read(*arguments, **keywords):
        started = time.perf_counter()
        try:
            return read_manifest_files(*arguments, **keywords)
        finally:
            stages["read"] = time.perf_counter() - started

    def timed_apply(*arguments, **keywords):
        started = time.perf_counter()
        report = apply_documents(*arguments, **keywords)
        stages["apply"] = time.perf_counter() - started
        stages.update(report.timings)
        return report

    # the command imports both inside its function, so it finds these
    applying.read_manifest_files = timed_read
    applying_operation.apply_documents = timed_apply
    exit_process = os._exit

    def write_stages_and_exit(code: int) -> None:
        usage = resource.getrusage(resource.RUSAGE_SELF)
        with open(stages_path, "w", encoding="utf-8") as handle:
            json.dump({"wall_s": time.perf_counter() - STARTED, "cpu_user_s": usage.ru_utime,
                       "cpu_system_s": usage.ru_stime, "stages_s": stages}, handle)
        exit_process(code)

    os._exit = write_stages_and_exit
    console_script(argv)


if __name__ == "__main__":
    main()
