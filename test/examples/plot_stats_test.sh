#!/usr/bin/env bash
# The README's plotting steps: a job's --stats-json file becomes a PNG of
# its epoch and checkpoint times (examples/plot_stats.py).
set -euo pipefail
epochrt=$1
source_dir=$2
# As the README runs it: whatever python3 comes first on PATH (the script
# falls back to Debian's, which has python3-matplotlib).
py=python3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$epochrt" -q run "$source_dir/examples/jobs/pipeline3.json" \
  --checkpoint-dir "$work/ckpt" --stats-json "$work/stats.jsonl" \
  --metric total >/dev/null
out=$("$py" "$source_dir/examples/plot_stats.py" "$work/stats.jsonl" "$work/stats.png")
echo "$out"
[[ $out == "wrote $work/stats.png: 5 epochs, total" ]] || { echo "unexpected: $out"; exit 1; }
# A PNG: its 8-byte signature, and more than a blank image's few hundred bytes.
signature=$(head -c 8 "$work/stats.png" | od -An -tx1 | tr -d ' \n')
[[ $signature == 89504e470d0a1a0a ]] || { echo "not a PNG: $signature"; exit 1; }
size=$(stat -c %s "$work/stats.png")
(( size > 10000 )) || { echo "PNG too small: $size bytes"; exit 1; }

# A file that is not JSON lines is refused with the line that is wrong.
printf '{"type": "epoch", "epoch": 0}\nnot json\n' > "$work/bad.jsonl"
if err=$("$py" "$source_dir/examples/plot_stats.py" "$work/bad.jsonl" "$work/bad.png" 2>&1); then
  echo "a bad file was plotted"; exit 1
fi
[[ $err == *"bad.jsonl:2: not JSON"* ]] || { echo "unexpected: $err"; exit 1; }
echo "plot_stats ok"
