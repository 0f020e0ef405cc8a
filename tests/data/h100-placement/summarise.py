"""The probe's timings, each as a change from its provider's median over every `repeat`
timing of all processes, per provider, way and process, with the spread of the five turns.

usage: python3 summarise.py [placement-timings.jsonl]
"""
import json
import statistics
import sys
from collections import defaultdict
from pathlib import Path

path = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).with_name("placement-timings.jsonl"))
timings = defaultdict(list)
for line in path.read_text(encoding="utf-8").splitlines():
    row = json.loads(line)
    timings[row["provider"], row["way"], row["process"]].append(row["medianUs"])
print(f"{'provider':8} {'way':7} {'process':>7}  {'the five turns against the repeat median':43} {'spread':>7}")
for provider in sorted({key[0] for key in timings}):
    reference = statistics.median(v for (p, way, _), values in timings.items() if p == provider and way == "repeat"
                                  for v in values)
    for way in ("repeat", "flush", "inputs"):
        for process in sorted({key[2] for key in timings if key[:2] == (provider, way)}):
            values = timings[provider, way, process]
            turns = " ".join(f"{100 * (v / reference - 1):+6.2f}%" for v in values)
            print(f"{provider:8} {way:7} {process:>7}  {turns:43} {100 * (max(values) - min(values)) / reference:6.2f}%")
    print(f"{provider:8} repeat median {reference:.3f} us")
