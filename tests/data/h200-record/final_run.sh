#!/bin/bash
# kidx on the H200 itself: env capture with measured peaks, kidx record around Liger's
# harness (rms_norm and llama4_rope at large shapes), and the Python API's recording script.
set -u
export PYTHONUNBUFFERED=1
START=$(date +%s)
D=$(pwd)/.devicework
REPO=$(pwd)
R=/tmp/result; rm -rf $R; mkdir -p $R
exec > >(tee -a "$R/device.log") 2>&1
echo "== $(date -u +%FT%TZ) start"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site $D/whl/*.whl || { echo "wheel install failed"; exit 1; }
export PYTHONPATH=/tmp/site:$REPO
KIDX="python3 -m kidx"
echo "== env capture --measure-peaks"
(cd /tmp && time $KIDX env capture --measure-peaks -o yaml > $R/environment.yaml; echo "rc=$?"); cat $R/environment.yaml
echo "== kidx record: Liger's harness in a git checkout of its scripts"
rm -rf /tmp/liger && mkdir -p /tmp/liger/data && cp -r $D/scripts /tmp/liger/scripts && cp $D/sol_driver.py /tmp/liger/scripts/
(cd /tmp/liger && git init -q -b main && git add scripts && git -c user.name=kidx -c user.email=kidx@localhost commit -qm "Liger-Kernel benchmark scripts" && git log --oneline -1) || echo "no git checkout"
cd /tmp/liger/scripts
time $KIDX record liger --environment $R/environment.yaml --store /tmp/store --label suite=h200-record -- python3 sol_driver.py rms_norm; echo "record rms_norm rc=$?"
time $KIDX record liger --store /tmp/store --label suite=h200-record -- python3 sol_driver.py llama4_rope; echo "record llama4_rope (capture) rc=$?"
cp /tmp/liger/data/all_benchmark_data.csv $R/
{ echo '$ kidx get runs -l suite=h200-record -o wide'; $KIDX get runs -l suite=h200-record -o wide --store /tmp/store;
  echo '$ kidx get environments'; $KIDX get environments --store /tmp/store; } > $R/kidx-get-runs.txt 2>&1
cat $R/kidx-get-runs.txt
$KIDX compare -l suite=h200-record --store /tmp/store > $R/kidx-compare.txt 2>&1; echo "compare rc=$?"; cat $R/kidx-compare.txt | head -60
$KIDX compare -l suite=h200-record -o json --store /tmp/store > $R/kidx-compare.json 2>&1
$KIDX export -o $R/record-store.kidx.json --store /tmp/store; echo "export rc=$?"
cd $REPO
echo "== Python API: record_measurement.py"
(cd /tmp && python3 $REPO/tests/data/h200-api/record_measurement.py --store /tmp/api-store > $R/api.log 2>&1; echo "api rc=$?"); tail -40 $R/api.log
(cd /tmp && tar cf $OUT/final.tar result)
ls -la $R $OUT
echo "== $(date -u +%FT%TZ) end, $(( $(date +%s) - START )) s"
