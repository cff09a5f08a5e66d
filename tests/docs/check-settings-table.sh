#!/usr/bin/env bash
# The settings table of docs/configuration.md must be exactly what the settings table in common/ generates.
# Usage: check-settings-table.sh CMCPD PAGE   (regenerate: cmcpd --settings-markdown)
set -euo pipefail
cmcpd=$1 page=$2
documented=$(sed -n '/<!-- settings-table:begin -->/,/<!-- settings-table:end -->/p' "$page" | sed '1d;$d')
generated=$("$cmcpd" --settings-markdown)
if [[ "$(printf '%s' "$documented" | sed '/^$/d')" != "$(printf '%s' "$generated" | sed '/^$/d')" ]]; then
    echo "$page: its settings table differs from 'cmcpd --settings-markdown':" >&2
    diff <(printf '%s\n' "$documented" | sed '/^$/d') <(printf '%s\n' "$generated" | sed '/^$/d') >&2 || true
    exit 1
fi
echo "$page: the settings table matches the code ($(printf '%s\n' "$generated" | grep -c '^| `') settings)"
