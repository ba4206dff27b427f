#!/usr/bin/env bash
# Installs epochrt from a build tree into a fresh prefix, builds a separate
# project against it with find_package(epochrt) — the host-program example
# and the README's embedding snippet, exactly as written there — and runs
# both.
#   package_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1
source=$2
work=$(mktemp -d /tmp/epochrt-package.XXXXXX)
trap 'rm -rf "$work"' EXIT

cmake --install "$build" --prefix "$work/prefix" > "$work/install.log"
# The first ```cpp block of the README's "Embedding in a host program".
awk '/^## Embedding in a host program/ { section = 1; next }
     /^## / { section = 0 }
     section && !done && /^```cpp$/ { inside = 1; next }
     inside && /^```$/ { inside = 0; done = 1; next }
     inside { print }' "$source/README.md" > "$work/readme_snippet.cpp"
if [ ! -s "$work/readme_snippet.cpp" ]; then
  echo "no embedding snippet found in README.md" >&2
  exit 1
fi
# Only the prefix's include/ may serve epochrt's headers: a host header
# named like one of them, on the consumer's own include path, must not
# replace it.
test -d "$work/prefix/include/epochrt/actors/api"
test ! -e "$work/prefix/include/epochrt/actors/core"
test ! -e "$work/prefix/include/epochrt/actors/remote"
# Only the API is installed: every installed header is reachable from the
# umbrella through #include <epochrt/...> lines, and each one reached is
# installed (the compile below checks that too).
include=$work/prefix/include
declare -A reached=()
todo=(epochrt/epochrt.hpp)
while [ ${#todo[@]} -gt 0 ]; do
  header=${todo[0]}
  todo=("${todo[@]:1}")
  [ -n "${reached[$header]:-}" ] && continue
  reached[$header]=1
  if [ ! -f "$include/$header" ]; then
    echo "not installed but included: $header" >&2
    exit 1
  fi
  while IFS= read -r next; do
    todo+=("$next")
  done < <(sed -nE 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*<(epochrt\/[^>]+)>.*/\1/p' \
             "$include/$header")
done
unreachable=0
while IFS= read -r installed; do
  if [ -z "${reached[$installed]:-}" ]; then
    echo "installed but not reachable from <epochrt/epochrt.hpp>: $installed" >&2
    unreachable=1
  fi
done < <(cd "$include" && find epochrt -type f | sort)
[ "$unreachable" = 0 ]
# No wire protocol, codec or actor is part of the API: none is installed.
private=$(cd "$include" && find epochrt -type f \
  \( -name '*protocol*' -o -name 'codec*' -o -name '*_actor.hpp' \
     -o -name 'message_types.hpp' -o -name 'node_handle.hpp' \))
if [ -n "$private" ]; then
  echo "private headers installed:" $private >&2
  exit 1
fi
echo "installed headers: ${#reached[@]}, all reachable from <epochrt/epochrt.hpp>, no protocol among them"
cmake -S "$source/test/package/consumer" -B "$work/consumer" \
  -DCMAKE_PREFIX_PATH="$work/prefix" \
  -DEPOCHRT_HOST_PROGRAM_SOURCE="$source/examples/host_program/main.cpp" \
  -DEPOCHRT_README_SNIPPET="$work/readme_snippet.cpp" \
  > "$work/configure.log"
cmake --build "$work/consumer" -j2 > "$work/build.log"
out=$("$work/consumer/consumer" "$work/ckpt" 2>/dev/null)
echo "$out"
grep -qx "weights after epoch 5: 48,48,48" <<< "$out"
snippet=$("$work/consumer/readme_snippet" "$source/examples/jobs/pipeline.json" \
  "$work/snippet-ckpt" 2>/dev/null)
echo "$snippet"
grep -q "^finished after epoch [0-9]" <<< "$snippet"
