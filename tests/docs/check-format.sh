#!/usr/bin/env bash
# Every C++ file of the project is as clang-format writes it (.clang-format; `./bin/cmcp format`
# rewrites them). Lists each file that differs and the first lines clang-format would change.
set -euo pipefail
root=$1
cd -- "$root"
command -v clang-format >/dev/null || { echo "clang-format is not installed"; exit 1; }
mapfile -d '' files < <(find common server console tests tools -name node_modules -prune -o \
    -type f \( -name '*.h' -o -name '*.hpp' -o -name '*.cpp' -o -name '*.cc' \) -print0 | sort -z)
((${#files[@]})) || { echo "no C++ files found under $root"; exit 1; }
differing=0
for file in "${files[@]}"; do
    if ! clang-format --dry-run --Werror "$file" >/dev/null 2>&1; then
        differing=$((differing + 1))
        echo "not formatted: $file"
        clang-format --dry-run "$file" 2>&1 | grep -m 3 'warning:' || true
    fi
done
if ((differing)); then
    echo "$differing of ${#files[@]} files differ from clang-format; run ./bin/cmcp format"
    exit 1
fi
echo "${#files[@]} files formatted"
