#!/usr/bin/env bash
# Prepare a private Docker engine for the container tests.
#
#   eval "$(.ci/docker/setup.sh)"      # or: . "$STATE_DIR/env" after running it
#
# Idempotent. Steps, each skipped when already done:
#   1. install dockerd + debootstrap from Debian packages;
#   2. start a private dockerd (own socket, data root, exec root, pidfile) with
#      NO bridge network: containers must use --network host;
#   3. build the base image openenv-test-base:py311 (Debian bookworm: python3,
#      python3-venv, ca-certificates, plus the host's extra CA certificates)
#      from a cached debootstrap rootfs tarball, because no registry is reachable.
#
# Only `export NAME=value` lines go to stdout (DOCKER_HOST is the last one);
# progress goes to stderr. The same lines are written to "$STATE_DIR/env", except
# `export OPENENV_DOCKER_STARTED=1`, printed only by the run that started the daemon
# (so that run, and no other, can stop it with .ci/docker/stop.sh).
#
# Environment:
#   OPENENV_DOCKER_STATE_DIR   socket, data/exec root, pidfile, log, env file
#                              (default /var/lib/openenv-hub-ci/docker)
#   OPENENV_DOCKER_CACHE_DIR   debootstrap rootfs tarballs (default /var/cache/openenv-hub)
#   OPENENV_TEST_BASE_IMAGE    base image tag (default openenv-test-base:py311)
#   OPENENV_DEBIAN_MIRROR      Debian mirror (default: the one apt uses on this host)
#   OPENENV_DEBIAN_SUITE       Debian suite of the base image (default bookworm = Python 3.11)
#   OPENENV_REBUILD_BASE=1     rebuild the base image (and the rootfs tarball) from scratch
set -euo pipefail

STATE_DIR="${OPENENV_DOCKER_STATE_DIR:-/var/lib/openenv-hub-ci/docker}"
CACHE_DIR="${OPENENV_DOCKER_CACHE_DIR:-/var/cache/openenv-hub}"
BASE_IMAGE="${OPENENV_TEST_BASE_IMAGE:-openenv-test-base:py311}"
SUITE="${OPENENV_DEBIAN_SUITE:-bookworm}"
PACKAGES="python3,python3-venv,ca-certificates"
REBUILD="${OPENENV_REBUILD_BASE:-0}"

SOCK="$STATE_DIR/docker.sock"
PIDFILE="$STATE_DIR/docker.pid"
LOG="$STATE_DIR/dockerd.log"
export DOCKER_HOST="unix://$SOCK"

log() { printf '[docker-setup %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

[ "$(id -u)" = 0 ] || die "must run as root (dockerd and debootstrap need it)"
mkdir -p "$STATE_DIR" "$CACHE_DIR"

# Serialise concurrent runs (parallel jobs sharing one engine).
exec 9>"$STATE_DIR/setup.lock"
flock 9

# --- 1. packages -------------------------------------------------------------
install_packages() {
    local missing=()
    command -v dockerd >/dev/null 2>&1 || missing+=(docker.io)
    command -v debootstrap >/dev/null 2>&1 || missing+=(debootstrap)
    [ "${#missing[@]}" -eq 0 ] && return 0
    log "installing ${missing[*]} from Debian packages"
    # No init system here: keep the package scripts from starting the system daemon.
    local policy=/usr/sbin/policy-rc.d created_policy=0
    if [ ! -e "$policy" ]; then
        printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod 755 "$policy" && created_policy=1
    fi
    local rc=0
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" >&2 \
        || { apt-get update -q >&2 && DEBIAN_FRONTEND=noninteractive \
                 apt-get install -y -q --no-install-recommends "${missing[@]}" >&2; } || rc=$?
    [ "$created_policy" = 1 ] && rm -f "$policy"
    [ "$rc" = 0 ] || die "apt-get install ${missing[*]} failed"
}
install_packages
command -v docker >/dev/null 2>&1 || die "no docker CLI on PATH"

# --- 2. daemon ---------------------------------------------------------------
answers() { timeout 10 docker version --format '{{.Server.Version}}' >/dev/null 2>&1; }

STARTED=0
start_daemon() {
    if answers; then
        log "dockerd already answering on $SOCK"
        return 0
    fi
    if [ -s "$PIDFILE" ] && kill -0 "$(cat "$PIDFILE")" 2>/dev/null; then
        die "dockerd pid $(cat "$PIDFILE") is alive but does not answer on $SOCK; see $LOG or run .ci/docker/stop.sh"
    fi
    rm -f "$PIDFILE" "$SOCK"
    mkdir -p "$STATE_DIR/data" "$STATE_DIR/exec"
    log "starting dockerd (socket $SOCK, no bridge network)"
    # setsid: the daemon outlives this script and the shell/job that ran it.
    setsid dockerd \
        --host "unix://$SOCK" \
        --data-root "$STATE_DIR/data" \
        --exec-root "$STATE_DIR/exec" \
        --pidfile "$PIDFILE" \
        --bridge=none --iptables=false --ip6tables=false --ip-masq=false \
        </dev/null >>"$LOG" 2>&1 9>&- &
    local i
    for i in $(seq 1 120); do
        answers && { log "dockerd ready after ~$((i / 4)) s (pid $(cat "$PIDFILE" 2>/dev/null))"; STARTED=1; return 0; }
        kill -0 $! 2>/dev/null || { tail -n 30 "$LOG" >&2; die "dockerd exited; see $LOG"; }
        sleep 0.25
    done
    tail -n 30 "$LOG" >&2
    die "dockerd did not answer within 30 s; see $LOG"
}
start_daemon
# The default bridge network; swarm mode's own docker_gwbridge is not used by our containers.
if docker network ls --format '{{.Name}}' | grep -qx bridge; then
    die "the default bridge network exists on $SOCK; this engine must be started with --bridge=none"
fi

# --- 3. base image -----------------------------------------------------------
debian_mirror() {
    if [ -n "${OPENENV_DEBIAN_MIRROR:-}" ]; then echo "$OPENENV_DEBIAN_MIRROR"; return; fi
    local f m=""
    # deb822 (*.sources): the URIs of a stanza whose Suites hold the plain suite.
    for f in /etc/apt/sources.list.d/*.sources; do
        [ -r "$f" ] || continue
        m=$(awk -v suite="$SUITE" '
            function flush() { if (uri != "" && ok && !done) { print uri; done = 1; exit } uri = ""; ok = 0 }
            /^[[:space:]]*$/ { flush(); next }
            /^URIs:/   { uri = $2 }
            /^Suites:/ { for (i = 2; i <= NF; i++) if ($i == suite) ok = 1 }
            END { flush() }' "$f")
        [ -n "$m" ] && { echo "$m"; return; }
    done
    # one-line format: deb [options] URI suite components
    for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
        [ -r "$f" ] || continue
        m=$(sed -E 's/\[[^]]*\]//' "$f" | awk -v suite="$SUITE" '$1 == "deb" && $3 == suite { print $2; exit }')
        [ -n "$m" ] && { echo "$m"; return; }
    done
    echo "http://deb.debian.org/debian"
}

# Extra CA certificates the host trusts (e.g. a TLS-inspecting egress proxy);
# without them pip inside `docker build` fails certificate verification.
extra_certs() {
    find /usr/local/share/ca-certificates -type f -name '*.crt' 2>/dev/null | sort
}

fingerprint() {
    {
        echo "$SUITE $PACKAGES"
        extra_certs | while read -r c; do sha256sum "$c" | cut -d' ' -f1; done
        echo v1
    } | sha256sum | cut -c1-16
}

build_rootfs_tarball() {
    local tarball=$1 mirror rootfs
    mirror=$(debian_mirror)
    rootfs=$(mktemp -d "$CACHE_DIR/rootfs.XXXXXX")
    log "debootstrap $SUITE from $mirror (takes ~1 min on 2 cores)"
    if ! debootstrap --variant=minbase --include="$PACKAGES" "$SUITE" "$rootfs" "$mirror" \
            >"$CACHE_DIR/debootstrap.log" 2>&1; then
        tail -n 30 "$CACHE_DIR/debootstrap.log" >&2
        rm -rf "$rootfs"
        die "debootstrap failed; see $CACHE_DIR/debootstrap.log"
    fi
    chroot "$rootfs" apt-get clean
    rm -rf "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/cache/apt/*.bin \
           "$rootfs"/usr/share/doc/* "$rootfs"/usr/share/man/* \
           "$rootfs"/usr/share/info/* "$rootfs"/usr/share/locale/* \
           "$rootfs"/var/log/*.log "$rootfs"/var/log/apt/*
    # The image gets its own resolv.conf/hosts from docker; keep the host's out.
    : >"$rootfs/etc/resolv.conf"
    tar --numeric-owner -C "$rootfs" -cf "$tarball.part" .
    mv "$tarball.part" "$tarball"
    rm -rf "$rootfs"
}

build_base_image() {
    local fp current
    fp=$(fingerprint)
    current=$(docker image inspect --format '{{ index .Config.Labels "org.openenv-hub.base-fingerprint" }}' \
              "$BASE_IMAGE" 2>/dev/null || true)
    if [ "$REBUILD" != 1 ] && [ "$current" = "$fp" ]; then
        log "base image $BASE_IMAGE present"
        return 0
    fi

    local raw_tag="${BASE_IMAGE%%:*}-rootfs:$SUITE"
    local tarball="$CACHE_DIR/rootfs-$SUITE-$(echo "$SUITE $PACKAGES" | sha256sum | cut -c1-12).tar"
    if [ "$REBUILD" = 1 ] || [ ! -s "$tarball" ]; then
        build_rootfs_tarball "$tarball"
    else
        log "using cached rootfs $tarball"
    fi
    log "importing rootfs as $raw_tag"
    docker import -c 'ENV LANG=C.UTF-8' -c 'CMD ["python3"]' "$tarball" "$raw_tag" >/dev/null

    # Top layer: host CA certificates + env so TLS clients (pip, requests,
    # urllib) in venvs use the system bundle rather than a vendored one.
    local ctx
    ctx=$(mktemp -d)
    mkdir -p "$ctx/certs"
    extra_certs | while read -r c; do cp "$c" "$ctx/certs/"; done
    cat >"$ctx/Dockerfile" <<EOF
FROM $raw_tag
COPY certs/ /usr/local/share/ca-certificates/
RUN update-ca-certificates >/dev/null 2>&1 || update-ca-certificates
ENV LANG=C.UTF-8 \\
    SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt \\
    REQUESTS_CA_BUNDLE=/etc/ssl/certs/ca-certificates.crt \\
    PIP_CERT=/etc/ssl/certs/ca-certificates.crt \\
    PIP_DISABLE_PIP_VERSION_CHECK=1
LABEL org.openenv-hub.base-fingerprint="$fp"
CMD ["python3"]
EOF
    log "building $BASE_IMAGE ($(ls "$ctx/certs" | wc -l) extra CA certificates)"
    # Legacy builder: the docker CLI has no buildx here (it prints a deprecation note).
    if ! DOCKER_BUILDKIT=0 docker build --network host --rm --force-rm -t "$BASE_IMAGE" "$ctx" \
            >"$ctx.log" 2>&1; then
        cat "$ctx.log" >&2
        rm -rf "$ctx" "$ctx.log"
        die "building $BASE_IMAGE failed"
    fi
    rm -f "$ctx.log"
    rm -rf "$ctx"
    # Replaced tags leave dangling images behind; drop them.
    docker image prune -f --filter "label=org.openenv-hub.base-fingerprint" >/dev/null 2>&1 || true
    log "base image $BASE_IMAGE ready ($(docker image inspect --format '{{.Size}}' "$BASE_IMAGE" | awk '{printf "%d MB", $1/1e6}'))"
}
build_base_image

# --- 4. tell the caller --------------------------------------------------------
{
    echo "export OPENENV_TEST_BASE_IMAGE=$BASE_IMAGE"
    echo "export DOCKER_HOST=unix://$SOCK"
} >"$STATE_DIR/env.tmp"
mv "$STATE_DIR/env.tmp" "$STATE_DIR/env"
[ "$STARTED" = 1 ] && echo "export OPENENV_DOCKER_STARTED=1"
cat "$STATE_DIR/env"
