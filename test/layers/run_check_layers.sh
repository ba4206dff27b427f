#!/usr/bin/env bash
# Runs check-layers ($1) over the source tree ($2); exit 77 (CTest: skipped)
# when the tool is not there.
set -u
tool=$1
source_dir=$2
if [ ! -f "$tool" ]; then
  echo "check-layers not found at $tool: skipped (set EPOCHRT_CHECK_LAYERS)"
  exit 77
fi
exec bash "$tool" "$source_dir"
