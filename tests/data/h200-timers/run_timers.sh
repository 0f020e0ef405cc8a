#!/bin/bash
# On the device machine, from the repository root: bash tests/data/h200-timers/run_timers.sh PHASE
# smoke: kidx.measure on torch calls, then kidx record --timer cuda_graph --processes 2
# main:  kidx record --timer cuda_graph and --timer cuda_events, N processes each (default shapes)
# step:  kidx record --timer cuda_graph, N processes, the default shapes at 1.1x the rows
set -u
PHASE=$1; N=${2:-8}; TIMERS=${3:-cuda_graph}
export PYTHONUNBUFFERED=1
START=$(date +%s)
REPO=$(pwd); D=$REPO/.devicework; HERE=$REPO/tests/data/h200-timers
R=/tmp/result/$PHASE; mkdir -p $R
exec > >(tee -a "$R/device.log") 2>&1
echo "== $(date -u +%FT%TZ) phase $PHASE, $N processes, timers $TIMERS"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site $D/whl/*.whl || { echo "wheel install failed"; exit 1; }
export PYTHONPATH=/tmp/site:$REPO
KIDX="python3 -m kidx"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm,clocks.mem --format=csv
python3 -c "import sys, torch, triton, transformers, liger_kernel; print(sys.version.split()[0], 'torch', torch.__version__, 'cuda', torch.version.cuda, 'triton', triton.__version__, 'transformers', transformers.__version__)"
rm -rf /tmp/liger && mkdir -p /tmp/liger/data && cp -r $D/scripts /tmp/liger/scripts && cp $HERE/timers_driver.py /tmp/liger/scripts/
(cd /tmp/liger && git init -q -b main && git add scripts && git -c user.name=kidx -c user.email=kidx@localhost commit -qm "Liger-Kernel benchmark scripts") || echo "no git checkout"
(cd /tmp && $KIDX env capture -o yaml > $R/environment.yaml) || echo "env capture failed"
if [ "$PHASE" = smoke ]; then
  (cd /tmp && timeout 200 python3 $HERE/measure_check.py /tmp/store-$PHASE; echo "measure_check rc=$?")
fi
SHAPES=default; [ "$PHASE" = step ] && SHAPES=step
cd /tmp/liger/scripts
for timer in $TIMERS; do
  t0=$(date +%s)
  timeout -s INT -k 30 ${RECORD_LIMIT:-420} $KIDX record liger --environment $R/environment.yaml --timer $timer --processes $N \
    --label suite=h200-timers --label shapes=$SHAPES --label timer=$timer --store /tmp/store-$PHASE -- python3 timers_driver.py $SHAPES
  echo "record $timer rc=$? in $(( $(date +%s) - t0 )) s"
done
cd /tmp
$KIDX get runs -l suite=h200-timers -o wide --store /tmp/store-$PHASE > $R/kidx-get-runs.txt 2>&1; head -20 $R/kidx-get-runs.txt
$KIDX get protocols --store /tmp/store-$PHASE 2>&1 | head -20
$KIDX export -o $R/store.kidx.json --store /tmp/store-$PHASE; echo "export rc=$?"
for kept in /tmp/kidx-record-*; do [ -d "$kept" ] && cp -r "$kept" $R/; done; ls -d $R/kidx-record-* 2>/dev/null
(cd /tmp/result && tar czf $OUT/$PHASE.tgz $PHASE)
ls -la $OUT
echo "== $(date -u +%FT%TZ) end, $(( $(date +%s) - START )) s"
