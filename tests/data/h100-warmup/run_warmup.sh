#!/bin/bash
# On the device machine, from the repository root: bash tests/data/h100-warmup/run_warmup.sh [N]
# N rounds; each round runs warmup_probe.py once per variant, every run a fresh Python, the
# variants in turn so that each sees the same history of load
set -u
N=${1:-10}
export PYTHONUNBUFFERED=1
REPO=$(pwd); D=$REPO/.devicework; HERE=$REPO/tests/data/h100-warmup
R=/tmp/result/warmup; mkdir -p $R
exec > >(tee -a "$R/device.log") 2>&1
echo "== $(date -u +%FT%TZ) warm-up probe, $N rounds"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site $D/whl/*.whl || { echo "wheel install failed"; exit 1; }
export PYTHONPATH=/tmp/site:$REPO
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.default_applications.sm,power.limit,temperature.gpu --format=csv
python3 -c "import sys, torch; print(sys.version.split()[0], 'torch', torch.__version__, 'cuda', torch.version.cuda)"
START=$(date +%s)
for round in $(seq 1 $N); do
  for spec in "budget 25 100" "long-warmup 1000 100" "long-budget 25 1000"; do
    set -- $spec
    python3 $HERE/warmup_probe.py $1 $2 $3 >> $R/samples.jsonl || echo "round $round $1 failed"
  done
  echo "round $round done at $(( $(date +%s) - START )) s; $(nvidia-smi --query-gpu=temperature.gpu,clocks.sm,power.draw --format=csv,noheader)"
  [ $(( $(date +%s) - START )) -gt 420 ] && { echo "stopping: time"; break; }
done
wc -l $R/samples.jsonl
cp $R/samples.jsonl $R/device.log $OUT/
echo "== $(date -u +%FT%TZ) end"
