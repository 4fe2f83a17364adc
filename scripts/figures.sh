#!/usr/bin/env bash
# The default study's headline figures: per scenario and path, the model latency at 8 B and at
# 1 GiB and the streaming bandwidth at 1 GiB, from a results.csv (default: a fresh run).
#   scripts/figures.sh [results.csv]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
csv=${1:-}
if [ -z "$csv" ]; then
  out=$(mktemp -d); trap 'rm -rf "$out"' EXIT
  ./target/release/gdrsim run --quiet --out "$out"
  csv=$out/results.csv
fi
python3 - "$csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
print(f"{'scenario':<8} {'path':<10} {'effective':<28} {'lat 8B us':>10} {'lat 1GiB us':>12} {'bw 1GiB GB/s':>13}")
for r in rows:
    if r['size_bytes'] != '8':
        continue
    big = next(x for x in rows if x['scenario'] == r['scenario'] and x['path'] == r['path'] and x['size_bytes'] == str(1 << 30))
    print(f"{r['scenario']:<8} {r['path']:<10} {big['effective_path']:<28} {float(r['lat_model_us']):>10.3f} {float(big['lat_model_us']):>12.1f} {float(big['bw_GBps']):>13.2f}")
PY
