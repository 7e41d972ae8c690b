# Services some tests use, on 127.0.0.1 only (sourced by ./scripts/test, from the repository root):
# Debian's packages for them, a PostgreSQL server of the tests' own, and headless Chromium.
#
# Needs scripts/lib.sh (step). Exports PARLEY_TEST_POSTGRES_URL once the server runs, and
# PARLEY_CHROMIUM when Chromium is installed. Tests that need a missing one skip, or fail when
# PARLEY_REQUIRE_SERVICES=1 (CI).

SYSTEM_PACKAGES=(postgresql chromium graphviz fonts-dejavu-core)

# Install the Debian packages the tests use that are missing (as root, with apt-get); otherwise say
# which are missing and go on.
ensure_system_packages() {
  local missing=() package
  for package in "${SYSTEM_PACKAGES[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
      missing+=("$package")
    fi
  done
  if [ "${#missing[@]}" -eq 0 ]; then
    return
  fi
  if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
    step "installing ${missing[*]} from Debian's packages"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  else
    step "not installed: ${missing[*]} (the tests that need them are skipped; install them with apt-get)"
  fi
}

# Start a PostgreSQL server of our own on a free port of 127.0.0.1, in a fresh directory, and stop it
# when the calling shell exits.
start_postgres() {
  local bin
  bin="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)"
  if [ -z "$bin" ] || [ ! -x "$bin/initdb" ]; then
    step "PostgreSQL is not installed: its tests are skipped"
    return 0
  fi
  PARLEY_PG_DIR="$(mktemp -d /tmp/parley-postgres.XXXXXX)"
  local port run_as=()
  port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
  if [ "$(id -u)" -eq 0 ]; then
    chown postgres: "$PARLEY_PG_DIR"
    run_as=(runuser -u postgres --)
  fi
  "${run_as[@]}" "$bin/initdb" -D "$PARLEY_PG_DIR/data" -U parley -A trust --no-sync >/dev/null
  "${run_as[@]}" "$bin/pg_ctl" -D "$PARLEY_PG_DIR/data" -l "$PARLEY_PG_DIR/server.log" -w \
    -o "-c listen_addresses=127.0.0.1 -p $port -k $PARLEY_PG_DIR -c max_connections=300" start >/dev/null
  trap 'stop_postgres' EXIT
  export PARLEY_TEST_POSTGRES_URL="postgresql://parley@127.0.0.1:$port/postgres"
  step "PostgreSQL $("$bin/postgres" --version | awk '{print $3}') on 127.0.0.1:$port for the tests"
}

stop_postgres() {
  if [ -n "${PARLEY_PG_DIR:-}" ] && [ -d "$PARLEY_PG_DIR/data" ]; then
    local bin run_as=()
    bin="$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)"
    if [ "$(id -u)" -eq 0 ]; then
      run_as=(runuser -u postgres --)
    fi
    "${run_as[@]}" "$bin/pg_ctl" -D "$PARLEY_PG_DIR/data" -m immediate stop >/dev/null 2>&1 || true
    rm -rf "$PARLEY_PG_DIR"
  fi
}

# Export PARLEY_CHROMIUM when headless Chromium is installed.
find_chromium() {
  local candidate
  for candidate in chromium chromium-browser; do
    if command -v "$candidate" >/dev/null; then
      export PARLEY_CHROMIUM
      PARLEY_CHROMIUM="$(command -v "$candidate")"
      return
    fi
  done
}
