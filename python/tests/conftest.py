"""The Python module's tests: memfit from the build tree (PYTHONPATH=<build>/python, set by CTest),
compared against the binary (MEMFIT_BINARY). Like the C++ tests (tests/test_support.cc), nothing
reaches the network or the user's caches: a fresh HOME, HF_HOME and MEMFIT_CACHE, and an HF_ENDPOINT
on a closed loopback port unless a test starts its own stand-in Hub."""

import json
import os
import subprocess
import tempfile

import pytest

_home = tempfile.mkdtemp(prefix="memfit-pytest-")
os.environ.update({
    "HOME": _home,
    "HF_HOME": os.path.join(_home, "hf"),
    "MEMFIT_CACHE": os.path.join(_home, "memfit"),
    "XDG_CACHE_HOME": os.path.join(_home, "cache"),
    "HF_ENDPOINT": "http://127.0.0.1:9",
})
for name in ("HF_HUB_CACHE", "HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HF_HUB_OFFLINE",
             "TRANSFORMERS_OFFLINE"):
    os.environ.pop(name, None)

import memfit  # noqa: E402  (after the environment above)


def flag_args(kwargs):
    """The CLI's arguments for Python keywords: context=4 -> --context 4, True -> the flag alone,
    a list -> the flag repeated."""
    args = []
    for key, value in kwargs.items():
        flag = "--" + key.replace("_", "-")
        if value is True:
            args.append(flag)
        elif isinstance(value, (list, tuple)):
            for v in value:
                args += [flag, str(v)]
        else:
            args += [flag, str(value)]
    return args


@pytest.fixture(scope="session")
def binary():
    path = os.environ.get("MEMFIT_BINARY")
    if not path or not os.access(path, os.X_OK):
        pytest.skip("MEMFIT_BINARY is not set to the built memfit (run through ctest)")
    return path


@pytest.fixture(scope="session")
def cli(binary):
    """Runs the binary: (exit code, stdout, stderr)."""
    def run(*args):
        p = subprocess.run([binary, *args], capture_output=True, text=True, timeout=120)
        return p.returncode, p.stdout, p.stderr
    return run


@pytest.fixture(scope="session")
def cli_json(cli):
    def run(command, model, kwargs):
        args = [command] + ([model] if model else []) + flag_args(kwargs) + ["--format", "json"]
        code, out, err = cli(*args)
        assert out, f"memfit {' '.join(args)}: exit {code}: {err}"
        return json.loads(out)
    return run


@pytest.fixture(scope="session")
def catalog_ids():
    return [entry["id"] for entry in memfit.models().to_dict()]
