"""Makes transformers, huggingface_hub, accelerate and peft importable from source folders.

The CPU harness runs on Debian's python3-torch (1.13.1) with these libraries read as source into
a folder outside the repository (validation/README.md: "CPU set-up"). Source checkouts carry no
installed metadata, and transformers checks versions through importlib.metadata at import time,
so `activate()` writes a small temporary folder, for this process only, with:
  - a `<name>-<version>.dist-info/METADATA` for each source package found (the version read
    from its own `__init__.py`);
  - a stand-in `safetensors` package (the Rust extension is not packaged for Debian 12 and the
    harness never reads or writes a checkpoint: models are built from configs with random
    weights). It provides `storage_ptr`/`storage_size` (used by transformers' tie detection)
    and raises on any file I/O. Its metadata says it is a stand-in.
  - a stand-in `tokenizers` package (also Rust, not in Debian 12) with no metadata, so that
    transformers reports it as unavailable; it exists only because transformers 4.48 imports
    names from it at module level (configuration_utils -> modeling_gguf_pytorch_utils ->
    integrations/ggml.py). Any name read from it is a placeholder class that raises when used.
Nothing is written outside the temporary folder, which is removed at exit.
"""

import atexit
import os
import re
import shutil
import sys
import tempfile

SOURCE_PACKAGES = {
    # import name: distribution name
    "transformers": "transformers",
    "huggingface_hub": "huggingface_hub",
    "accelerate": "accelerate",
    "peft": "peft",
}

SAFETENSORS_STANDIN_VERSION = "0.4.5"

_SAFETENSORS_INIT = '''"""memfit validation harness: stand-in for safetensors (no checkpoint I/O in the harness)."""
__version__ = "{version}"


class SafetensorError(Exception):
    pass


def safe_open(*args, **kwargs):
    raise RuntimeError("safetensors stand-in: the memfit harness reads no checkpoint")
'''

_SAFETENSORS_TORCH = '''"""memfit validation harness: the two storage helpers transformers uses, plus I/O stubs."""


def storage_ptr(tensor):
    try:
        return tensor.untyped_storage().data_ptr()
    except (AttributeError, NotImplementedError):
        return tensor.storage().data_ptr()


def storage_size(tensor):
    try:
        return tensor.untyped_storage().nbytes()
    except (AttributeError, NotImplementedError):
        return tensor.storage().size() * tensor.element_size()


def _no_io(*args, **kwargs):
    raise RuntimeError("safetensors stand-in: the memfit harness reads and writes no checkpoint")


def __getattr__(name):  # load_model, save_model, ...: any other entry point is file I/O
    if name.startswith("__"):
        raise AttributeError(name)
    return _no_io
'''


_TOKENIZERS_MODULE = '''"""memfit validation harness: import-only stand-in for tokenizers (never used)."""


class _Placeholder:
    def __init__(self, *args, **kwargs):
        raise RuntimeError("tokenizers stand-in: the memfit harness tokenizes nothing")


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    return type(name, (_Placeholder,), {})
'''

_TOKENIZERS_SUBMODULES = ("models", "decoders", "normalizers", "pre_tokenizers", "processors",
                          "trainers")


def _version_of(package_dir):
    path = os.path.join(package_dir, "__init__.py")
    try:
        with open(path, encoding="utf-8") as f:
            m = re.search(r'^__version__\s*=\s*["\']([^"\']+)["\']', f.read(), re.M)
    except OSError:
        return None
    return m.group(1) if m else None


def _write_dist_info(root, dist, version, summary):
    d = os.path.join(root, f"{dist}-{version}.dist-info")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "METADATA"), "w") as f:
        f.write(f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\nSummary: {summary}\n")


def find_package_dirs(pydeps):
    """Import name -> folder holding the package, searched in pydeps (one level of subfolders,
    also `src/` layouts: pydeps/transformers-4.48.3/src/transformers)."""
    found = {}
    candidates = [pydeps]
    for entry in sorted(os.listdir(pydeps)):
        sub = os.path.join(pydeps, entry)
        if os.path.isdir(sub):
            candidates += [sub, os.path.join(sub, "src")]
    for base in candidates:
        for name in SOURCE_PACKAGES:
            pkg = os.path.join(base, name)
            if name not in found and os.path.isfile(os.path.join(pkg, "__init__.py")):
                found[name] = base
    return found


def activate(pydeps):
    """Puts the source packages of `pydeps` on sys.path (with metadata) and the safetensors
    stand-in. Returns a dict of what was found: import name -> (folder, version)."""
    found = find_package_dirs(pydeps) if pydeps else {}
    shim = tempfile.mkdtemp(prefix="memfit-pydeps-")
    atexit.register(shutil.rmtree, shim, True)
    result = {}
    for name, base in found.items():
        version = _version_of(os.path.join(base, name)) or "0"
        _write_dist_info(shim, SOURCE_PACKAGES[name], version,
                         f"source checkout at {base} (metadata written by memfit's harness)")
        if base not in sys.path:
            sys.path.insert(0, base)
        result[name] = (base, version)
    try:
        import safetensors  # noqa: F401  (a real one is installed: use it)
    except ImportError:
        st = os.path.join(shim, "safetensors")
        os.makedirs(st)
        with open(os.path.join(st, "__init__.py"), "w") as f:
            f.write(_SAFETENSORS_INIT.format(version=SAFETENSORS_STANDIN_VERSION))
        with open(os.path.join(st, "torch.py"), "w") as f:
            f.write(_SAFETENSORS_TORCH)
        _write_dist_info(shim, "safetensors", SAFETENSORS_STANDIN_VERSION,
                         "stand-in written by memfit's harness: no checkpoint I/O")
        result["safetensors"] = (shim, SAFETENSORS_STANDIN_VERSION + " (stand-in)")
    try:
        import tokenizers  # noqa: F401
    except ImportError:
        tk = os.path.join(shim, "tokenizers")
        os.makedirs(tk)
        for mod in ("__init__",) + _TOKENIZERS_SUBMODULES:
            with open(os.path.join(tk, mod + ".py"), "w") as f:
                f.write(_TOKENIZERS_MODULE)
        result["tokenizers"] = (shim, "import-only stand-in")
    sys.path.insert(0, shim)
    return result
