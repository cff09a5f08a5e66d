#!/bin/sh
# Prints the Debian packages that hold the shared libraries the given programs load, one a
# line: the final image installs exactly these, so it carries runtime libraries and no -dev
# package or compiler. Run in the builder stage, where the libraries are installed.
set -eu
for program in "$@"; do
    ldd "$program" | awk '/=> \// { print $3 }'
done | sort -u | while read -r library; do
    # dpkg knows the path it unpacked, which may be the /lib alias of /usr/lib (merged /usr).
    dpkg -S "$library" 2>/dev/null || dpkg -S "$(readlink -f "$library")" 2>/dev/null \
        || dpkg -S "/usr$library" 2>/dev/null || { echo "no package holds $library" >&2; exit 1; }
done | cut -d: -f1 | sort -u
