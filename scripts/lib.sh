# Shared by ./scripts/demo and ./scripts/test (sourced, from the repository root): the virtual
# environment, and how llama-cpp-python is built.
#
# llama-cpp-python has no binary wheel for this platform, so it compiles llama.cpp on install. Its
# default build detects the CPU (about 17 minutes on 2 cores) and crashes on the first generation on
# CPUs with AMX; the portable AVX2 build below takes about 4 minutes and works. pip's own wheel cache
# ignores CMAKE_ARGS (it would hand back a wheel built with other flags), so the wheel is built into a
# cache of ours, keyed by the version and the flags, and reused by every clone on the machine.

LLAMA_CPP_VERSION="0.3.36"
LLAMA_CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON -DLLAVA_BUILD=OFF"
VENV="${PARLEY_VENV:-.venv}"
PIP_QUIET=(--quiet --disable-pip-version-check)

# Print a step of the setup.
step() {
  printf '\033[1m==> %s\033[0m\n' "$*"
}

# Create the virtual environment unless it exists, with an up-to-date pip.
ensure_venv() {
  if [ ! -x "$VENV/bin/python" ]; then
    step "creating the virtual environment $VENV"
    python3 -m venv "$VENV"
    "$VENV/bin/python" -m pip install "${PIP_QUIET[@]}" --upgrade pip
  fi
}

# Install llama-cpp-python into the virtual environment unless it is there already, building it once
# per machine with LLAMA_CMAKE_ARGS.
install_llama_cpp() {
  local python="$VENV/bin/python"
  if "$python" -c "import llama_cpp, sys; sys.exit(llama_cpp.__version__ != '$LLAMA_CPP_VERSION')" 2>/dev/null; then
    return
  fi
  local key
  key="$(printf '%s %s' "$LLAMA_CPP_VERSION" "$LLAMA_CMAKE_ARGS" | sha256sum | cut -c1-16)"
  local wheels="${XDG_CACHE_HOME:-$HOME/.cache}/parley/wheels/llama-cpp-python-$key"
  if ! ls "$wheels"/llama_cpp_python-"$LLAMA_CPP_VERSION"-*.whl >/dev/null 2>&1; then
    step "building llama-cpp-python $LLAMA_CPP_VERSION: compiling llama.cpp takes about 4 minutes on 2 cores, once per machine"
    mkdir -p "$wheels"
    local started=$SECONDS
    CMAKE_ARGS="$LLAMA_CMAKE_ARGS" CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-2}" \
      "$python" -m pip wheel --disable-pip-version-check --no-cache-dir --no-deps --wheel-dir "$wheels" \
      "llama-cpp-python==$LLAMA_CPP_VERSION"
    step "built llama-cpp-python in $((SECONDS - started))s (kept in $wheels)"
  fi
  step "installing llama-cpp-python $LLAMA_CPP_VERSION"
  "$python" -m pip install "${PIP_QUIET[@]}" "$wheels"/llama_cpp_python-"$LLAMA_CPP_VERSION"-*.whl
}
