#!/usr/bin/env bash
# The demo behind `make demo`: trains one linear regression model on three
# nodes, each with its own shard of the data, that average their gradients
# with an all-reduce every step (examples/jobs/data_parallel.json), with
# checkpoints after every epoch. It shows the loss falling epoch by epoch
# and lists the checkpoints; then it kills a second run mid-job (a crash of
# the whole process, as by SIGKILL), runs the same command again, which
# resumes from the last committed epoch, and checks that every node ends
# with the same weights, bit for bit, and that they are exactly those of an
# uninterrupted run.
#
#   examples/demo.sh PATH/TO/epochrt [WORK_DIR]
set -euo pipefail

epochrt=${1:?usage: demo.sh PATH/TO/epochrt [WORK_DIR]}
here=$(cd "$(dirname "$0")" && pwd)
job="$here/jobs/data_parallel.json"
nodes=(trainer_0 trainer_1 trainer_2)
work=${2:-$(mktemp -d /tmp/epochrt-demo.XXXXXX)}
ckpt="$work/checkpoints"
killed_ckpt="$work/killed-checkpoints"
rm -rf "$ckpt" "$killed_ckpt"
mkdir -p "$work"

fetch=()
for n in "${nodes[@]}"; do fetch+=(--fetch "$n:w" --fetch "$n:b"); done

say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
fail() {
  say "FAILED: $*"
  exit 1
}

say "training one model on three nodes (gradients averaged by all-reduce), checkpoints in $ckpt"
# On a terminal a live progress line replaces the log lines; the costs of
# every epoch go to stats.jsonl, its timeline to trace.json.
"$epochrt" run "$job" --checkpoint-dir "$ckpt" "${fetch[@]}" \
  --stats-json "$work/stats.jsonl" --trace "$work/trace.json" > "$work/full.out"
cat "$work/full.out"

say "every node ends with the same weights"
for blob in w b; do
  values=$(grep -E "^trainer_[0-9]+:$blob=" "$work/full.out" | cut -d= -f2 | sort -u)
  [[ $(wc -l <<< "$values") == 1 ]] || fail "the nodes' $blob differ: $values"
  echo "$blob=$values on ${nodes[*]}"
done

say "what the last epoch and its checkpoint cost (--stats-json)"
tail -n 1 "$work/stats.jsonl"

say "the checkpoints on disk"
"$epochrt" ckpt ls "$ckpt"
"$epochrt" ckpt verify "$ckpt"

say "the model of trainer_1 as checkpointed after epoch 3"
"$epochrt" ckpt show "$ckpt" trainer_1 3 w b

say "a second run, killed as it starts epoch 7 (a fault plan crashes the process)"
plan="$work/crash.json"
echo '{"faults": [{"point": "job.epoch.start", "fault": "crash", "epoch": 7}]}' > "$plan"
status=0
"$epochrt" run "$job" --checkpoint-dir "$killed_ckpt" --fault-plan "$plan" \
  "${fetch[@]}" > "$work/killed.out" 2> "$work/killed.err" || status=$?
[[ $status != 0 ]] || fail "the run should have been killed"
grep -F "fault plan: crash" "$work/killed.err" || true
echo "the run died with status $status; committed so far:"
"$epochrt" ckpt ls "$killed_ckpt" | tail -n 1

say "the same command again, without the fault plan: it resumes"
"$epochrt" run "$job" --checkpoint-dir "$killed_ckpt" "${fetch[@]}" \
  > "$work/resumed.out" 2> "$work/resumed.err"
grep -o "resuming from epoch [0-9]*" "$work/resumed.err" || fail "the rerun did not resume"
cat "$work/resumed.out"

say "the same job without checkpoints, straight through"
"$epochrt" run "$job" "${fetch[@]}" 2>/dev/null > "$work/straight.out"

if cmp -s "$work/full.out" "$work/resumed.out" && cmp -s "$work/full.out" "$work/straight.out"; then
  say "the killed and resumed run and the uninterrupted runs end with identical weights on every node"
  echo "timeline: open $work/trace.json at https://ui.perfetto.dev"
  echo "plot:     python3 examples/plot_stats.py $work/stats.jsonl $work/stats.png"
else
  say "MISMATCH between runs"
  diff "$work/full.out" "$work/resumed.out" || true
  diff "$work/full.out" "$work/straight.out" || true
  exit 1
fi
