"""The module's own behaviour: the GIL, Jupyter's HTML, accelerate's rows, python3 -m memfit, the
type stubs, pandas."""

import ast
import os
import subprocess
import sys
import threading
import time

import pytest

import memfit


def test_gil_is_released_while_models_are_described():
    # Two threads describe two models (the GPU grid of each: long enough to measure) while this
    # thread keeps time. Holding the GIL, the C++ call would stop every other Python thread, so no
    # tick could fall inside the middle of a call, nor could the two calls overlap.
    calls = {}
    ticks = []

    def work(model):
        start = time.perf_counter()
        memfit.fit(model, task="inference", all_gpus=True, offline=True)
        calls[model] = (start, time.perf_counter())

    threads = [threading.Thread(target=work, args=(m,))
               for m in ("deepseek-ai/DeepSeek-V3", "Qwen/Qwen3-235B-A22B")]
    for t in threads:
        t.start()
    while any(t.is_alive() for t in threads):
        ticks.append(time.perf_counter())
        time.sleep(0.001)
    for t in threads:
        t.join()
    (a0, a1), (b0, b1) = calls.values()
    assert min(a1, b1) > max(a0, b0), f"the calls did not overlap: {calls}"
    for start, end in calls.values():
        span = end - start
        inside = [t for t in ticks if start + 0.25 * span < t < end - 0.25 * span]
        assert inside, f"no Python tick inside a {span * 1000:.1f} ms call: the GIL was held"


def test_repr_html_has_the_table_and_the_verdict():
    fits = memfit.fit("Qwen/Qwen3-0.6B", gpu="rtx4090", offline=True)
    html = fits._repr_html_()
    assert fits.verdict == fits.to_dict()["verdict"] == "fits"
    assert "<pre" in html and ">fits</b>" in html
    too_big = memfit.fit("meta-llama/Llama-3.1-405B", gpu="rtx4090", ram="16GiB", offline=True)
    assert too_big.verdict == "does not fit"
    assert "does not fit" in too_big._repr_html_()
    # No verdict: the table alone, escaped.
    plain = memfit.estimate_memory("bert-base-cased", offline=True)
    assert plain.verdict is None
    assert plain._repr_html_().startswith("<pre")


def test_accelerate_rows_are_accelerates_table():
    r = memfit.estimate_memory("openai-community/gpt2", accelerate=True, offline=True)
    assert r["schema"] == "memfit.accelerate/1"
    rows = r.rows
    assert [row["dtype"] for row in rows] == ["float32", "float16", "int8", "int4"]
    # accelerate divides float32's bytes by 2, 4 and 8.
    total = rows[0]["total_size_bytes"]
    assert rows[1]["total_size_bytes"] == total / 2 and rows[3]["total_size_bytes"] == total / 8
    assert all(set(row["strings"]) == {"largest_layer", "total_size", "training_adam"}
               for row in rows)


def test_sizes_are_python_ints_and_paths_are_accepted(tmp_path, cli):
    r = memfit.inference("Qwen/Qwen3-8B", context=4096, offline=True)
    d = r.to_dict()
    assert type(d["total_bytes"]) is int and d["total_bytes"] > 8 * 10**9
    assert r.to_json() == r.to_json() and memfit.Result.to_dict(r) is not d
    assert repr(r) == "<memfit.Result inference Qwen/Qwen3-8B>"


def test_python_m_memfit_runs_the_cli(cli):
    env = dict(os.environ)
    p = subprocess.run([sys.executable, "-m", "memfit", "estimate-memory", "bert-base-cased",
                        "--offline", "--format", "json"], capture_output=True, text=True,
                       env=env, timeout=120)
    assert p.returncode == 0, p.stderr
    code, out, _ = cli("estimate-memory", "bert-base-cased", "--offline", "--format", "json")
    assert p.stdout == out
    bad = subprocess.run([sys.executable, "-m", "memfit", "inference", "Qwen/Qwen3-8B",
                          "--no-such-flag"],
                         capture_output=True, text=True, env=env, timeout=120)
    assert bad.returncode == 2 and "--no-such-flag" in bad.stderr


def test_stubs_list_every_option_of_the_table():
    stubs = os.path.join(os.path.dirname(memfit.__file__), "__init__.pyi")
    tree = ast.parse(open(stubs, encoding="utf-8").read())
    functions = {f.name: f for f in tree.body if isinstance(f, ast.FunctionDef)}
    table = memfit.options()["commands"]
    for command, name in memfit._FUNCTIONS.items():
        keywords = {a.arg for a in functions[name].args.kwonlyargs}
        expected = {o["name"].replace("-", "_") for o in table[command] if o["name"] != "model"}
        assert keywords == expected, name
    assert "context" in {a.arg for a in functions["inference"].args.kwonlyargs}


def test_docstrings_come_from_the_option_table():
    assert "context" in memfit.inference.__doc__ and "kv_dtype" in memfit.inference.__doc__
    assert memfit.__version__.count(".") == 2


def test_to_pandas():
    pandas = pytest.importorskip("pandas", reason="python3-pandas is not installed")
    frame = memfit.gpus(vendor="nvidia").to_pandas()
    assert isinstance(frame, pandas.DataFrame) and len(frame) > 5
