#!/usr/bin/env bash
# Measures one GPU's copy-engine, launch and reduction figures (scripts/device/gpu_probe.cu) and
# records what the machine is. Run on a machine with a GPU and CUDA's compiler; writes into
# ${OUT:-./gpu-probe-out}. The figures it produced are rows M1-M4 of docs/references.md.
set -euo pipefail
out=${OUT:-./gpu-probe-out}
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
{
  date -u
  uname -a
  nvcc --version | tail -2
  nvidia-smi
  nvidia-smi topo -m || true
  for d in /sys/bus/pci/devices/*; do echo "$d $(cat $d/vendor) $(cat $d/class) $(cat $d/current_link_speed 2>/dev/null) x$(cat $d/current_link_width 2>/dev/null)"; done
  lspci -vvv 2>/dev/null | grep -E "^[0-9a-f]|MaxPayload|MaxReadReq|LnkSta:" || echo "no lspci"
  python3 - <<'PY' || true
import glob
for dev in sorted(glob.glob("/sys/bus/pci/devices/*")):
    try:
        c = open(dev + "/config", "rb").read()
    except OSError:
        continue
    if len(c) < 64 or not (c[6] & 0x10):
        continue
    p = c[0x34]
    while p and p + 12 <= len(c):
        if c[p] == 0x10:
            cap = int.from_bytes(c[p + 4:p + 8], "little")
            ctl = int.from_bytes(c[p + 8:p + 10], "little")
            print(dev, "MPS supported", 128 << (cap & 7), "MPS", 128 << ((ctl >> 5) & 7),
                  "MRRS", 128 << ((ctl >> 12) & 7))
            break
        p = c[p + 1]
PY
  nvidia-smi -q | grep -i -E -A3 "PCI|Link|Max Clocks|Product Name" || true
} >"$out/machine.txt" 2>&1
nvcc -O3 -arch=sm_90 -std=c++17 -o /tmp/gpu_probe "$here/gpu_probe.cu"
/tmp/gpu_probe | tee "$out/gpu_probe.csv"
