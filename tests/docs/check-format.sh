#!/usr/bin/env bash
# Every C++ file of the project is as clang-format writes it (.clang-format; `./bin/cmcp format`
# rewrites them). Lists each file that differs and the first lines clang-format would change.
# clang-format is given the files 64 at a time: starting it once per file took a minute.
set -euo pipefail
root=$1
cd -- "$root"
command -v clang-format >/dev/null || { echo "clang-format is not installed"; exit 1; }
mapfile -d '' files < <(find common server console tests tools -name node_modules -prune -o \
    -type f \( -name '*.h' -o -name '*.hpp' -o -name '*.cpp' -o -name '*.cc' \) -print0 | sort -z)
((${#files[@]})) || { echo "no C++ files found under $root"; exit 1; }
# Each change clang-format would make is a "FILE:LINE:COLUMN: warning: ..." line.
warnings=$(printf '%s\0' "${files[@]}" \
    | xargs -0 -n 64 -P 2 clang-format --dry-run --Werror 2>&1 >/dev/null || true)
mapfile -t differing < <(grep -o '^[^:]*:[0-9]*:[0-9]*: \(warning\|error\):' <<<"$warnings" \
    | cut -d: -f1 | sort -u)
if ((${#differing[@]})); then
    for file in "${differing[@]}"; do
        echo "not formatted: $file"
        grep -F -m 3 "$file:" <<<"$warnings" || true
    done
    echo "${#differing[@]} of ${#files[@]} files differ from clang-format; run ./bin/cmcp format"
    exit 1
fi
# Anything else clang-format said (a file it could not read, a bad .clang-format) fails too.
if [[ -n $warnings ]]; then
    echo "$warnings"
    exit 1
fi
echo "${#files[@]} files formatted"
