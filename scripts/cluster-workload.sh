#!/usr/bin/env bash
# Wall time and peak memory of issue #22's cluster workload: HOSTS DGX H100-class hosts, every
# GPU sending one 1 MiB GPUDirect write with immediate to the same GPU of each of the next 8
# hosts, all at once (8 x 8 x HOSTS flows: 8,192 over 128 hosts), one workload point with its
# noise-free run and 3 jittered repeats. Prints hosts, flows, wall seconds, CPU seconds and
# peak RSS of `gdrsim run`.
#
#   cargo build --release && scripts/cluster-workload.sh [HOSTS...]     # default 32 128
#
# WQE=inline-only posts by doorbell (MLX5_POST_SEND_PREFER_BF=0): the NIC then fetches every
# WQE by DMA read, which couples each rail's transfers into one sharing group (the costliest
# case for the fluid solve). KEEP=DIR keeps the generated configs and outputs there.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bin=./target/release/gdrsim
[ -x "$bin" ] || { echo "build first: cargo build --release" >&2; exit 2; }
command -v /usr/bin/time >/dev/null || { echo "needs /usr/bin/time (GNU time)" >&2; exit 2; }
dir=${KEEP:-$(mktemp -d)}; [ -n "${KEEP:-}" ] || trap 'rm -rf "$dir"' EXIT; mkdir -p "$dir"
wqe=${WQE:-auto}

config() { # HOSTS
  local n=$1 h g d
  printf 'name = "cluster"\n[sim]\niterations = 3\nmin_iterations = 3\nstream_window = 1\n'
  printf 'stream_messages = 3\n[sweep]\nsizes = ["1MiB"]\npaths = ["gpudirect"]\n'
  printf 'ops = ["write_imm"]\n[output]\ncharts = []\n'
  printf '[[machines]]\nname = "dgx"\npreset = "dgx-h100"\n'
  for g in 0 1 2 3 4 5 6 7; do
    printf '[[machines.nics]]\nname = "nic%d"\nwqe_delivery = "%s"\n' "$g" "$wqe"
  done
  for ((h = 0; h < n; h++)); do printf '[[hosts]]\nname = "n%d"\nmachine = "dgx"\n' "$h"; done
  printf '[[scenarios]]\nname = "cluster"\nflows = [\n'
  for ((h = 0; h < n; h++)); do
    for g in 0 1 2 3 4 5 6 7; do
      for d in 1 2 3 4 5 6 7 8; do
        printf '  { name = "f%d.%d.%d", messages = 1, sender = { host = "n%d", nic = "nic%d", gpu = "gpu%d" }, receiver = { host = "n%d", nic = "nic%d", gpu = "gpu%d" } },\n' \
          "$h" "$g" "$d" "$h" "$g" "$g" $(((h + d) % n)) "$g" "$g"
      done
    done
  done
  printf ']\n'
}

printf "%6s %7s %8s %8s %9s  (wqe_delivery = %s)\n" hosts flows wall_s cpu_s rss_MiB "$wqe"
for n in "${@:-32 128}"; do
  for hosts in $n; do
    [ "$hosts" -gt 8 ] || { echo "HOSTS must be more than 8 (each GPU sends to the next 8 hosts)" >&2; exit 2; }
    config "$hosts" >"$dir/cluster-$hosts.toml"
    /usr/bin/time -f "%e %U %S %M" -o "$dir/time-$hosts" \
      "$bin" run "$dir/cluster-$hosts.toml" --quiet --out "$dir/out-$hosts"
    read -r wall user sys rss <"$dir/time-$hosts"
    printf "%6d %7d %8.2f %8.2f %9.0f\n" "$hosts" $((hosts * 64)) "$wall" \
      "$(echo "$user + $sys" | bc)" "$(echo "$rss / 1024" | bc)"
  done
done
