#!/usr/bin/env bash
# The suite's C++/CUDA format is .clang-format at the root (clang-format 14 or later).
#   scripts/format.sh           reformats every tracked .cu, .h and .cpp file in place
#   scripts/format.sh --check   changes nothing; lists each file that differs and exits 1
# .ci/run calls the --check form, so unformatted code fails CI.
set -euo pipefail
cd "$(dirname "$0")/.."
CLANG_FORMAT=${CLANG_FORMAT:-clang-format}
if ! command -v "$CLANG_FORMAT" >/dev/null; then
    echo "format.sh: $CLANG_FORMAT not found (Debian/Ubuntu: apt install clang-format)" >&2
    exit 2
fi
mapfile -t files < <(git ls-files '*.cu' '*.cuh' '*.h' '*.cpp')
if [[ "${1:-}" == "--check" ]]; then
    bad=0
    for f in "${files[@]}"; do
        if ! "$CLANG_FORMAT" --style=file "$f" | cmp -s - "$f"; then
            echo "format.sh: $f is not formatted (run scripts/format.sh, then commit)"
            bad=1
        fi
    done
    [[ $bad == 0 ]] && echo "format.sh: all ${#files[@]} C++/CUDA files are formatted"
    exit $bad
fi
"$CLANG_FORMAT" --style=file -i "${files[@]}"
echo "format.sh: formatted ${#files[@]} files"
