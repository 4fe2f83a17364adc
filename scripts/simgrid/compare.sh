#!/usr/bin/env bash
# Simulator speed against SimGrid 3.32 (CM02) on the same route, one core (issue #22).
#
#   scripts/simgrid/compare.sh [CSV]          (default CSV: /tmp/simgrid-compare.csv)
#
# A bench to run and report, not a CI step. See scripts/simgrid/README.md for what it models and
# measures. Environment knobs:
#   GDRSIM=PATH      gdrsim binary (default: target/release/gdrsim; copied to the work dir first,
#                    so a rebuild during the run does not change it)
#   CORE=N           the core both simulators are pinned to (default 0)
#   TARGET_S=S       CPU seconds the slower simulator should spend per measured run (default 1.5)
#   REPEATS=K        runs per measurement, the fastest kept (default 3)
#   WINDOW=W         messages in flight per flow, both simulators (default 16, gdrsim's
#                    stream_window default)
#   SIZES="8 64 .."  message sizes in bytes (default: 8 B, 64 B, 1 KiB, 4 KiB, 16 KiB, 64 KiB,
#                    256 KiB, 1 MiB, 16 MiB, 1 GiB, 16 GiB)
#   INCAST_FLOWS=F   senders of the incast row (default 64; 0 skips the row)
#   KEEP=1           keep the work directory (configs, route files, outputs)
set -euo pipefail

CSV=${1:-/tmp/simgrid-compare.csv}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
CORE=${CORE:-0}
TARGET_S=${TARGET_S:-1.5}
REPEATS=${REPEATS:-3}
WINDOW=${WINDOW:-16}
INCAST_FLOWS=${INCAST_FLOWS:-64}
SIZES=${SIZES:-"8 64 1024 4096 16384 65536 262144 1048576 16777216 1073741824 17179869184"}
N0=3              # the setup run: gdrsim's streaming run sends at least 3 messages
PROBE=1000        # messages of the probe run that sizes N
N_MAX=2000000     # at most this many messages per size
GD_MAX_MSGS=100000 # gdrsim's limit on stream_messages (config/limits.rs MAX_COUNT)
GD_MAX_POINTS=400  # at most this many copies of the scenario in one gdrsim run

WORK=$(mktemp -d /tmp/simgrid-compare.XXXXXX)
if [ "${KEEP:-0}" = 1 ]; then
  echo "work directory: $WORK (kept)" >&2
else
  trap 'rm -rf "$WORK"' EXIT
fi

log() { printf '%s\n' "$*" >&2; }
die() { log "compare.sh: $*"; exit 1; }

# ---------------------------------------------------------------- dependencies
need=()
dpkg -s libsimgrid-dev >/dev/null 2>&1 || need+=(libsimgrid-dev)
command -v g++ >/dev/null 2>&1 || need+=(g++)
command -v pkg-config >/dev/null 2>&1 || need+=(pkg-config)
command -v taskset >/dev/null 2>&1 || need+=(util-linux)
if ! perf stat -x, -e task-clock -o /dev/null true >/dev/null 2>&1; then
  [ -x /usr/bin/time ] || need+=(time)
fi
if [ ${#need[@]} -gt 0 ]; then
  log "installing ${need[*]} (apt-get)"
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get update -qq >/dev/null || die "apt-get update failed: cannot install ${need[*]}"
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}" >/dev/null \
    || die "apt-get install ${need[*]} failed: the comparison needs SimGrid 3.32 (libsimgrid-dev)"
fi
SG_VERSION=$(pkg-config --modversion simgrid 2>/dev/null || dpkg-query -W -f='${Version}' libsimgrid-dev)
case "$SG_VERSION" in 3.32*) ;; *) log "warning: SimGrid $SG_VERSION, the issue's figures are against 3.32";; esac

# ---------------------------------------------------------------- binaries
GD_SRC=${GDRSIM:-$ROOT/target/release/gdrsim}
[ -x "$GD_SRC" ] || die "no gdrsim binary at $GD_SRC (cargo build --release, or GDRSIM=...)"
GD=$WORK/gdrsim
cp "$GD_SRC" "$GD"
SG=$WORK/route
log "compiling route.cpp against SimGrid $SG_VERSION"
SG_FLAGS=$(pkg-config --cflags --libs simgrid 2>/dev/null || echo -lsimgrid)
# shellcheck disable=SC2086
g++ -O2 -std=c++17 -o "$SG" "$HERE/route.cpp" $SG_FLAGS || die "route.cpp did not compile"
SG_CFG=(--cfg=network/model:CM02 --log=root.thres:critical)

# ---------------------------------------------------------------- CPU time of one command
# cpu_time OUTFILE CMD...: runs CMD pinned to $CORE, its stdout and stderr into OUTFILE; prints
# its CPU seconds (user + system). Fails when CMD fails.
if perf stat -x, -e task-clock -o /dev/null true >/dev/null 2>&1; then
  cpu_time() {
    local out=$1; shift
    taskset -c "$CORE" perf stat -x, -e task-clock -o "$WORK/perf.txt" -- "$@" >"$out" 2>&1 || return 1
    awk -F, '/task-clock/ { printf "%.6f\n", $1 / 1000 }' "$WORK/perf.txt"
  }
  CLOCK="perf stat task-clock"
else
  cpu_time() {
    local out=$1; shift
    taskset -c "$CORE" /usr/bin/time -f '%U %S' -o "$WORK/time.txt" -- "$@" >"$out" 2>&1 || return 1
    awk 'END { printf "%.6f\n", $1 + $2 }' "$WORK/time.txt"
  }
  CLOCK="/usr/bin/time user+sys (10 ms resolution)"
fi
# best_of OUTFILE CMD...: the smallest CPU time of $REPEATS runs.
best_of() {
  local best="" t i
  for ((i = 0; i < REPEATS; i++)); do
    t=$(cpu_time "$@") || return 1
    best=$(awk -v a="$best" -v b="$t" 'BEGIN { print (a == "" || b < a) ? b : a }')
  done
  echo "$best"
}

# ---------------------------------------------------------------- gdrsim configs
# The machine, network and hosts of the embedded default config (configs/default.toml is the file
# the binary embeds); [sim], [sweep], [output] and the scenarios are written here.
DEFAULT_TOML=$ROOT/configs/default.toml
[ -f "$DEFAULT_TOML" ] || die "no $DEFAULT_TOML"
awk '/^\[network\]/ { p = 1 } /^\[\[scenarios\]\]/ { exit } p' "$DEFAULT_TOML" >"$WORK/machine.toml"
awk '/^\[\[hosts\]\]/ { exit } 1' "$WORK/machine.toml" >"$WORK/machine-only.toml"
MACHINE=$(awk '/^\[\[hosts\]\]/ { h = 1 } h && /^machine *=/ { gsub(/[" ]/, "", $0); sub(/machine=/, ""); print; exit }' "$WORK/machine.toml")

sim_section() { # MESSAGES SIZE: the streaming run is the point's work
  cat <<EOF
[sim]
iterations = 1                 # one jittered one-at-a-time message: the streaming run dominates
min_iterations = 1
stream_window = $WINDOW
stream_messages = $1
stream_budget_bytes = $(($1 * $2))
[sweep]
sizes = ["$2"]
paths = ["gpudirect"]
ops = ["write_imm"]
[output]
charts = []
EOF
}

# gen_pair SIZE MESSAGES POINTS: POINTS copies of the default config's PIX scenario (GPUDirect,
# write_imm), each a point that streams MESSAGES messages of SIZE bytes.
gen_pair() {
  local i
  printf 'name = "simgrid-pair"\nseed = 20261129\n'
  sim_section "$2" "$1"
  cat "$WORK/machine.toml"
  for ((i = 0; i < $3; i++)); do
    printf '[[scenarios]]\nname = "PIX%d"\n' "$i"
    printf 'sender = { host = "node-a", nic = "nic0", gpu = "gpu0" }\n'
    printf 'receiver = { host = "node-b", nic = "nic0", gpu = "gpu0" }\n'
  done
}

# gen_incast FLOWS MESSAGES: FLOWS hosts, each GPU0 -> NIC0 (PIX), into node-b's NIC0 -> GPU0;
# every flow streams MESSAGES messages of 1 MiB.
gen_incast() {
  local i
  printf 'name = "simgrid-incast"\nseed = 20261129\n'
  sim_section "$2" 1048576
  cat "$WORK/machine-only.toml"
  for ((i = 0; i < $1; i++)); do printf '[[hosts]]\nname = "node-s%d"\nmachine = "%s"\n' "$i" "$MACHINE"; done
  printf '[[hosts]]\nname = "node-b"\nmachine = "%s"\n' "$MACHINE"
  printf '[[scenarios]]\nname = "incast%d"\nflows = [\n' "$1"
  for ((i = 0; i < $1; i++)); do
    printf '  { sender = { host = "node-s%d", nic = "nic0", gpu = "gpu0" }, receiver = { host = "node-b", nic = "nic0", gpu = "gpu0" } },\n' "$i"
  done
  printf ']\n'
}

gd_run() { # CONFIG -> CPU seconds (best of REPEATS)
  best_of "$WORK/gd.log" "$GD" run "$1" --out "$WORK/gd-out" --jobs 1 --quiet
}

# gd_cap SIZE [FLOWS]: the most messages per point gdrsim accepts for SIZE (its horizon check).
gd_cap() {
  local size=$1 flows=${2:-0} m=$GD_MAX_MSGS
  while ((m > N0)); do
    if ((flows > 0)); then gen_incast "$flows" "$m" >"$WORK/cap.toml"; else gen_pair "$size" "$m" 1 >"$WORK/cap.toml"; fi
    if "$GD" check "$WORK/cap.toml" >"$WORK/cap.log" 2>&1; then echo "$m"; return; fi
    grep -q horizon "$WORK/cap.log" || die "gdrsim check failed: $(cat "$WORK/cap.log")"
    m=$((m * 3 / 4))
  done
  echo "$N0"
}

# ---------------------------------------------------------------- the route
# One gdrsim run at 1 MiB; links.csv lists every channel direction its streaming run crossed.
# The route is the channels that carried the payload (bytes >= messages x size): the sender's GPU
# memory, its PCIe links GPU -> switch -> NIC, the wire through the switch, the receiver's PCIe
# links NIC -> switch -> GPU and its GPU memory. Capacities from links.csv; latencies from
# `gdrsim params`: PCIe link latency per link plus the switch's on the link into it, the GPU's
# memory latency on the sender's memory (the NIC reads it), cable propagation and the NIC's
# transmit pipeline on the way out, the network switch, cable and receive pipeline on the way in.
log "reading the route from gdrsim (default config, scenario PIX, gpudirect, write_imm)"
gen_pair 1048576 16 1 >"$WORK/route.toml"
"$GD" run "$WORK/route.toml" --out "$WORK/route-out" --jobs 1 --quiet
"$GD" params "$WORK/route.toml" >"$WORK/params.txt"
param() { awk -v k="$1" '$1 == k { print $2; exit }' "$WORK/params.txt"; }
PCIE_NS=$(param 'machines[0].pcie.link_latency_ns')
SW_NS=$(param 'machines[0].switches[0].latency_ns')
MEM_NS=$(param 'machines[0].gpus[0].memory_latency_ns')
TX_NS=$(param 'machines[0].nics[0].tx_pipeline_ns')
RX_NS=$(param 'machines[0].nics[0].rx_pipeline_ns')
NSW_NS=$(param 'network.switch_latency_ns')
CABLE_M=$(param 'network.cable_m')
PROP_NS=$(param 'network.propagation_ns_per_m')
HOPS=$(param 'network.switch_hops')
for v in PCIE_NS SW_NS MEM_NS TX_NS RX_NS NSW_NS CABLE_M PROP_NS HOPS; do
  [ -n "${!v}" ] || die "gdrsim params lacks the value for $v"
done
awk -F, -v payload=$((16 * 1048576)) -v pcie="$PCIE_NS" -v sw="$SW_NS" -v mem="$MEM_NS" \
  -v tx="$TX_NS" -v rx="$RX_NS" -v nsw="$NSW_NS" -v cable="$((CABLE_M * PROP_NS))" -v hops="$HOPS" '
  NR == 1 || $6 + 0 < payload { next }
  {
    ch = $5; lat = 0; rank = 99; shared = 0
    if (ch ~ /^node-a\/.*\.mem$/)                  { rank = 0; lat = mem }
    else if (ch ~ /^node-a\/pcie:gpu/)              { rank = 1; lat = pcie }
    else if (ch ~ /^node-a\/pcie:.*>nic/)           { rank = 2; lat = pcie }
    else if (ch ~ /^wire:node-a\//)                 { rank = 3; lat = cable + tx }
    else if (ch ~ />node-b\//)                      { rank = 4; lat = (hops - 1) * cable + hops * nsw + cable + rx; shared = 1 }
    else if (ch ~ /^node-b\/pcie:nic/)              { rank = 5; lat = pcie; shared = 1 }
    else if (ch ~ /^node-b\/pcie:.*>gpu/)           { rank = 6; lat = pcie; shared = 1 }
    else if (ch ~ /^node-b\/.*\.mem$/)              { rank = 7; lat = 0; shared = 1 }
    else if (ch ~ /^node-b\//)                      { shared = 1 }
    # the switch of a PCIe link that enters it: its cut-through latency once
    if (ch ~ /pcie:[^>]*>sw/) lat += sw
    name = ch; gsub(/[\/:>]/, "-", name)
    printf "%d %s %.6e %.3e %d\n", rank, name, $9 * 1e9, lat * 1e-9, shared
  }' "$WORK/route-out/links.csv" | sort -n -k1,1 -s | cut -d' ' -f2- >"$WORK/route.txt"
[ "$(wc -l <"$WORK/route.txt")" -ge 3 ] || die "no route read from links.csv"
log "route (name, bandwidth B/s, latency s, shared by the incast):"
sed 's/^/  /' "$WORK/route.txt" >&2

# ---------------------------------------------------------------- one size
# gd_measure SIZE N: gdrsim CPU seconds for N messages (as POINTS x MESSAGES) minus its setup run
# (POINTS x 3); prints "messages cpu_s GBps".
gd_measure() {
  local size=$1 n=$2 cap=$3 m p t1 t0
  m=$((n < cap ? n : cap)); p=$(((n + m - 1) / m)); ((p <= GD_MAX_POINTS)) || p=$GD_MAX_POINTS
  gen_pair "$size" "$m" "$p" >"$WORK/gd-n.toml"
  gen_pair "$size" "$N0" "$p" >"$WORK/gd-0.toml"
  t0=$(gd_run "$WORK/gd-0.toml") || die "gdrsim failed: $(tail -3 "$WORK/gd.log")"
  t1=$(gd_run "$WORK/gd-n.toml") || die "gdrsim failed: $(tail -3 "$WORK/gd.log")"
  local gbps
  gbps=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next } NR == 2 { print $c["bw_GBps"] }' "$WORK/gd-out/results.csv")
  awk -v msgs=$((p * (m - N0))) -v t1="$t1" -v t0="$t0" -v g="$gbps" 'BEGIN { printf "%d %.6f %s\n", msgs, t1 - t0, g }'
}
# sg_measure SIZE N FLOWS: SimGrid CPU seconds for N messages per flow minus its N0 run.
sg_measure() {
  local size=$1 n=$2 flows=$3 t1 t0 gbps
  t0=$(best_of "$WORK/sg.log" "$SG" "$WORK/route.txt" "$size" "$N0" "$WINDOW" "$flows" "${SG_CFG[@]}") \
    || die "route failed: $(tail -3 "$WORK/sg.log")"
  t1=$(best_of "$WORK/sg.log" "$SG" "$WORK/route.txt" "$size" "$n" "$WINDOW" "$flows" "${SG_CFG[@]}") \
    || die "route failed: $(tail -3 "$WORK/sg.log")"
  gbps=$(sed -n 's/.*GBps=\([^ ]*\).*/\1/p' "$WORK/sg.log" | tail -1)
  awk -v msgs=$(((n - N0) * flows)) -v t1="$t1" -v t0="$t0" -v g="$gbps" 'BEGIN { printf "%d %.6f %s\n", msgs, t1 - t0, g }'
}
# choose_n GD_MSGS GD_CPU SG_MSGS SG_CPU (a probe run of each): N so that the slower simulator
# spends about TARGET_S, between PROBE and N_MAX.
choose_n() {
  awk -v target="$TARGET_S" -v lo="$PROBE" -v hi="$N_MAX" -v a="$1" -v b="$2" -v c="$3" -v d="$4" 'BEGIN {
    ca = (b > 0 ? b : 1e-4) / (a > 0 ? a : 1); cc = (d > 0 ? d : 1e-4) / (c > 0 ? c : 1); worst = ca > cc ? ca : cc
    n = target / worst; if (n < lo) n = lo; if (n > hi) n = hi; printf "%d\n", n }'
}
human() {
  awk -v b="$1" 'BEGIN { split("B KiB MiB GiB", u, " "); i = 1; while (b >= 1024 && b % 1024 == 0 && i < 4) { b /= 1024; i++ } printf "%d %s\n", b, u[i] }'
}

echo "size,size_bytes,N,gdrsim_msgs_per_s,simgrid_msgs_per_s,ratio,gdrsim_cpu_s,simgrid_cpu_s,gdrsim_GBps,simgrid_GBps,gdrsim_points" >"$WORK/out.csv"
need_vals() { local v; for v in "$@"; do [ -n "$v" ] || die "a measurement failed (see above)"; done; }
row() { # SIZE_LABEL SIZE N GD(msgs cpu GBps) SG(msgs cpu GBps) POINTS
  awk -v label="$1" -v size="$2" -v n="$3" -v gm="$4" -v gc="$5" -v gg="$6" -v sm="$7" -v sc="$8" -v sgg="$9" -v p="${10}" 'BEGIN {
    gr = gc > 0 ? gm / gc : 0; sr = sc > 0 ? sm / sc : 0
    printf "%s,%s,%d,%.0f,%.0f,%.3f,%.4f,%.4f,%s,%s,%s\n", label, size, n, gr, sr, (sr > 0 ? gr / sr : 0), gc, sc, gg, sgg, p }' >>"$WORK/out.csv"
}

LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
log "timing on core $CORE with $CLOCK, best of $REPEATS, window $WINDOW (load average $LOAD0)"
for size in $SIZES; do
  label=$(human "$size")
  cap=$(gd_cap "$size")
  probe=$((PROBE < cap * GD_MAX_POINTS ? PROBE : cap * GD_MAX_POINTS))
  read -r gm gc _ <<<"$(REPEATS=1 gd_measure "$size" "$probe" "$cap")"
  read -r sm sc _ <<<"$(REPEATS=1 sg_measure "$size" "$probe" 1)"
  need_vals "$gm" "$gc" "$sm" "$sc"
  n=$(choose_n "$gm" "$gc" "$sm" "$sc")
  ((n <= cap * GD_MAX_POINTS)) || n=$((cap * GD_MAX_POINTS))
  m=$((n < cap ? n : cap)); p=$(((n + m - 1) / m)); n=$((m * p)) # gdrsim runs p points of m
  log "$label: N = $n (gdrsim: $p point(s) x $m messages)"
  read -r gm gc gg <<<"$(gd_measure "$size" "$n" "$cap")"
  # SimGrid sends the same N: its messages after subtracting the setup are N - 3, gdrsim's
  # p x (m - 3); each rate uses its own count.
  read -r sm sc sg <<<"$(sg_measure "$size" "$n" 1)"
  need_vals "$gm" "$gc" "$sm" "$sc"
  row "$label" "$size" "$n" "$gm" "$gc" "$gg" "$sm" "$sc" "$sg" "$p"
done

if ((INCAST_FLOWS > 0)); then
  size=1048576
  cap=$(gd_cap "$size" "$INCAST_FLOWS")
  pm=$((PROBE / INCAST_FLOWS > 20 ? PROBE / INCAST_FLOWS : 20)); ((pm <= cap)) || pm=$cap
  incast_gd() { # MESSAGES_PER_FLOW -> "msgs cpu GBps"
    local t0 t1 gbps
    gen_incast "$INCAST_FLOWS" "$N0" >"$WORK/inc-0.toml"
    gen_incast "$INCAST_FLOWS" "$1" >"$WORK/inc-n.toml"
    t0=$(gd_run "$WORK/inc-0.toml") || die "gdrsim failed: $(tail -3 "$WORK/gd.log")"
    t1=$(gd_run "$WORK/inc-n.toml") || die "gdrsim failed: $(tail -3 "$WORK/gd.log")"
    gbps=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next } NR == 2 { print $c["bw_GBps"] }' "$WORK/gd-out/results.csv")
    awk -v msgs=$((INCAST_FLOWS * ($1 - N0))) -v t1="$t1" -v t0="$t0" -v g="$gbps" 'BEGIN { printf "%d %.6f %s\n", msgs, t1 - t0, g }'
  }
  read -r gm gc _ <<<"$(REPEATS=1 incast_gd "$pm")"
  read -r sm sc _ <<<"$(REPEATS=1 sg_measure "$size" "$pm" "$INCAST_FLOWS")"
  need_vals "$gm" "$gc" "$sm" "$sc"
  n=$(PROBE=$((pm * INCAST_FLOWS)) N_MAX=$((GD_MAX_MSGS * INCAST_FLOWS)) choose_n "$gm" "$gc" "$sm" "$sc")
  n=$((n / INCAST_FLOWS)) # messages per flow
  ((n <= cap)) || n=$cap
  log "incast: $INCAST_FLOWS flows x N = $n messages of 1 MiB"
  read -r gm gc gg <<<"$(incast_gd "$n")"
  read -r sm sc sg <<<"$(sg_measure "$size" "$n" "$INCAST_FLOWS")"
  need_vals "$gm" "$gc" "$sm" "$sc"
  row "incast ${INCAST_FLOWS}x1 MiB" "$size" "$((n * INCAST_FLOWS))" "$gm" "$gc" "$gg" "$sm" "$sc" "$sg" 1
fi

cp "$WORK/out.csv" "$CSV"
echo
echo "gdrsim $("$GD" --version | awk '{ print $2 }') vs SimGrid $SG_VERSION (CM02), GPUDirect PIX route of the default config, window $WINDOW, core $CORE, $CLOCK"
echo "messages/s = messages / CPU seconds, after subtracting a run of 3 messages per point (flow); best of $REPEATS"
echo "load average: $LOAD0 at the start, $(cut -d' ' -f1-3 /proc/loadavg) at the end ($(nproc) cores)"
awk -F, '
  NR == 1 { printf "%-18s %9s %14s %14s %8s %10s %10s %9s %9s\n", "size", "N", "gdrsim msg/s", "SimGrid msg/s", "ratio", "gdrsim s", "SimGrid s", "gd GB/s", "sg GB/s"; next }
  { printf "%-18s %9d %14.0f %14.0f %7.3fx %10.3f %10.3f %9.2f %9.2f\n", $1, $3, $4, $5, $6, $7, $8, $9, $10 }' "$CSV"
echo "(CSV: $CSV)"
