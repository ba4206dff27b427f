#!/usr/bin/env bash
# A job on three node daemons that loses one of them mid-run, on one machine:
#
#   act 1: kill -9 a daemon during the job; the run stops with exit 1 and
#          says which node was lost in which epoch; restart the daemon on the
#          same port; the same command resumes from the last committed epoch
#          and finishes.
#   act 2: the same loss with --max-failures 2, while this script restarts
#          the daemon as a supervisor would: the job finishes in one command.
#   act 3: examples/jobs/data_parallel.json (an all-reduce across the
#          daemons every step) and reader_pipeline.json (channels between
#          them) end exactly as they do in one process.
#   act 4: a host lost with its disk: with one copy of every checkpoint on
#          another daemon (--replicas 1) and a spare daemon (--spare), a
#          daemon killed and its checkpoint root deleted mid-run; the node
#          moves to the spare, restores from the copy, and the job finishes
#          in one command.
#
# Every result is checked against an in-process run of
# examples/jobs/pipeline3.json; any difference, or any step that does not
# behave as described, ends the script with a non-zero status.
#
#   bash examples/distributed/run.sh PATH/TO/epochrt
#
# KEEP=1 leaves the work directory (checkpoints, logs) in place.
set -euo pipefail

usage="usage: run.sh PATH/TO/epochrt"
epochrt=${1:?$usage}
[[ -x $epochrt ]] || { echo "run.sh: $epochrt is not an executable" >&2; exit 2; }
epochrt=$(cd "$(dirname "$epochrt")" && pwd)/$(basename "$epochrt")
here=$(cd "$(dirname "$0")" && pwd)
job="$here/pipeline3_paced.json"
reference_job="$here/../jobs/pipeline3.json"
work=$(mktemp -d "${TMPDIR:-/tmp}/epochrt-distributed.XXXXXX")
nodes=(trainer_0 trainer_1 trainer_2)
victim=trainer_1 # the node whose daemon is killed in act 1; trainer_2 in act 2

declare -A pid port
runner= # the job running in the background, if any

# Bold headings on a terminal only: CTest keeps this output in its log.
if [[ -t 1 ]]; then bold=$'\033[1m' red=$'\033[1;31m' plain=$'\033[0m'; else bold='' red='' plain=''; fi
say() { printf '\n%s== %s%s\n' "$bold" "$*" "$plain"; }
note() { printf '   %s\n' "$*"; }
indent() { sed 's/^/   | /'; }
fail() {
  printf '\n%sFAILED: %s%s\n' "$red" "$*" "$plain" >&2
  for n in "${nodes[@]}"; do
    if [[ -s $work/$n.log ]]; then
      echo "--- last lines of daemon $n's log:" >&2
      tail -n 5 "$work/$n.log" >&2
    fi
  done
  exit 1
}

cleanup() {
  local status=$?
  if [[ -n $runner ]]; then
    kill -TERM "$runner" 2>/dev/null || true
    wait "$runner" 2>/dev/null || true
  fi
  for n in "${!pid[@]}"; do
    kill -TERM "${pid[$n]}" 2>/dev/null || true
  done
  for n in "${!pid[@]}"; do
    wait "${pid[$n]}" 2>/dev/null || true
  done
  if [[ ${KEEP:-0} == 1 ]]; then
    echo "work directory kept: $work"
  else
    rm -rf "$work"
  fi
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# start_daemon NODE PORT: starts the daemon for NODE on 127.0.0.1:PORT (0: any
# free port) and waits for its "listening on 127.0.0.1:PORT" line. Its
# checkpoint root is the same across restarts: that is where the node's
# checkpoints are, and a resumed job loads them from there.
start_daemon() {
  local n=$1 p=$2 line=
  : > "$work/$n.out"
  "$epochrt" node --listen "127.0.0.1:$p" --checkpoint-root "$work/$n" \
    > "$work/$n.out" 2>> "$work/$n.log" &
  pid[$n]=$!
  for _ in $(seq 100); do
    line=$(head -n 1 "$work/$n.out")
    [[ $line == "listening on "* ]] && break
    kill -0 "${pid[$n]}" 2>/dev/null || break
    sleep 0.1
  done
  [[ $line == "listening on 127.0.0.1:"* ]] \
    || fail "the daemon of $n did not start (stdout: '$line')"
  port[$n]=${line##*:}
  note "daemon of $n: pid ${pid[$n]}, listening on 127.0.0.1:${port[$n]}"
}

# kill_daemon NODE: kill -9, as a crash or the OOM killer would.
kill_daemon() {
  local n=$1
  kill -KILL "${pid[$n]}"
  wait "${pid[$n]}" 2>/dev/null || true
  unset "pid[$n]"
  note "killed the daemon of $n (kill -9)"
}

# wait_for_line FILE TEXT SECONDS: waits until FILE has a line containing TEXT.
wait_for_line() {
  local file=$1 text=$2
  for _ in $(seq $(($3 * 50))); do
    grep -qF -- "$text" "$file" 2>/dev/null && return 0
    sleep 0.02
  done
  return 1
}

fetch=()
for n in "${nodes[@]}"; do fetch+=(--fetch "$n:total"); done

# The job's command line in act N: every node on its daemon.
run_args() {
  local act=$1 args=()
  for n in "${nodes[@]}"; do args+=(--node "$n=127.0.0.1:${port[$n]}"); done
  args+=(--checkpoint-dir "$work/act$act-checkpoints" "${fetch[@]}")
  printf '%s\n' "${args[@]}"
}

# same_result NAME FILE: the run's stdout must be the reference's.
same_result() {
  if cmp -s "$work/reference.out" "$2"; then
    note "$1: the same totals as the in-process run"
  else
    diff "$work/reference.out" "$2" | indent
    fail "$1 differs from the in-process run"
  fi
}

say "the reference: pipeline3.json, every node in this process, no checkpoints"
"$epochrt" run "$reference_job" "${fetch[@]}" > "$work/reference.out" \
  2> "$work/reference.err" || fail "the in-process run failed"
indent < "$work/reference.out"

say "three node daemons on 127.0.0.1 (port 0: each picks a free port)"
for n in "${nodes[@]}"; do start_daemon "$n" 0; done

# ---------------------------------------------------------------------------
say "act 1: the job on the daemons, each epoch paced to 300 ms; the daemon of $victim gets kill -9 in epoch 2"
mapfile -t args < <(run_args 1)
note "epochrt run $(basename "$job") ${args[*]}"
"$epochrt" run "$job" "${args[@]}" > "$work/act1-first.out" \
  2> "$work/act1-first.err" &
runner=$!
wait_for_line "$work/act1-first.err" "checkpoint of epoch 1 committed" 20 \
  || { kill "$runner" 2>/dev/null; fail "the job never reached epoch 2"; }
kill_daemon "$victim"
status=0
wait "$runner" || status=$?
runner=
indent < "$work/act1-first.err"
[[ $status == 1 ]] || fail "the run should have ended with exit 1, not $status"
error=$(grep -F "epochrt: error:" "$work/act1-first.err" | tail -n 1)
[[ $error == *"node $victim"*"epoch "[23]* ]] \
  || fail "the error should name node $victim and epoch 2 or 3: $error"
[[ $error == *"resumes from it"* ]] \
  || fail "the error should say that a rerun resumes: $error"
note "the run stopped with exit 1 and said why:"
note "${error#epochrt: error: }"

say "act 1: the daemon of $victim restarts on the same port, 127.0.0.1:${port[$victim]}"
start_daemon "$victim" "${port[$victim]}"

say "act 1: the same command again"
status=0
"$epochrt" run "$job" "${args[@]}" > "$work/act1-rerun.out" \
  2> "$work/act1-rerun.err" || status=$?
indent < "$work/act1-rerun.err"
indent < "$work/act1-rerun.out"
[[ $status == 0 ]] || fail "the rerun ended with exit $status"
resumed=$(grep -o "resuming from epoch [0-9]*" "$work/act1-rerun.err" || true)
[[ $resumed == "resuming from epoch "[12] ]] \
  || fail "the rerun should have resumed from epoch 1 or 2 (${resumed:-it did not resume})"
note "the rerun went on from the last committed epoch (${resumed})"
same_result "the resumed run" "$work/act1-rerun.out"

# ---------------------------------------------------------------------------
victim=trainer_2
say "act 2: a fresh job with --max-failures 2; the daemon of $victim gets kill -9 in epoch 2 and this script restarts it"
mapfile -t args < <(run_args 2)
note "epochrt run $(basename "$job") ${args[*]} --max-failures 2"
"$epochrt" run "$job" "${args[@]}" --max-failures 2 \
  > "$work/act2.out" 2> "$work/act2.err" &
runner=$!
wait_for_line "$work/act2.err" "checkpoint of epoch 1 committed" 20 \
  || { kill "$runner" 2>/dev/null; fail "the job never reached epoch 2"; }
kill_daemon "$victim"
# A supervisor notices the crash and restarts the daemon; the job retries
# the address with backoff in the meantime.
sleep 0.5
start_daemon "$victim" "${port[$victim]}"
status=0
wait "$runner" || status=$?
runner=
indent < "$work/act2.err"
indent < "$work/act2.out"
[[ $status == 0 ]] || fail "the run with --max-failures 2 ended with exit $status"
grep -qF "node $victim is back" "$work/act2.err" \
  || fail "the run should have reconnected to $victim"
note "the run lost $victim, reconnected when it was back, and went on from the last committed epoch"
same_result "the run that survived the loss" "$work/act2.out"

# ---------------------------------------------------------------------------
say "act 3: nodes that compute together: data_parallel.json and reader_pipeline.json on the same daemons"
# An all-reduce every step across the three daemons, and channels between
# them (the reader node shares trainer_0's daemon); each must end exactly
# as the same job in one process.
jobs_dir="$here/../jobs"
compare_with_in_process() {
  local name=$1
  shift
  local placement=("$@")
  "$epochrt" run "$jobs_dir/$name.json" "${act3_fetch[@]}" \
    > "$work/$name-local.out" 2> "$work/$name-local.err" \
    || fail "$name in one process failed"
  "$epochrt" run "$jobs_dir/$name.json" "${placement[@]}" "${act3_fetch[@]}" \
    > "$work/$name-daemons.out" 2> "$work/$name-daemons.err" \
    || { indent < "$work/$name-daemons.err"; fail "$name on the daemons failed"; }
  indent < "$work/$name-daemons.out"
  if cmp -s "$work/$name-local.out" "$work/$name-daemons.out"; then
    note "$name: the same weights, bit for bit, as in one process"
  else
    diff "$work/$name-local.out" "$work/$name-daemons.out" | indent
    fail "$name differs between the daemons and one process"
  fi
}
placement=()
for n in "${nodes[@]}"; do placement+=(--node "$n=127.0.0.1:${port[$n]}"); done
act3_fetch=()
for n in "${nodes[@]}"; do act3_fetch+=(--fetch "$n:w" --fetch "$n:b"); done
note "data_parallel.json: the three trainers' gradients averaged by all-reduce"
compare_with_in_process data_parallel "${placement[@]}"
act3_fetch=()
for n in "${nodes[@]}"; do act3_fetch+=(--fetch "reader:w_$n"); done
note "reader_pipeline.json: a reader deals batches through channels; the download group collects the parameters"
compare_with_in_process reader_pipeline "${placement[@]}" \
  --node "reader=127.0.0.1:${port[trainer_0]}"

# ---------------------------------------------------------------------------
victim=trainer_1
say "act 4: a host lost with its disk; --replicas 1 keeps a copy of every checkpoint on another daemon, --spare stands by"
start_daemon spare 0
mapfile -t args < <(run_args 4)
extra=(--replicas 1 --max-failures 1 --reconnect-timeout-ms 2000
       --spare "127.0.0.1:${port[spare]}")
note "epochrt run $(basename "$job") ${args[*]} ${extra[*]}"
"$epochrt" run "$job" "${args[@]}" "${extra[@]}" \
  > "$work/act4.out" 2> "$work/act4.err" &
runner=$!
wait_for_line "$work/act4.err" "checkpoint of epoch 1 committed" 20 \
  || { kill "$runner" 2>/dev/null; fail "the job never reached epoch 2"; }
kill_daemon "$victim"
rm -rf "${work:?}/$victim"
note "deleted the checkpoint root of $victim's daemon: its host is gone"
status=0
wait "$runner" || status=$?
runner=
indent < "$work/act4.err"
indent < "$work/act4.out"
[[ $status == 0 ]] || fail "the run with a spare ended with exit $status"
grep -qF "node $victim moved from" "$work/act4.err" \
  || fail "the run should have moved $victim to the spare"
grep -qF "restored from the copy" "$work/spare.log" \
  || fail "the spare should have restored $victim's checkpoint from a copy"
if grep -qF "trying an earlier one" "$work/act4.err"; then
  fail "the run lost more than the epoch the host was lost in"
fi
note "the spare restored $victim's last committed checkpoint from its copy; the job went on from there"
same_result "the run that lost a host" "$work/act4.out"

say "all results match the in-process run"
