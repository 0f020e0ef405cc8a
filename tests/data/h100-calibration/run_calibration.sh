#!/bin/bash
# On the device machine, from the repository root:
#   bash tests/data/h100-calibration/run_calibration.sh N LIMIT_S BATCH [KERNEL ...]
# tests/data/h200-timers's timers_driver.py (the calibration half: rms_norm, llama4_rope, swiglu at
# Liger's default shapes) recorded with kidx record liger --timer cuda_graph (do_bench's own budget)
# --processes N, labelled batch=BATCH; the store is exported, gzipped, to $OUT/calibration-BATCH.kidx.json.gz
# TIMER=cupti in the environment records with that timer instead (default cuda_graph, what ran here);
# MIN_TIME=S samples every call for at least S seconds (kidx record --min-time S) in place of do_bench's budget
set -u
N=${1:-16}; LIMIT=${2:-420}; BATCH=${3:-1}; shift 3; KERNELS=${*:-rms_norm llama4_rope swiglu}; TIMER=${TIMER:-cuda_graph}
MIN_TIME=${MIN_TIME:-}; SAMPLING=${MIN_TIME:+--min-time $MIN_TIME}
export PYTHONUNBUFFERED=1
START=$(date +%s)
REPO=$(pwd); D=$REPO/.devicework
R=/tmp/result/calibration-$BATCH; mkdir -p $R
exec > >(tee -a "$R/device.log") 2>&1
echo "== $(date -u +%FT%TZ) calibration kernels $KERNELS, $N processes, batch $BATCH, timer $TIMER ${SAMPLING:-do_bench budget}"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site $D/whl/*.whl || { echo "wheel install failed"; exit 1; }
export PYTHONPATH=/tmp/site:$REPO
KIDX="python3 -m kidx"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit,temperature.gpu,serial --format=csv
python3 -c "import sys, torch, triton, transformers, liger_kernel; print(sys.version.split()[0], 'torch', torch.__version__, 'cuda', torch.version.cuda, 'triton', triton.__version__, 'transformers', transformers.__version__)"
rm -rf /tmp/liger && mkdir -p /tmp/liger/data && cp -r $D/scripts /tmp/liger/scripts && cp $REPO/tests/data/h200-timers/timers_driver.py /tmp/liger/scripts/
(cd /tmp/liger && git init -q -b main && git add scripts && git -c user.name=kidx -c user.email=kidx@localhost commit -qm "Liger-Kernel benchmark scripts") || echo "no git checkout"
[ -f /tmp/environment.yaml ] || (cd /tmp && $KIDX env capture -o yaml > /tmp/environment.yaml) || echo "env capture failed"
cp /tmp/environment.yaml $R/environment.yaml
cd /tmp/liger/scripts
t0=$(date +%s)
timeout -s INT -k 30 $LIMIT $KIDX record liger --environment /tmp/environment.yaml --timer $TIMER $SAMPLING --processes $N \
  --label suite=calibration16 --label batch=$BATCH --label timer=$TIMER --label sampling=${MIN_TIME:+min-time-}${MIN_TIME:-do-bench} \
  --store /tmp/store-calibration-$BATCH -- python3 timers_driver.py default $KERNELS
echo "record rc=$? in $(( $(date +%s) - t0 )) s"
cd /tmp
# stopped at LIMIT, record imports nothing and keeps what the finished processes wrote: store that
kept=$(ls -td /tmp/kidx-record-* 2>/dev/null | head -1)
if [ ! -d /tmp/store-calibration-$BATCH ] && [ -n "$kept" ]; then
  $KIDX record liger --recover "$kept" --store /tmp/store-calibration-$BATCH | tail -1
fi
$KIDX get runs -l suite=calibration16 -o wide --store /tmp/store-calibration-$BATCH > $R/kidx-get-runs.txt 2>&1; wc -l $R/kidx-get-runs.txt
$KIDX export -o $R/store.kidx.json --store /tmp/store-calibration-$BATCH; echo "export rc=$?"; gzip -c $R/store.kidx.json > $OUT/calibration-$BATCH.kidx.json.gz; ls -la $R/store.kidx.json $OUT/
for kept in /tmp/kidx-record-*; do [ -d "$kept" ] && cp -r "$kept" $R/; done
cp $R/device.log $OUT/calibration-$BATCH-device.log; cp $R/kidx-get-runs.txt $OUT/calibration-$BATCH-get-runs.txt; cp $R/environment.yaml $OUT/calibration-$BATCH-environment.yaml
echo "== $(date -u +%FT%TZ) end, $(( $(date +%s) - START )) s"
