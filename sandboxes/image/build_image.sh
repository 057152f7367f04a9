#!/usr/bin/env bash
# Build the sandbox image (default agent-sandbox:latest) with no registry:
# debootstrap a minimal Debian of the host's release from the host's own apt mirror,
# add the toolchain of packages.txt, then `docker import` the root filesystem.
#
#   sandboxes/image/build_image.sh [--force] [--image NAME:TAG]
#
# The root filesystem tarball is cached under $AGENT_SANDBOX_CACHE (default
# /var/cache/agent-sandbox), keyed by the release, the package list and the recipe number,
# so a re-run only re-imports it (seconds), or does nothing when the image already holds
# it. --force rebuilds from scratch.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
image="agent-sandbox:latest"
force=0
while [[ $# -gt 0 ]]; do
    case "$1" in
        --force) force=1 ;;
        --image) image="$2"; shift ;;
        -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
        *) echo "build_image.sh: unknown argument $1" >&2; exit 2 ;;
    esac
    shift
done

die() { echo "build_image.sh: $*" >&2; exit 1; }
log() { echo "[build_image] $*"; }

[[ $(id -u) -eq 0 ]] || die "must run as root (debootstrap needs it)"
command -v debootstrap >/dev/null || die "debootstrap is not installed (apt-get install debootstrap)"
command -v docker >/dev/null || die "the docker client is not installed (apt-get install docker.io)"
docker info >/dev/null 2>&1 || die "no Docker daemon answers (start dockerd first)"

# The host's release and mirror: the image matches the host, so host tools mounted
# into it (the CUDA toolkit) find the same glibc.
. /etc/os-release
suite="${VERSION_CODENAME:?cannot tell the host release from /etc/os-release}"
host_mirror() {
    local uri=""
    if compgen -G "/etc/apt/sources.list.d/*.sources" >/dev/null; then
        # deb822: the URIs of the first stanza whose Suites has the bare release name
        uri=$(awk -v s="$suite" '
            /^URIs:/ {u=$2}
            /^Suites:/ {for (i = 2; i <= NF; i++) if ($i == s) {print u; exit}}
            /^$/ {u=""}' /etc/apt/sources.list.d/*.sources)
    fi
    if [[ -z "$uri" && -f /etc/apt/sources.list ]]; then
        uri=$(awk -v s="$suite" '$1 == "deb" && $3 == s {print $2; exit}' /etc/apt/sources.list)
    fi
    echo "${uri:-http://deb.debian.org/debian}"
}
mirror="${AGENT_SANDBOX_MIRROR:-$(host_mirror)}"
packages=$(grep -v '^\s*#' "$here/packages.txt" | xargs | tr ' ' ',')

cache=$(realpath -m "${AGENT_SANDBOX_CACHE:-/var/cache/agent-sandbox}")
# Bump when build_rootfs below changes what goes into the root filesystem.
recipe=1
key=$(cat "$here/packages.txt" <(echo "recipe $recipe $suite $(dpkg --print-architecture)") | sha256sum | cut -c1-16)
tarball="$cache/rootfs-$suite-$key.tar"
mkdir -p "$cache/debs"

build_rootfs() {
    local root
    root=$(mktemp -d /var/tmp/agent-sandbox-root.XXXXXX)
    trap 'rm -rf "$root"' EXIT
    # Reuse any .deb the host's apt already downloaded (hard links: no copy, no space).
    ln -f /var/cache/apt/archives/*.deb "$cache/debs/" 2>/dev/null || true
    log "debootstrap $suite from $mirror with: $packages"
    local t0=$SECONDS
    debootstrap --variant=minbase --include="$packages" --cache-dir="$cache/debs" \
        "$suite" "$root" "$mirror" > "$cache/debootstrap.log" 2>&1 \
        || { tail -30 "$cache/debootstrap.log" >&2; die "debootstrap failed (log: $cache/debootstrap.log)"; }
    log "debootstrap took $((SECONDS - t0))s"

    # An unprivileged user for the commands; the working directory is a tmpfs at /work.
    chroot "$root" /usr/sbin/groupadd -g 1000 sandbox
    chroot "$root" /usr/sbin/useradd -u 1000 -g 1000 -d /work -M -s /bin/sh sandbox
    mkdir -p "$root/work" "$root/usr/local/cuda"
    chroot "$root" apt-get clean
    rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/*.bin "$root"/usr/share/doc/* \
        "$root"/usr/share/man/* "$root"/usr/share/info/* "$root"/debootstrap
    find "$root/usr/share/locale" -mindepth 1 -maxdepth 1 ! -name 'C.*' -exec rm -rf {} + 2>/dev/null || true

    # Fail now, not in the first test, when the toolchain is incomplete.
    chroot "$root" /bin/sh -c 'g++ --version && make --version && timeout --version && prlimit --version && setsid --version && python3 -c "import numpy"' >/dev/null \
        || die "the root filesystem lacks part of the toolchain"

    tar -C "$root" --numeric-owner -cf "$tarball.part" .
    mv "$tarball.part" "$tarball"
    rm -rf "$root"
    trap - EXIT
}

start=$SECONDS
current=$(docker image inspect --format '{{ index .Config.Labels "agent.sandbox.rootfs" }}' "$image" 2>/dev/null || true)
if [[ $force -eq 0 && $current == "$key" ]]; then
    log "$image is up to date (root filesystem $key; --force rebuilds it)"
    exit 0
fi
if [[ $force -eq 1 || ! -s "$tarball" ]]; then
    rm -f "$cache"/rootfs-*.tar
    build_rootfs
else
    log "using cached root filesystem $tarball (--force rebuilds it)"
fi

log "docker import -> $image"
docker import \
    --change 'ENV PATH=/usr/local/cuda/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'ENV LANG=C.UTF-8' \
    --change 'WORKDIR /work' \
    --change 'CMD ["sleep", "infinity"]' \
    --change "LABEL agent.sandbox.image=1 agent.sandbox.rootfs=$key" \
    "$tarball" "$image" >/dev/null
# The image this one replaced is left untagged: remove it (and older ones) unless a container uses it.
docker image prune -f --filter "label=agent.sandbox.image=1" >/dev/null || true
log "built $image ($(du -h "$tarball" | cut -f1) root filesystem) in $((SECONDS - start))s"
