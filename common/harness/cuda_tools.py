"""Where the CUDA tools are, for the Python scripts of bench/ and tests/: one answer for all of them."""
import glob
import os
import shutil
import site


def find_tool(name, env=None):
    """A CUDA tool: $env, else on PATH, else in /usr/local/cuda/bin, else in an nvidia wheel's bin/ (cuobjdump
    and nvdisasm come from PyPI; bench/setup.sh installs them); None if none is there."""
    if env and os.environ.get(env):
        return os.environ[env]
    for candidate in (shutil.which(name), "/usr/local/cuda/bin/" + name):
        if candidate and os.path.exists(candidate):
            return candidate
    for base in site.getsitepackages() + [site.getusersitepackages()]:
        for path in glob.glob(os.path.join(base, "nvidia", "*", "bin", name)):
            return path
    return None
