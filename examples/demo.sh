#!/usr/bin/env bash
# The demo behind `make demo`: trains a linear regression model whose data is
# split across two nodes, with checkpoints after every epoch; shows the loss
# falling epoch by epoch; lists the checkpoints; then resumes the job from a
# middle epoch, as after a crash, and checks that it ends with exactly the
# weights of the uninterrupted run.
#
#   examples/demo.sh PATH/TO/epochrt [WORK_DIR]
set -euo pipefail

epochrt=${1:?usage: demo.sh PATH/TO/epochrt [WORK_DIR]}
here=$(cd "$(dirname "$0")" && pwd)
job="$here/jobs/linear_regression.json"
work=${2:-$(mktemp -d /tmp/epochrt-demo.XXXXXX)}
ckpt="$work/checkpoints"
rm -rf "$ckpt"
mkdir -p "$work"

fetch=(--fetch trainer_0:w --fetch trainer_0:b --fetch trainer_1:w --fetch trainer_1:b)

say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

say "training on two nodes, checkpoints in $ckpt"
# On a terminal a live progress line replaces the log lines; the costs of
# every epoch go to stats.jsonl, its timeline to trace.json.
"$epochrt" run "$job" --checkpoint-dir "$ckpt" "${fetch[@]}" \
  --stats-json "$work/stats.jsonl" --trace "$work/trace.json" > "$work/full.out"
cat "$work/full.out"

say "what the last epoch and its checkpoint cost (--stats-json)"
tail -n 1 "$work/stats.jsonl"

say "the checkpoints on disk"
"$epochrt" ckpt ls "$ckpt"
"$epochrt" ckpt verify "$ckpt"

say "the model of trainer_0 as checkpointed after epoch 3"
"$epochrt" ckpt show "$ckpt" trainer_0 3 w b

say "resuming from epoch 6, as if the job had been killed during epoch 7"
"$epochrt" run "$job" --checkpoint-dir "$ckpt" --resume-from 6 "${fetch[@]}" > "$work/resumed.out"
cat "$work/resumed.out"

say "the same job without checkpoints, straight through"
"$epochrt" run "$job" "${fetch[@]}" 2>/dev/null > "$work/straight.out"

if cmp -s "$work/full.out" "$work/resumed.out" && cmp -s "$work/full.out" "$work/straight.out"; then
  say "resumed and uninterrupted runs end with identical weights"
  echo "timeline: open $work/trace.json at https://ui.perfetto.dev"
  echo "plot:     python3 examples/plot_stats.py $work/stats.jsonl $work/stats.png"
else
  say "MISMATCH between runs"
  diff "$work/full.out" "$work/resumed.out" || true
  diff "$work/full.out" "$work/straight.out" || true
  exit 1
fi
