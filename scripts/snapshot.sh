#!/usr/bin/env bash
# Keeps what a refactor must not change: results.csv, stages.csv and the resolved config.toml of
# every config in configs/ with its SVG charts, the walk of three configs and four traces, written
# into DIR. Two snapshots taken before and after a change compare with `diff -rq BEFORE AFTER`
# (empty: byte-identical).
#
#   cargo build --release && scripts/snapshot.sh /tmp/before
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out=${1:?usage: scripts/snapshot.sh DIR}
rm -rf "$out"; mkdir -p "$out"
bin=${GDRSIM:-./target/release/gdrsim}   # GDRSIM=path snapshots another build
runs=$(mktemp -d); trap 'rm -rf "$runs"' EXIT
for c in configs/*.toml; do
  n=$(basename "$c" .toml)
  $bin run "$c" --quiet --out "$runs/$n"
  cp "$runs/$n/results.csv" "$out/$n.results.csv"
    cp "$runs/$n/stages.csv" "$out/$n.stages.csv"
    cp "$runs/$n/config.toml" "$out/$n.config.toml"
  for c in "$runs/$n"/*.svg; do cp "$c" "$out/$n.$(basename "$c")"; done
  $bin topo "configs/$n.toml" > "$out/$n.topo.txt" 2>&1
  $bin params "configs/$n.toml" > "$out/$n.params.txt" 2>&1


done
# Every walk text: configs x ops x staging paths x sizes x languages (errors included).
mkdir -p "$out/walks"
for c in configs/*.toml; do n=$(basename "$c" .toml)
  for op in write_imm write read send; do for p in staged gdrcopy staged_pipelined auto; do
    for s in 64 4096 1MiB; do for l in en zh; do
      f="$out/walks/$n.$op.$p.$s.$l.txt"
      rc=0; $bin walk "$c" --op $op --path $p --size $s --lang $l > "$f" 2>&1 || rc=$?
      echo "rc=$rc" >> "$f"
    done; done
  done; done
done
$bin walk --size 4096 > "$out/walk.en.txt"
$bin walk --size 4096 --lang zh > "$out/walk.zh.txt"
$bin walk configs/dgx-a100.toml --scenario SYS --size 1MiB > "$out/walk.a100.txt"
$bin walk configs/client-cpu.toml --size 64 > "$out/walk.client.txt"
for p in host staged gpudirect; do
  $bin trace --path $p --size 1MiB --messages 3 --out "$out/trace.$p.json" > /dev/null
done
$bin trace configs/dgx-a100.toml --scenario SYS --path gpudirect --size 64KiB --out "$out/trace.a100.json" > /dev/null
echo "snapshot: $out"
