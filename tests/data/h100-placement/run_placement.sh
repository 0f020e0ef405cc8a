#!/bin/bash
# On the device machine, from the repository root: bash tests/data/h100-placement/run_placement.sh [N]
# N fresh processes of placement_probe.py, one after another
set -u
N=${1:-3}
export PYTHONUNBUFFERED=1
REPO=$(pwd); D=$REPO/.devicework; HERE=$REPO/tests/data/h100-placement
R=/tmp/result/placement; mkdir -p $R
exec > >(tee -a "$R/device.log") 2>&1
echo "== $(date -u +%FT%TZ) placement probe, $N processes"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site $D/whl/*.whl || { echo "wheel install failed"; exit 1; }
export PYTHONPATH=/tmp/site:$REPO
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit,temperature.gpu --format=csv
for process in $(seq 1 $N); do
  python3 $HERE/placement_probe.py $process >> $R/timings.jsonl || echo "process $process failed"
done
wc -l $R/timings.jsonl
cp $R/timings.jsonl $OUT/placement-timings.jsonl; cp $R/device.log $OUT/placement-device.log
echo "== $(date -u +%FT%TZ) end"
