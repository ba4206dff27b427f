#!/usr/bin/env bash
# Checks, with Clang's thread-safety analysis, every source file whose
# mutexes are annotated (messages/annotated_mutex.hpp): a guarded field
# touched without its mutex, a function that needs a mutex called without
# it, a lock taken twice, is an error. Only parses (-fsyntax-only), so it
# needs a configured build directory for the generated headers, not a
# built one.
# Usage: tools/check-thread-safety.sh [BUILD_DIR]   (default: build)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$top/build}" && pwd)
clang=${CLANGXX:-$(command -v clang++ || true)}
if [ -z "$clang" ]; then
  echo "check-thread-safety: clang++ is missing (tools/install-deps.sh installs it)" >&2
  exit 1
fi
cd "$top"
# A source file is checked when it, or the header of its name, mentions the
# annotated mutex.
files=()
while IFS= read -r f; do
  header=${f%.cpp}.hpp
  if grep -q annotated_mutex "$f" || { [ -f "$header" ] && grep -q annotated_mutex "$header"; }; then
    files+=("$f")
  fi
done < <(find messages faults runtime persistence actors tools python -name '*.cpp' | sort)
if [ ${#files[@]} -eq 0 ]; then
  echo "check-thread-safety: no annotated source file" >&2
  exit 1
fi
flags=(-std=c++17 -fsyntax-only -Wthread-safety -Werror=thread-safety
       -Wno-unknown-warning-option -I"$top" -I"$build/include"
       -I"$build/public" -I"$build/messages")
if python_inc=$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["include"])' 2>/dev/null); then
  flags+=(-I"$python_inc")
fi
failed=0
printf '%s\n' "${files[@]}" |
  xargs -P "$(nproc)" -I{} sh -c '"$0" "$@" {} || exit 255' "$clang" "${flags[@]}" ||
  failed=1
if [ "$failed" -ne 0 ]; then
  echo "check-thread-safety: failed" >&2
  exit 1
fi
echo "thread safety: ok (${#files[@]} files)"
