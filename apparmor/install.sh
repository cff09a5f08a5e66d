#!/usr/bin/env bash
# Installs Container-MCP's AppArmor profiles into /etc/apparmor.d and loads them, where the
# kernel has AppArmor; says so and exits 3 where it has not (nothing is changed then).
#   install.sh           install and load (root)
#   install.sh --check   syntax-check every profile with apparmor_parser -QT -K (no kernel
#                        support and no root needed), exit 1 on the first error
#   install.sh --remove  unload and remove them
# Profiles: cmcpd (the daemon), cmcp-jail (the job monitor), cmcp-browser (the QtWebEngine
# worker), cmcp-job-bash and cmcp-job-python (what BASH_APPARMOR_PROFILE and
# PYTHON_APPARMOR_PROFILE name; cmcpd asks the jail for them only when they are loaded), and
# cmcp-container (the container itself on AppArmor hosts: apparmor=cmcp-container).
set -euo pipefail

HERE=$(cd -- "$(dirname -- "$(readlink -f -- "${BASH_SOURCE[0]}")")" && pwd)
readonly HERE
readonly PROFILES="cmcpd cmcp-jail cmcp-browser cmcp-job-bash cmcp-job-python cmcp-container"
readonly TARGET=${CMCP_APPARMOR_DIR:-/etc/apparmor.d}
readonly EXIT_NO_APPARMOR=3
readonly DROP_IN=/etc/systemd/system/cmcpd.service.d/10-apparmor.conf

log() { printf 'apparmor: %s\n' "$*" >&2; }

parser() {
    command -v apparmor_parser >/dev/null \
        || { log "apparmor_parser is missing: apt-get install apparmor"; exit 1; }
}

check() {
    parser
    local profile
    for profile in $PROFILES; do
        # -K: no kernel features needed; -I: tunables/cmcp from this directory, the rest from
        # /etc/apparmor.d (the apparmor package's abstractions and tunables).
        apparmor_parser -QT -K -I "$HERE" "$HERE/$profile" || { log "$profile: syntax error"; exit 1; }
        log "$profile: syntax OK"
    done
}

apparmor_enabled() {
    [[ $(cat /sys/module/apparmor/parameters/enabled 2>/dev/null) == Y ]] \
        && [[ -r /sys/kernel/security/apparmor/profiles ]]
}

install_profiles() {
    parser
    if ! apparmor_enabled; then
        log "this kernel has no AppArmor enabled (/sys/module/apparmor/parameters/enabled is" \
            "'$(cat /sys/module/apparmor/parameters/enabled 2>/dev/null || echo missing)'):" \
            "profiles not loaded. cmcpd runs jobs without the AppArmor layer (the other layers" \
            "are unchanged); its start-up table says so."
        exit "$EXIT_NO_APPARMOR"
    fi
    [[ $EUID -eq 0 ]] || { log "loading profiles needs root"; exit 1; }
    install -D -m 0644 "$HERE/tunables/cmcp" "$TARGET/tunables/cmcp"
    local profile
    for profile in $PROFILES; do
        install -m 0644 "$HERE/$profile" "$TARGET/$profile"
        apparmor_parser -r -W "$TARGET/$profile"
        log "loaded $profile"
    done
    allow_profile_transitions
}

# Confined by its profile, cmcpd changes profile when it starts cmcp-jail and cmcp-browser, and
# AppArmor refuses such a change to a task with no_new_privs: the systemd unit's
# NoNewPrivileges=yes is turned off by a drop-in (the jobs still get no_new_privs from the jail).
allow_profile_transitions() {
    [[ -d /etc/systemd/system ]] || return 0
    mkdir -p "$(dirname "$DROP_IN")"
    cat >"$DROP_IN" <<'EOF_DROP_IN'
# Written by apparmor/install.sh: cmcpd runs confined by its AppArmor profile and starts
# cmcp-jail and cmcp-browser under theirs, a profile change AppArmor refuses under
# no_new_privs. Every job still runs with no_new_privs, set by cmcp-jail.
[Service]
NoNewPrivileges=no
EOF_DROP_IN
    log "wrote $DROP_IN (NoNewPrivileges=no: cmcpd changes AppArmor profile when it starts the jail)"
    if [[ -d /run/systemd/system ]]; then systemctl daemon-reload; fi
}

remove_profiles() {
    local profile
    for profile in $PROFILES; do
        [[ -f $TARGET/$profile ]] || continue
        if apparmor_enabled; then apparmor_parser -R "$TARGET/$profile" || true; fi
        rm -f -- "$TARGET/$profile"
    done
    rm -f -- "$TARGET/tunables/cmcp" "$DROP_IN"
}

case "${1-}" in
    "") install_profiles ;;
    --check) check ;;
    --remove) remove_profiles ;;
    *) echo "usage: $0 [--check|--remove]" >&2; exit 2 ;;
esac
