#!/bin/bash
# On the device machine, from the repository root: bash tests/data/h100-ab/run_ab.sh [SCRIPT] [N] [PCT]
# A full A/B (here an A/A: the same script both sides) of one Liger-Kernel script, every configuration it
# runs, N processes a side, interleaved, timed with kidx's cuda_graph timer: first with do_bench's own
# budget ("before"), then with adaptive stopping at PCT percent ("after"), on the same machine.
set -u
SCRIPT=${1:-benchmark_rms_norm.py}; N=${2:-5}; PCT=${3:-0.5}
export PYTHONUNBUFFERED=1
START=$(date +%s)
REPO=$(pwd); D=$REPO/.devicework
R=/tmp/result/ab; mkdir -p $R
exec > >(tee -a "$R/device.log") 2>&1
echo "== $(date -u +%FT%TZ) A/B of $SCRIPT, $N processes a side, adaptive stopping at $PCT %"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site $D/whl/*.whl || { echo "wheel install failed"; exit 1; }
export PYTHONPATH=/tmp/site:$REPO
KIDX="python3 -m kidx"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm,clocks.mem --format=csv
python3 -c "import sys, torch, triton, transformers, liger_kernel; print(sys.version.split()[0], 'torch', torch.__version__, 'cuda', torch.version.cuda, 'triton', triton.__version__, 'transformers', transformers.__version__)"
rm -rf /tmp/liger && mkdir -p /tmp/liger/data && cp -r $D/scripts /tmp/liger/scripts
(cd /tmp/liger && git init -q -b main && git add scripts && git -c user.name=kidx -c user.email=kidx@localhost commit -qm "Liger-Kernel benchmark scripts") || echo "no git checkout"
(cd /tmp && $KIDX env capture -o yaml > $R/environment.yaml) || echo "env capture failed"
cd /tmp/liger/scripts
for phase in before after; do
  extra=""; [ $phase = after ] && extra="--max-noise $PCT"
  t0=$(date +%s.%N)
  timeout -s INT -k 30 ${PHASE_LIMIT:-270} $KIDX record liger --environment $R/environment.yaml --timer cuda_graph $extra \
    --interleave --processes $N --label suite=ab --label phase=$phase --store /tmp/store-ab -- \
    python3 $SCRIPT -- python3 $SCRIPT > /dev/null
  rc=$?
  echo "record $phase rc=$rc wall $(python3 -c "import time; print(round(time.time() - $t0, 1))") s"
done
cd /tmp
$KIDX get runs -l suite=ab -o wide --store /tmp/store-ab > $R/kidx-get-runs.txt 2>&1; wc -l $R/kidx-get-runs.txt
$KIDX export -o $R/store.kidx.json --store /tmp/store-ab; echo "export rc=$?"
for kept in /tmp/kidx-record-*; do [ -d "$kept" ] && cp -r "$kept" $R/; done
(cd /tmp/result && tar czf $OUT/ab.tgz ab)
echo "== $(date -u +%FT%TZ) end, $(( $(date +%s) - START )) s"
