#!/usr/bin/env bash
# Install everything the test suite needs, then run lint, type checks and the whole suite.
#
#   bash scripts/test.sh            # everything (as CI runs it)
#   bash scripts/test.sh -k echo    # extra arguments go to pytest
#
# As root it installs Debian packages (git, python3-venv, chromium, docker.io, debootstrap) and
# starts a private Docker engine with no bridge network (.ci/docker/setup.sh), which it stops
# when it ends if this run started it. The Python side lives in .venv inside the checkout.
set -euo pipefail
cd "$(dirname "$0")/.."

log() { printf '\n== %s\n' "$*"; }

if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  missing=()
  command -v git >/dev/null || missing+=(git)
  probe=$(mktemp -d)  # python3 -m venv needs ensurepip, which Debian ships in python3-venv
  python3 -m venv "$probe/venv" >/dev/null 2>&1 || missing+=(python3-venv)
  rm -rf "$probe"
  command -v chromium >/dev/null || missing+=(chromium)
  command -v dockerd >/dev/null || missing+=(docker.io)
  command -v debootstrap >/dev/null || missing+=(debootstrap)
  if [ ${#missing[@]} -gt 0 ]; then
    log "apt-get install ${missing[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
fi

log "Python environment (.venv)"
[ -x .venv/bin/python ] || python3 -m venv .venv
.venv/bin/python -m pip install -q -U pip 'setuptools>=70.1' wheel
.venv/bin/python -m pip install -q -e ".[dev]" -e envs/echo_env

if [ "$(id -u)" = 0 ] && [ -z "${DOCKER_HOST:-}" ]; then
  log "Docker engine (private, no bridge network)"
  eval "$(bash .ci/docker/setup.sh)"  # exports DOCKER_HOST and OPENENV_TEST_BASE_IMAGE
  if [ "${OPENENV_DOCKER_STARTED:-0}" = 1 ]; then
    trap 'bash .ci/docker/stop.sh' EXIT  # the engine this run started, and no other
  fi
fi

log "ruff"
.venv/bin/ruff check .
.venv/bin/ruff format --check .
log "mypy"
.venv/bin/mypy
log "pytest"
.venv/bin/python -m pytest "$@"
