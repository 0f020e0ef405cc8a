#!/bin/bash
# device: does kidx record's GPU state and SM clock after timing work on a real GPU?
set -u
export PYTHONUNBUFFERED=1
REPO=$(pwd); D=$REPO/.devicework; HERE=$REPO/tests/data/h200-timers
R=/tmp/result/gpustate; mkdir -p $R
exec > >(tee -a "$R/device.log") 2>&1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site $D/whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$REPO
python3 - <<'PY'
import torch, shutil
try:
    import pynvml; print("pynvml", pynvml.__file__)
except Exception as e: print("no pynvml:", e)
try: print("clock_rate", torch.cuda.clock_rate())
except Exception as e: print("clock_rate raised", type(e).__name__, e)
p = torch.cuda.get_device_properties(0); print("uuid", repr(str(p.uuid)), "nvidia-smi", shutil.which("nvidia-smi"))
from kidx.timers.cuda import _sm_clock; print("kidx _sm_clock", _sm_clock(torch))
from kidx.capture.gpu_state import gpu_states; print("gpu_states", [s.text() for s in gpu_states()])
PY
nvidia-smi -L
rm -rf /tmp/liger && mkdir -p /tmp/liger/data && cp -r $D/scripts /tmp/liger/scripts && cp $HERE/timers_driver.py /tmp/liger/scripts/
(cd /tmp/liger && git init -q -b main && git add scripts && git -c user.name=kidx -c user.email=kidx@localhost commit -qm "scripts")
cd /tmp/liger/scripts
for timer in cuda_graph cupti; do
timeout -s INT -k 30 200 python3 -m kidx record liger --timer $timer --processes 2 --label suite=gpu-state --label timer=$timer --store /tmp/store -- python3 timers_driver.py default rms_norm
echo "record $timer rc=$?"
done
cd /tmp
python3 -m kidx get runs -l suite=gpu-state -o custom-columns='NAME:.metadata.name,CLOCK:.metadata.annotations.kernelindex\.dev/sm-clock-mhz,WARN:.metadata.annotations.kernelindex\.dev/clock-warning,BEFORE:.metadata.annotations.kernelindex\.dev/gpu-state-before' --store /tmp/store | head -40
N=$(python3 -m kidx get runs -l suite=gpu-state -o name --store /tmp/store | head -1)
python3 -m kidx describe $N --store /tmp/store | head -60
python3 -m kidx export -o $R/store.kidx.json --store /tmp/store
(cd /tmp/result && tar czf $OUT/gpustate.tgz gpustate)
