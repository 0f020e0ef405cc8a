#!/bin/bash
# Large-shape checks for speed of light: torch copy and matmul figures, NVBench bandwidth
# of RMSNorm and llama4 RoPE forward; then more A/A repetitions if time allows.
set -u
export PYTHONUNBUFFERED=1
START=$(date +%s)
D=$(pwd)/.devicework
REPO=$(pwd)
LOG=$OUT/device-sol.log
exec > >(tee -a "$LOG") 2>&1
echo "== $(date -u +%FT%TZ) start"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site $D/whl/*.whl || { echo "wheel install failed"; exit 1; }
export PYTHONPATH=/tmp/site:$REPO
python3 -c "import cuda.bench as b; print('cuda-bench', b.__version__)"
python3 $D/peaks.py > $OUT/torch-peaks.json; echo "peaks rc=$?"; cat $OUT/torch-peaks.json
rm -rf /tmp/sol && mkdir -p /tmp/sol/data && cp -r $D/scripts /tmp/sol/scripts
(cd /tmp/sol/scripts && timeout 200 python3 $D/nvbench_sol.py --jsonbin $OUT/nvbench-sol.json --timeout 10 > $OUT/nvbench-sol.log 2>&1; echo "nvbench rc=$?"; tail -25 $OUT/nvbench-sol.log)
if [ -d $OUT/nvbench-sol.json-bin ]; then (cd $OUT && tar cf nvbench-sol-bin.tar nvbench-sol.json-bin nvbench-sol.json-freqs-bin 2>/dev/null; rm -rf nvbench-sol.json-bin nvbench-sol.json-freqs-bin); fi
echo "== sol part done at $(( $(date +%s) - START )) s"
bash $D/aa_run.sh ${1:-9} ${2:-11} ${3:-330}
ls -la $OUT
