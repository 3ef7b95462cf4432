# bench/setup.sh: sourced by bench/run.sh and tests/run.sh. Makes sure meson, ninja, numpy, matplotlib,
# cuobjdump and nvdisasm are there (installing them from PyPI if not), then configures and builds ./build.
# Extra meson options can be passed in MESON_SETUP_ARGS, e.g. -Dlib_root=/path/to/nvidia/cudnn.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

python=${PYTHON:-python3}
missing=()
command -v meson >/dev/null 2>&1 || missing+=(meson)
command -v ninja >/dev/null 2>&1 || missing+=(ninja)
"$python" -c "import numpy" >/dev/null 2>&1 || missing+=(numpy)
"$python" -c "import matplotlib" >/dev/null 2>&1 || missing+=(matplotlib)
if ((${#missing[@]})); then
    echo "setup: installing ${missing[*]} with pip"
    "$python" -m pip install --quiet --disable-pip-version-check --root-user-action=ignore "${missing[@]}"
    command -v pyenv >/dev/null 2>&1 && pyenv rehash
    hash -r
fi
# A pip-installed meson may not be on PATH (a user install, a fresh pyenv shim): run it as a module.
if ! command -v meson >/dev/null 2>&1; then
    meson() { "$python" -m mesonbuild.mesonmain "$@"; }
fi
if ! command -v nvcc >/dev/null 2>&1 && [ -x /usr/local/cuda/bin/nvcc ]; then
    export PATH=/usr/local/cuda/bin:$PATH
fi

# Where the toolkit has no cuDNN, look for it (and cuBLAS) in Python wheels (nvidia-cudnn-cu13,
# nvidia-cublas), as some GPU machines ship them.
if [ -z "${MESON_SETUP_ARGS:-}" ] && ! ls /usr/local/cuda/lib64/libcudnn.so* >/dev/null 2>&1; then
    wheel_roots=$("$python" - <<'PY'
import glob, os, site
roots = []
for base in site.getsitepackages() + [site.getusersitepackages()]:
    for name in ("cudnn", "cublas"):
        for path in glob.glob(os.path.join(base, "nvidia", "**", f"lib{name}.so*"), recursive=True):
            root = os.path.dirname(os.path.dirname(path))
            if root not in roots:
                roots.append(root)
print(",".join(roots))
PY
    )
    if [ -n "$wheel_roots" ]; then
        echo "setup: using cuDNN/cuBLAS from Python wheels: $wheel_roots"
        MESON_SETUP_ARGS="-Dlib_root=$wheel_roots"
    fi
fi

# The timing model and the build suite read the machine code: the toolkit here has no cuobjdump/nvdisasm,
# PyPI does. Pinned: 13.2.51 is the oldest CUDA 13 release of them on PyPI, the nearest to the toolkit's
# 13.0 (a newer cuobjdump reads an older toolkit's binaries; an unpinned one would change under the tests).
if ! command -v cuobjdump >/dev/null 2>&1 && [ ! -x /usr/local/cuda/bin/nvdisasm ] &&
    ! "$python" -c "import glob, site, sys; sys.exit(not all(any(glob.glob(b + '/nvidia/*/bin/' + tool)
        for b in site.getsitepackages()) for tool in ('cuobjdump', 'nvdisasm')))"; then
    echo "setup: installing nvidia-cuda-cuobjdump and nvidia-cuda-nvdisasm 13.2.51 with pip (to read machine code)"
    # optional: without them the build still builds, and the model says it reads the PTX alone
    "$python" -m pip install --quiet --disable-pip-version-check --root-user-action=ignore \
        "nvidia-cuda-cuobjdump==13.2.51" "nvidia-cuda-nvdisasm==13.2.51" ||
        echo "setup: could not install them (no PyPI here?): the model will read the PTX alone"
fi

if [ ! -f build/build.ninja ]; then
    meson setup build ${MESON_SETUP_ARGS:-}
fi
meson compile -C build
