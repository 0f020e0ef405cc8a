#!/bin/bash
# Everything the H200 session does, in one go; each step's failure is reported, the rest still run.
set -u
export PYTHONUNBUFFERED=1
D=$(pwd)/.devicework
LOG=$OUT/device.log
exec > >(tee -a "$LOG") 2>&1
echo "== $(date -u +%FT%TZ) start"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site $D/whl/*.whl || { echo "wheel install failed"; exit 1; }
export PYTHONPATH=/tmp/site
KIDX="python3 -P -m kidx"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv
python3 -c "import sys, torch, triton, transformers, liger_kernel; print(sys.version); print('torch', torch.__version__, 'cuda', torch.version.cuda, 'triton', triton.__version__, 'transformers', transformers.__version__)"
echo "== env capture"
$KIDX env capture -o yaml > $OUT/environment.yaml; echo "rc=$?"
cat $OUT/environment.yaml
echo "== liger llama4_rope harness"
rm -rf /tmp/liger && mkdir -p /tmp/liger/data && cp -r $D/scripts /tmp/liger/scripts
(cd /tmp/liger/scripts && time python3 $D/run_llama4_rope.py > /tmp/liger/harness.log 2>&1; echo "harness rc=$?"; tail -5 /tmp/liger/harness.log)
cp /tmp/liger/data/all_benchmark_data.csv $OUT/ && wc -l $OUT/all_benchmark_data.csv
echo "== kidx import"
$KIDX import liger $OUT/all_benchmark_data.csv --environment $OUT/environment.yaml --store /tmp/store -o name | tail -3
{ echo '$ kidx get runs'; $KIDX get runs --store /tmp/store; echo '$ kidx get environments'; $KIDX get environments --store /tmp/store; } > $OUT/kidx-get-runs.txt 2>&1
head -5 $OUT/kidx-get-runs.txt
echo "== nvbench"
python3 -c "import cuda.bench as b; print('cuda-bench', b.__version__)"
(cd /tmp/liger/scripts && timeout 200 python3 $D/nvbench_rope.py --jsonbin $OUT/nvbench.json --timeout 10 > /tmp/nvbench.log 2>&1; echo "nvbench rc=$?"; tail -30 /tmp/nvbench.log)
if [ -d $OUT/nvbench.json-bin ]; then (cd $OUT && tar cf nvbench-bin.tar nvbench.json-bin nvbench.json-freqs-bin 2>/dev/null; tar tf nvbench-bin.tar; rm -rf nvbench.json-bin nvbench.json-freqs-bin); fi
ls -la $OUT
echo "== $(date -u +%FT%TZ) end"
