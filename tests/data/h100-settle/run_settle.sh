#!/bin/bash
# On the device machine, from the repository root: bash tests/data/h100-settle/run_settle.sh [ROUNDS] [N] [LIMIT_S]
# With the timers waiting for the SM clock to settle: the warm-up probe (tests/data/h100-warmup's
# warmup_probe.py, do_bench's budgets) in ROUNDS fresh processes, then geglu's steps recorded with
# kidx record liger --timer cuda_graph --processes N (tests/data/h100-steps's steps_driver.py)
set -u
ROUNDS=${1:-10}; N=${2:-10}; LIMIT=${3:-420}
export PYTHONUNBUFFERED=1
START=$(date +%s)
REPO=$(pwd); D=$REPO/.devicework
R=/tmp/result/settle; mkdir -p $R
exec > >(tee -a "$R/device.log") 2>&1
echo "== $(date -u +%FT%TZ) settle: $ROUNDS probe rounds, then geglu in $N processes"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site $D/whl/*.whl || { echo "wheel install failed"; exit 1; }
export PYTHONPATH=/tmp/site:$REPO
KIDX="python3 -m kidx"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit,temperature.gpu --format=csv
python3 -c "import sys, torch, triton, transformers, liger_kernel; print(sys.version.split()[0], 'torch', torch.__version__, 'cuda', torch.version.cuda, 'triton', triton.__version__, 'transformers', transformers.__version__)"
for round in $(seq 1 $ROUNDS); do
  python3 $REPO/tests/data/h100-warmup/warmup_probe.py settled 25 100 >> $R/samples.jsonl || echo "round $round failed"
done
echo "probe done at $(( $(date +%s) - START )) s"
rm -rf /tmp/liger && mkdir -p /tmp/liger/data && cp -r $D/scripts /tmp/liger/scripts && cp $REPO/tests/data/h100-steps/steps_driver.py /tmp/liger/scripts/
(cd /tmp/liger && git init -q -b main && git add scripts && git -c user.name=kidx -c user.email=kidx@localhost commit -qm "Liger-Kernel benchmark scripts") || echo "no git checkout"
(cd /tmp && $KIDX env capture -o yaml > $R/environment.yaml) || echo "env capture failed"
cd /tmp/liger/scripts
t0=$(date +%s)
timeout -s INT -k 30 $LIMIT $KIDX record liger --environment $R/environment.yaml --timer cuda_graph --processes $N \
  --label suite=geglu --label sampling=settled --label timer=cuda_graph --store /tmp/store-settle -- python3 steps_driver.py geglu
echo "record rc=$? in $(( $(date +%s) - t0 )) s"
cd /tmp
$KIDX get runs -l suite=geglu -o wide --store /tmp/store-settle > $R/kidx-get-runs.txt 2>&1; wc -l $R/kidx-get-runs.txt
$KIDX export -o $R/store.kidx.json --store /tmp/store-settle; echo "export rc=$?"
for kept in /tmp/kidx-record-*; do [ -d "$kept" ] && cp -r "$kept" $R/; done
(cd /tmp/result && tar czf $OUT/settle.tgz settle)
echo "== $(date -u +%FT%TZ) end, $(( $(date +%s) - START )) s"
