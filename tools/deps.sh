# Sourced by tools/demo.sh and tools/test.sh: installs the Debian packages
# they need when some are missing, as .ci/run does. Says what it installs,
# uses sudo when not root, and does nothing when everything is there (or on
# a system without dpkg/apt-get, where it only names what may be missing).
ensure_packages() {
    local missing=() p
    command -v dpkg >/dev/null 2>&1 || return 0
    for p in "$@"; do
        dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    if ! command -v apt-get >/dev/null 2>&1; then
        echo "genloop: packages missing (install them yourself): ${missing[*]}" >&2
        return 0
    fi
    local sudo=()
    if [ "$(id -u)" != 0 ]; then
        if ! command -v sudo >/dev/null 2>&1; then
            echo "genloop: packages missing and no sudo to install them: ${missing[*]}" >&2
            return 0
        fi
        sudo=(sudo)
    fi
    echo "genloop: installing missing Debian packages: ${missing[*]}" >&2
    export DEBIAN_FRONTEND=noninteractive
    "${sudo[@]}" apt-get update -qq
    "${sudo[@]}" apt-get install -y -qq "${missing[@]}"
}
