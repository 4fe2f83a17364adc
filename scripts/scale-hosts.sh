#!/usr/bin/env bash
# CPU time per event of one flow as the number of hosts grows (issue #22, scale): the same one
# GPUDirect write_imm flow (dgx-a/gpu0 via nic0 to dgx-b/gpu0 via nic0) on a study of N DGX
# H100-class hosts, for each N given (default 2 8 32 128). Prints N, user+sys CPU seconds of
# `gdrsim run --jobs 1 --quiet`, the events `gdrsim check` estimates, and CPU per event.
#
#   cargo build --release && scripts/scale-hosts.sh [N...]
#
# SIZES (a TOML value, default 8 B to 1 MiB by factors of 2) and PATHS (default gpudirect)
# override the sweep; COPIES (default 8) is how many scenarios run that one flow (more work to
# time: each is its own points).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bin=./target/release/gdrsim
dir=${KEEP:-$(mktemp -d)}; [ -n "${KEEP:-}" ] || trap 'rm -rf "$dir"' EXIT; mkdir -p "$dir"
sizes=${SIZES:-'{ from = "8B", to = "1MiB", factor = 2 }'}
paths=${PATHS:-gpudirect}
copies=${COPIES:-8}
list() { local out=""; for x in $1; do out+="${out:+, }\"$x\""; done; echo "$out"; }
printf "%6s %10s %12s %14s\n" hosts cpu_s events ns_per_event
for n in "${@:-2 8 32 128}"; do
  for n in $n; do
  c="$dir/scale-$n.toml"
  {
    echo "name = \"scale-$n\""
    echo "seed = 1"
    echo "[sim]"
    echo "iterations = 60"
    echo "stream_messages = 64"
    echo "[sweep]"
    echo "sizes = $sizes"
    echo "paths = [$(list "$paths")]"
    echo "ops = [\"write_imm\"]"
    echo "[output]"
    echo "charts = []"
    echo "[[machines]]"
    echo "name = \"dgx-h100\""
    echo "preset = \"dgx-h100\""
    for ((h = 0; h < n; h++)); do
      case $h in 0) name=dgx-a ;; 1) name=dgx-b ;; *) name="dgx-$h" ;; esac
      printf '[[hosts]]\nname = "%s"\nmachine = "dgx-h100"\n' "$name"
    done
    for ((k = 0; k < copies; k++)); do
      echo "[[scenarios]]"
      echo "name = \"1 GPU ($k)\""
      echo 'sender = { host = "dgx-a", nic = "nic0", gpu = "gpu0" }'
      echo 'receiver = { host = "dgx-b", nic = "nic0", gpu = "gpu0" }'
    done
  } > "$c"
  events=$($bin check "$c" 2>&1 | sed -n 's/^estimated: \([0-9.e+]*\) events.*/\1/p')
  cpu=$( { /usr/bin/time -f "%U %S" $bin run "$c" --jobs 1 --quiet --out "$dir/out-$n" 2>&1 >/dev/null; } | tail -1 | awk '{print $1 + $2}')
  awk -v n="$n" -v c="$cpu" -v e="$events" 'BEGIN { printf "%6d %10.2f %12s %14.1f\n", n, c, e, c * 1e9 / e }'
  done
done
