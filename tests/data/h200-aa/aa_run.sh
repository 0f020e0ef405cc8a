#!/bin/bash
# A/A repetitions of Liger's harness on one H200: each kernel of each repetition is a
# separate process; each repetition captures the environment with kidx first.
set -u
export PYTHONUNBUFFERED=1
START=$(date +%s)
D=$(pwd)/.devicework
REPO=$(pwd)
FIRST=${1:-1}; LAST=${2:-10}; DEADLINE=${3:-540}
LOG=$OUT/device.log
exec > >(tee -a "$LOG") 2>&1
echo "== $(date -u +%FT%TZ) start reps $FIRST..$LAST"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site $D/whl/*.whl || { echo "wheel install failed"; exit 1; }
export PYTHONPATH=/tmp/site:$REPO
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv
python3 -c "import sys, torch, triton, transformers, liger_kernel; print(sys.version.split()[0], 'torch', torch.__version__, 'cuda', torch.version.cuda, 'triton', triton.__version__, 'transformers', transformers.__version__)"
mkdir -p /tmp/aa
for rep in $(seq -f %02g $FIRST $LAST); do
  now=$(( $(date +%s) - START ))
  if [ $now -gt $DEADLINE ]; then echo "== deadline reached before rep $rep ($now s)"; break; fi
  R=/tmp/aa/rep-$rep; rm -rf $R; mkdir -p $R/data; cp -r $D/scripts $R/scripts
  (cd /tmp && python3 -m kidx env capture -o yaml > $R/environment.yaml 2>$R/env-capture.err; echo "rep $rep env capture rc=$?")
  for k in rms_norm llama4_rope swiglu; do
    t0=$(date +%s.%N)
    (cd $R/scripts && python3 $D/aa_driver.py $k > $R/$k.log 2>&1); rc=$?
    echo "rep $rep $k rc=$rc $(python3 -c "import time;print(round(time.time()-$t0,1))") s, rows $(($(wc -l < $R/data/all_benchmark_data.csv)-1))"
    [ $rc -ne 0 ] && tail -5 $R/$k.log
  done
  rm -rf $R/scripts
done
(cd /tmp/aa && tar cf $OUT/aa-$FIRST.tar rep-*)
ls -la $OUT
echo "== $(date -u +%FT%TZ) end, $(( $(date +%s) - START )) s"
