#!/bin/bash
# On the device machine, from the repository root: bash tests/data/h100-aa16/run_aa16.sh [N] [LIMIT_S]
# kidx record liger --timer cuda_graph --processes N of aa_driver.py (every process a fresh Python)
set -u
N=${1:-16}; LIMIT=${2:-330}
export PYTHONUNBUFFERED=1
START=$(date +%s)
REPO=$(pwd); D=$REPO/.devicework; HERE=$REPO/tests/data/h100-aa16
R=/tmp/result/aa16; mkdir -p $R
exec > >(tee -a "$R/device.log") 2>&1
echo "== $(date -u +%FT%TZ) aa16, $N processes"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site $D/whl/*.whl || { echo "wheel install failed"; exit 1; }
export PYTHONPATH=/tmp/site:$REPO
KIDX="python3 -m kidx"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm,clocks.mem --format=csv
python3 -c "import sys, torch, triton, transformers, liger_kernel; print(sys.version.split()[0], 'torch', torch.__version__, 'cuda', torch.version.cuda, 'triton', triton.__version__, 'transformers', transformers.__version__)"
rm -rf /tmp/liger && mkdir -p /tmp/liger/data && cp -r $D/scripts /tmp/liger/scripts && cp $HERE/aa_driver.py /tmp/liger/scripts/
(cd /tmp/liger && git init -q -b main && git add scripts && git -c user.name=kidx -c user.email=kidx@localhost commit -qm "Liger-Kernel benchmark scripts") || echo "no git checkout"
(cd /tmp && $KIDX env capture -o yaml > $R/environment.yaml) || echo "env capture failed"
cd /tmp/liger/scripts
t0=$(date +%s)
timeout -s INT -k 30 $LIMIT $KIDX record liger --environment $R/environment.yaml --timer cuda_graph --processes $N \
  --label suite=aa16 --label timer=cuda_graph --store /tmp/store-aa16 -- python3 aa_driver.py
echo "record rc=$? in $(( $(date +%s) - t0 )) s"
cd /tmp
$KIDX get runs -l suite=aa16 -o wide --store /tmp/store-aa16 > $R/kidx-get-runs.txt 2>&1; head -5 $R/kidx-get-runs.txt; wc -l $R/kidx-get-runs.txt
$KIDX export -o $R/store.kidx.json --store /tmp/store-aa16; echo "export rc=$?"
for kept in /tmp/kidx-record-*; do [ -d "$kept" ] && cp -r "$kept" $R/; done; ls -d $R/kidx-record-* 2>/dev/null
(cd /tmp/result && tar czf $OUT/aa16.tgz aa16)
ls -la $OUT
echo "== $(date -u +%FT%TZ) end, $(( $(date +%s) - START )) s"
