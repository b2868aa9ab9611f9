#!/usr/bin/env bash
# Stop the private dockerd started by .ci/docker/setup.sh (found by its pidfile).
# Leaves images, the data root and the rootfs cache in place, so the next
# setup.sh run only restarts the daemon. Any other dockerd is left alone.
set -euo pipefail

STATE_DIR="${OPENENV_DOCKER_STATE_DIR:-/var/lib/openenv-hub-ci/docker}"
PIDFILE="$STATE_DIR/docker.pid"

log() { printf '[docker-stop] %s\n' "$*" >&2; }

if [ ! -s "$PIDFILE" ]; then
    log "no pidfile at $PIDFILE: nothing to stop"
    exit 0
fi
pid=$(cat "$PIDFILE")
if ! kill -0 "$pid" 2>/dev/null; then
    log "pid $pid is not running: removing stale pidfile"
    rm -f "$PIDFILE"
    exit 0
fi
# Make sure the pid is our dockerd, not a recycled pid.
if ! tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q -- "--pidfile $PIDFILE"; then
    log "pid $pid is not the dockerd started with --pidfile $PIDFILE: not touching it"
    exit 1
fi

# dockerd leaves its default netns mount under the exec root; drop it so the
# state dir can be deleted.
unmount_leftovers() {
    awk -v d="$STATE_DIR/exec/" 'index($2, d) == 1 { print $2 }' /proc/mounts | sort -r |
        while read -r m; do umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true; done
}

log "stopping dockerd pid $pid (running containers are stopped too)"
kill -TERM "$pid"
for _ in $(seq 1 120); do
    kill -0 "$pid" 2>/dev/null || { log "stopped"; rm -f "$PIDFILE"; unmount_leftovers; exit 0; }
    sleep 0.25
done
log "dockerd pid $pid still running after 30 s: sending SIGKILL"
kill -KILL "$pid" 2>/dev/null || true
rm -f "$PIDFILE"
unmount_leftovers
