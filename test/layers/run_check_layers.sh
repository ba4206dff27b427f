#!/usr/bin/env bash
# Runs check-layers ($1) over the source tree ($2); exit 77 (CTest: skipped)
# when the tool is not there.
set -u
tool=$1
source_dir=$2
# check-layers ranks no faults/ folder (unknown folders pass unchecked), so
# faults/'s place in the layers, messages < faults < {runtime, persistence}
# < actors, is checked here: faults/ includes none of the layers above it,
# and messages/ does not include faults/.
cd "$source_dir" || exit 2
include='#[[:space:]]*include[[:space:]]*[<"](epochrt/)?'
if grep -rnE "$include(runtime|persistence|actors|tools|bench|examples)/" faults \
   || grep -rnE "${include}faults/" messages; then
  echo "upward includes around faults/ (messages < faults < runtime, persistence)"
  exit 1
fi
# check-layers does not know python/ either. The module is a host program:
# it includes epochrt by the public short names alone (<epochrt/NAME.hpp>,
# cmake/epochrt_public_api.cmake), never a header of a folder, public or
# private (actors/core, a detail/).
if [ -d python ] && grep -rnE \
     "#[[:space:]]*include[[:space:]]*[<\"](epochrt/[a-z_]+/|(messages|faults|runtime|persistence|actors|tools|bench|examples|test)/)" \
     python --include='*.hpp' --include='*.cpp'; then
  echo "python/ includes a header of a folder: only <epochrt/NAME.hpp> short names"
  exit 1
fi
if [ ! -f "$tool" ]; then
  echo "check-layers not found at $tool: skipped (set EPOCHRT_CHECK_LAYERS)"
  exit 77
fi
exec bash "$tool" .
