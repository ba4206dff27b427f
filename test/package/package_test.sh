#!/usr/bin/env bash
# Installs epochrt from a build tree into a fresh prefix, builds a separate
# project against it with find_package(epochrt), and runs the result.
#   package_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1
source=$2
work=$(mktemp -d /tmp/epochrt-package.XXXXXX)
trap 'rm -rf "$work"' EXIT

cmake --install "$build" --prefix "$work/prefix" > "$work/install.log"
cmake -S "$source/test/package/consumer" -B "$work/consumer" \
  -DCMAKE_PREFIX_PATH="$work/prefix" \
  -DEPOCHRT_HOST_PROGRAM_SOURCE="$source/examples/host_program/main.cpp" \
  > "$work/configure.log"
cmake --build "$work/consumer" -j2 > "$work/build.log"
out=$("$work/consumer/consumer" "$work/ckpt" 2>/dev/null)
echo "$out"
grep -qx "weights after epoch 5: 48,48,48" <<< "$out"
