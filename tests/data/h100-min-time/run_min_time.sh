#!/bin/bash
# On the device machine, from the repository root: bash tests/data/h100-min-time/run_min_time.sh [N] [LIMIT_S]
# geglu's steps (tests/data/h100-steps's steps_driver.py geglu) recorded with
# kidx record liger --timer cuda_graph --min-time 1 --processes N
set -u
N=${1:-6}; LIMIT=${2:-300}
export PYTHONUNBUFFERED=1
START=$(date +%s)
REPO=$(pwd); D=$REPO/.devicework
R=/tmp/result/min-time; mkdir -p $R
exec > >(tee -a "$R/device.log") 2>&1
echo "== $(date -u +%FT%TZ) geglu with --min-time 1, $N processes"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site $D/whl/*.whl || { echo "wheel install failed"; exit 1; }
export PYTHONPATH=/tmp/site:$REPO
KIDX="python3 -m kidx"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit,temperature.gpu --format=csv
python3 -c "import sys, torch, triton, transformers, liger_kernel; print(sys.version.split()[0], 'torch', torch.__version__, 'cuda', torch.version.cuda, 'triton', triton.__version__, 'transformers', transformers.__version__)"
rm -rf /tmp/liger && mkdir -p /tmp/liger/data && cp -r $D/scripts /tmp/liger/scripts && cp $REPO/tests/data/h100-steps/steps_driver.py /tmp/liger/scripts/
(cd /tmp/liger && git init -q -b main && git add scripts && git -c user.name=kidx -c user.email=kidx@localhost commit -qm "Liger-Kernel benchmark scripts") || echo "no git checkout"
(cd /tmp && $KIDX env capture -o yaml > $R/environment.yaml) || echo "env capture failed"
cd /tmp/liger/scripts
t0=$(date +%s)
timeout -s INT -k 30 $LIMIT $KIDX record liger --environment $R/environment.yaml --timer cuda_graph --min-time 1 --processes $N \
  --label suite=geglu --label sampling=min-time-1 --label timer=cuda_graph --store /tmp/store-min-time -- python3 steps_driver.py geglu
echo "record rc=$? in $(( $(date +%s) - t0 )) s"
cd /tmp
$KIDX get runs -l suite=geglu -o wide --store /tmp/store-min-time > $R/kidx-get-runs.txt 2>&1; wc -l $R/kidx-get-runs.txt
$KIDX export -o $R/store.kidx.json --store /tmp/store-min-time; echo "export rc=$?"
for kept in /tmp/kidx-record-*; do [ -d "$kept" ] && cp -r "$kept" $R/; done
(cd /tmp/result && tar czf $OUT/min-time.tgz min-time)
echo "== $(date -u +%FT%TZ) end, $(( $(date +%s) - START )) s"
