#!/usr/bin/env python3
"""What compressing each stored object would save: the remaining cause of issue 42's
PostgreSQL target (at most 1,000 bytes a run, objects included).

PostgreSQL keeps each object's canonical JSON whole in ``kidx.objects.content`` (its TOAST
compression starts at about 2 KB, above a run's object), so a run's object costs its bytes
plus the row's. This script generates runs as bench_scale.py does (bench_store.generate),
makes each run's stored object (kidx.identity.canonical_json of identity_of, what a store
writes), and prints their mean size as stored today, compressed one by one with zlib, and
compressed one by one with zlib and a preset dictionary made of the first objects (which a
schema could keep once, as the catalog's packed annotations keep theirs), and packed as the
PostgreSQL store's schema 4 packs them (kidx.store.object_packing: its level, its own
dictionary of objects spread over the first ones), with the wall time its worker process
takes to pack them (started, fed, each object packed and checked, sent back). The report goes
to bench/reports/ (text, and JSON that docs/performance.md does not render).

    .venv/bin/python bench/bench_object_compression.py [--runs 20000] [--dictionary-runs 200]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
import zlib
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(REPO))

from bench_store import generate  # noqa: E402

from kidx.identity.canonical import canonical_json, identity_of  # noqa: E402

DICTIONARY_BYTES = 32 * 1024  # zlib's largest window: a preset dictionary longer than this is cut


def sizes(runs: int, dictionary_runs: int, seed: int) -> dict[str, float]:
    """Mean bytes a run's object: as stored, zlib alone, zlib with a preset dictionary made
    of the first ``dictionary_runs`` objects (measured on the others)."""
    data = generate(runs, seed)
    objects = [canonical_json(identity_of(run)) for run in data.runs]
    trained, measured = objects[:dictionary_runs], objects[dictionary_runs:]
    dictionary = b"".join(trained)[-DICTIONARY_BYTES:]

    def with_dictionary(content: bytes) -> int:
        packer = zlib.compressobj(level=9, zdict=dictionary)
        return len(packer.compress(content) + packer.flush())

    # what the PostgreSQL store (schema 4) stores: kidx.store.object_packing, its own dictionary
    from kidx.store.object_packing import (
        OBJECT_DICTIONARY_ID,
        WORKER_FROM,
        ObjectPacker,
        Packing,
        make_object_dictionary,
    )

    assert len(measured) >= WORKER_FROM, "too few objects for the worker process"

    packer = ObjectPacker(OBJECT_DICTIONARY_ID, make_object_dictionary(trained))
    packing_started = time.perf_counter()
    packed = Packing(packer, measured).result()  # by the worker process a bulk write starts
    packing_s = time.perf_counter() - packing_started
    return {"objects measured": len(measured), "dictionary bytes": len(dictionary),
            "as stored": statistics.fmean(len(o) for o in measured),
            "zlib level 9": statistics.fmean(len(zlib.compress(o, 9)) for o in measured),
            "zlib level 9, preset dictionary": statistics.fmean(with_dictionary(o) for o in measured),
            "packed as schema 4 stores it": statistics.fmean(len(p) for p in packed),
            "microseconds to pack one": packing_s / len(measured) * 1e6, "seconds to pack them": packing_s}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=20_000)
    parser.add_argument("--dictionary-runs", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    started = time.perf_counter()
    found = sizes(args.runs, args.dictionary_runs, args.seed)
    head = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True,
                          text=True).stdout.strip()
    lines = [f"A run's stored object, compressed one by one: {args.runs:,} runs generated as bench_scale's "
             f"(seed {args.seed}), code at {head}",
             f"preset dictionary: the last {found['dictionary bytes']:,} bytes of the first "
             f"{args.dictionary_runs} objects; sizes over the other {found['objects measured']:,}", ""]
    for what in ("as stored", "zlib level 9", "zlib level 9, preset dictionary", "packed as schema 4 stores it"):
        lines.append(f"  {what:34} {found[what]:8.0f} bytes a run   {found[what] / found['as stored']:6.1%}")
    lines.append(f"  packing them by the worker process a bulk write starts (kidx.store.object_packing, "
                 f"checked and sent back): {found['seconds to pack them']:.2f} s wall, "
                 f"{found['microseconds to pack one']:.1f} microseconds an object")
    lines += ["", f"took {time.perf_counter() - started:.0f} s"]
    text = "\n".join(lines)
    print(text)
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    (HERE / "reports" / f"bench_object_compression-{stamp}.txt").write_text(text + "\n", encoding="utf-8")
    (HERE / "reports" / f"bench_object_compression-{stamp}.json").write_text(
        json.dumps({"arguments": vars(args), "sizes": found}, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
