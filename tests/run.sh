#!/usr/bin/env bash
# Runs every test suite: cpu, build and gpu (the gpu tests skip, exit 77, where no GPU answers).
#   bash tests/run.sh                 all suites
#   bash tests/run.sh --suite gpu     one suite (any meson test arguments pass through)
source "$(dirname "${BASH_SOURCE[0]}")/../bench/setup.sh"
# The build suite reads the machine code too; the toolkit here has no cuobjdump/nvdisasm, PyPI does.
if ! command -v cuobjdump >/dev/null 2>&1 &&
    ! "$python" -c "import glob, site, sys; sys.exit(not all(any(glob.glob(b + '/nvidia/*/bin/' + tool)
        for b in site.getsitepackages()) for tool in ('cuobjdump', 'nvdisasm')))"; then
    echo "setup: installing nvidia-cuda-cuobjdump and nvidia-cuda-nvdisasm with pip (for the SASS checks)"
    "$python" -m pip install --quiet --disable-pip-version-check "nvidia-cuda-cuobjdump>=13,<14" \
        "nvidia-cuda-nvdisasm>=13,<14"
fi
meson test -C build --print-errorlogs "$@"
