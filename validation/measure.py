#!/usr/bin/env python3
"""memfit's measurement harness: real peak memory for a matrix of scenarios, on a GPU or on CPU.

`--device cuda` (default) runs on a CUDA machine with torch, transformers, accelerate and peft
installed. `--device cpu` runs the CPU matrix (validation/cpu_scenarios.py) on PyTorch's CPU
allocator, reading the peak of allocated bytes from the profiler's raw memory records
(validation/cpu_memory.py); see validation/README.md for its set-up. Nothing is
downloaded: every model is built from a config exported by `memfit models --export-configs DIR`,
with random weights. Each scenario is one row (model, task, settings); results are appended to a
CSV in the format of shared/eval/measured.csv as soon as each row finishes, so a run cut short
keeps what it measured. `memfit validate FILE.csv` compares memfit's estimates with the rows.

    memfit models --export-configs /tmp/configs
    python3 validation/measure.py --configs /tmp/configs --out validation/results/h200.csv
    python3 validation/measure.py --configs /tmp/configs --dry-run     # no GPU needed (CI)
    python3 validation/measure.py --device cpu --configs /tmp/configs --pydeps /work/pydeps \
        --out validation/results/cpu-torch1.13-tf4.48.csv
    python3 validation/measure.py --device cpu --self-check --pydeps /work/pydeps
"""

import argparse
import csv
import gc
import json
import os
import sys
import time

# Scenario settings use the keys `memfit validate` understands (see docs/accuracy.md).
KNOWN_KEYS = {
    "dtype", "precision", "optimizer", "batch", "seq", "context", "decode", "attn",
    "checkpointing", "method", "rank", "alpha", "gpu",
    "device", "foreach",  # CPU rows: device=cpu; AdamW foreach=true/false
    "decoder_tokens",  # encoder-decoder training: target (label) tokens; default seq
    "quant",  # method=qlora: the base's 4-bit scheme (CPU: validation/sim4bit.py's bnb-nf4)
}

# Ordered by value: the CUDA context first, then loads (cheap, exact), inference, training.
# Sized to finish in about 6 minutes on an H100/H200; the harness also stops at --budget-s.
SCENARIOS = [
    # (id, model id, task, settings)
    ("ld-qw05-bf16", "Qwen/Qwen2.5-0.5B", "load", {"dtype": "bfloat16"}),
    ("ld-l1b-bf16", "meta-llama/Llama-3.2-1B", "load", {"dtype": "bfloat16"}),
    ("ld-l1b-fp32", "meta-llama/Llama-3.2-1B", "load", {"dtype": "float32"}),
    ("ld-l3b-fp16", "meta-llama/Llama-3.2-3B", "load", {"dtype": "float16"}),
    ("ld-l8b-bf16", "meta-llama/Llama-3.1-8B", "load", {"dtype": "bfloat16"}),
    ("ld-bert-fp32", "google-bert/bert-base-cased", "load", {"dtype": "float32"}),
    ("inf-l1b-sdpa-4k", "meta-llama/Llama-3.2-1B", "inference",
     {"dtype": "bfloat16", "batch": 1, "context": 4096, "decode": 8, "attn": "sdpa"}),
    ("inf-l1b-eager-2k", "meta-llama/Llama-3.2-1B", "inference",
     {"dtype": "bfloat16", "batch": 1, "context": 2048, "decode": 8, "attn": "eager"}),
    ("inf-l1b-sdpa-b8", "meta-llama/Llama-3.2-1B", "inference",
     {"dtype": "bfloat16", "batch": 8, "context": 2048, "decode": 8, "attn": "sdpa"}),
    ("inf-l8b-sdpa-8k", "meta-llama/Llama-3.1-8B", "inference",
     {"dtype": "bfloat16", "batch": 1, "context": 8192, "decode": 8, "attn": "sdpa"}),
    ("inf-qw05-eager-1k-b4", "Qwen/Qwen2.5-0.5B", "inference",
     {"dtype": "bfloat16", "batch": 4, "context": 1024, "decode": 8, "attn": "eager"}),
    ("tr-qw05-full-fp32", "Qwen/Qwen2.5-0.5B", "train",
     {"method": "full", "precision": "fp32", "optimizer": "adamw", "batch": 4, "seq": 512,
      "attn": "sdpa", "checkpointing": "none"}),
    ("tr-qw05-full-bf16m", "Qwen/Qwen2.5-0.5B", "train",
     {"method": "full", "precision": "bf16-mixed", "optimizer": "adamw", "batch": 4, "seq": 512,
      "attn": "sdpa", "checkpointing": "none"}),
    ("tr-qw05-full-bf16m-ckpt", "Qwen/Qwen2.5-0.5B", "train",
     {"method": "full", "precision": "bf16-mixed", "optimizer": "adamw", "batch": 4, "seq": 512,
      "attn": "sdpa", "checkpointing": "full"}),
    ("tr-l1b-lora16", "meta-llama/Llama-3.2-1B", "train",
     {"method": "lora", "rank": 16, "alpha": 32, "precision": "bf16", "optimizer": "adamw",
      "batch": 2, "seq": 1024, "attn": "sdpa", "checkpointing": "none"}),
    ("tr-l1b-lora64", "meta-llama/Llama-3.2-1B", "train",
     {"method": "lora", "rank": 64, "alpha": 128, "precision": "bf16", "optimizer": "adamw",
      "batch": 2, "seq": 1024, "attn": "sdpa", "checkpointing": "none"}),
    ("tr-bert-full-fp32", "google-bert/bert-base-cased", "train",
     {"method": "full", "precision": "fp32", "optimizer": "adamw", "batch": 8, "seq": 512,
      "attn": "eager", "checkpointing": "none"}),
    ("tr-l3b-lora16-ckpt", "meta-llama/Llama-3.2-3B", "train",
     {"method": "lora", "rank": 16, "alpha": 32, "precision": "bf16", "optimizer": "adamw",
      "batch": 1, "seq": 2048, "attn": "sdpa", "checkpointing": "full"}),
]

FIELDS = ["id", "model", "task", "settings", "measure", "value", "unit", "source", "notes"]


def settings_text(settings):
    return ";".join(f"{k}={v}" for k, v in settings.items())


def config_dir(configs, model_id):
    return os.path.join(configs, model_id.replace("/", "__"))


def check_scenarios(configs, scenarios=None):
    """Validates the scenario list without a GPU; returns a list of problems."""
    problems = []
    seen = set()
    for sid, model_id, task, settings in (SCENARIOS if scenarios is None else scenarios):
        if sid in seen:
            problems.append(f"{sid}: duplicate scenario id")
        seen.add(sid)
        if task not in ("load", "inference", "train"):
            problems.append(f"{sid}: unknown task {task}")
        unknown = set(settings) - KNOWN_KEYS
        if unknown:
            problems.append(f"{sid}: unknown settings {sorted(unknown)}")
        path = os.path.join(config_dir(configs, model_id), "config.json")
        if not os.path.isfile(path):
            problems.append(f"{sid}: no exported config for {model_id} at {path}")
            continue
        with open(path) as f:
            config = json.load(f)
        if "model_type" not in config:
            problems.append(f"{sid}: {path} has no model_type")
        if task == "train" and settings.get("method") not in ("full", "lora", "qlora"):
            problems.append(f"{sid}: train needs method full, lora or qlora")
    return problems


class Writer:
    def __init__(self, path, gpu, versions, decimals=1):
        self.decimals = decimals  # CPU rows: 4 (the profiler's figures are exact bytes)
        self.path = path
        self.gpu = gpu
        self.versions = versions
        new = not os.path.exists(path)
        self.file = open(path, "a", newline="")
        self.csv = csv.DictWriter(self.file, fieldnames=FIELDS)
        if new:
            self.csv.writeheader()

    def row(self, sid, model_id, task, settings, measure, value_bytes, notes=""):
        if self.gpu is not None:
            settings = dict(settings, gpu=self.gpu)
        self.csv.writerow({
            "id": sid, "model": model_id, "task": task, "settings": settings_text(settings),
            "measure": measure, "value": round(value_bytes / 2**20, self.decimals), "unit": "MiB",
            "source": f"validation/measure.py ({self.versions})", "notes": notes,
        })
        self.file.flush()


def build_model(torch, transformers, configs, model_id, dtype, attn):
    config = transformers.AutoConfig.from_pretrained(config_dir(configs, model_id))
    kwargs = {"torch_dtype": dtype}
    if attn:
        kwargs["attn_implementation"] = attn
    arch = (config.architectures or [""])[0]
    cls = getattr(transformers, arch, None) or transformers.AutoModel
    with torch.device("cuda"):
        model = cls._from_config(config, **kwargs)
    return model


def measure(args):
    import torch
    import transformers

    torch.cuda.init()
    free0, total = torch.cuda.mem_get_info()
    torch.ones((1, 1), device="cuda")
    free1, _ = torch.cuda.mem_get_info()
    gpu = torch.cuda.get_device_name(0).replace(" ", "-")
    versions = f"torch {torch.__version__}, transformers {transformers.__version__}"
    try:
        import peft
        versions += f", peft {peft.__version__}"
    except ImportError:
        peft = None
    out = Writer(args.out, gpu, versions)
    out.row("ctx", "-", "context", {}, "nvml_used", free0 - free1 + (total - free0),
            "CUDA context: device memory in use after the first kernel")
    dtypes = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16,
              "fp32": torch.float32, "bf16": torch.bfloat16, "bf16-mixed": torch.float32}
    start = time.time()
    for sid, model_id, task, settings in SCENARIOS:
        if args.only and args.only not in sid:
            continue
        if time.time() - start > args.budget_s:
            print(f"budget of {args.budget_s}s spent: stopping before {sid}", flush=True)
            break
        t0 = time.time()
        try:
            gc.collect()
            torch.cuda.empty_cache()
            torch.cuda.reset_peak_memory_stats()
            base = torch.cuda.memory_allocated()
            dtype = dtypes[settings.get("dtype", settings.get("precision", "bfloat16"))]
            model = build_model(torch, transformers, args.configs, model_id, dtype,
                                settings.get("attn"))
            torch.cuda.synchronize()
            loaded = torch.cuda.memory_allocated() - base
            out.row(sid, model_id, task, settings, "memory_after_load", loaded)
            if task == "inference":
                model.eval()
                batch, ctx, decode = settings["batch"], settings["context"], settings["decode"]
                ids = torch.randint(0, model.config.vocab_size, (batch, ctx - decode), device="cuda")
                with torch.no_grad():
                    model.generate(ids, max_new_tokens=decode, min_new_tokens=decode,
                                   do_sample=False, pad_token_id=0)
            elif task == "train":
                model.train()
                if settings.get("checkpointing") == "full":
                    model.gradient_checkpointing_enable()
                    if hasattr(model, "enable_input_require_grads"):
                        model.enable_input_require_grads()
                if settings["method"] == "qlora":
                    raise ValueError("qlora rows run with --device cpu (validation/sim4bit.py)")
                if settings["method"] == "lora":
                    lora = peft.LoraConfig(r=settings["rank"], lora_alpha=settings["alpha"],
                                           task_type="CAUSAL_LM")
                    model = peft.get_peft_model(model, lora)
                params = [p for p in model.parameters() if p.requires_grad]
                opt = torch.optim.AdamW(params, lr=1e-5)
                batch, seq = settings["batch"], settings["seq"]
                ids = torch.randint(0, model.config.vocab_size, (batch, seq), device="cuda")
                autocast = settings.get("precision") == "bf16-mixed"
                with torch.autocast("cuda", dtype=torch.bfloat16, enabled=autocast):
                    loss = model(input_ids=ids, labels=ids).loss
                torch.cuda.synchronize()
                out.row(sid, model_id, task, settings, "peak_forward",
                        torch.cuda.max_memory_allocated() - base)
                loss.backward()
                torch.cuda.synchronize()
                out.row(sid, model_id, task, settings, "peak_backward",
                        torch.cuda.max_memory_allocated() - base)
                opt.step()
                opt.zero_grad(set_to_none=True)
                del opt
            torch.cuda.synchronize()
            out.row(sid, model_id, task, settings, "max_memory_allocated",
                    torch.cuda.max_memory_allocated() - base)
            out.row(sid, model_id, task, settings, "max_memory_reserved",
                    torch.cuda.max_memory_reserved())
            del model
            print(f"{sid}: done in {time.time() - t0:.1f}s", flush=True)
        except torch.cuda.OutOfMemoryError as e:
            print(f"{sid}: out of memory ({e})", flush=True)
        except Exception as e:  # keep measuring the other rows
            print(f"{sid}: failed: {type(e).__name__}: {e}", flush=True)


def check_cpu_scenarios(configs):
    """The CPU matrix without torch: every base config exported, ids unique, settings known."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import cpu_scenarios

    problems = []
    for mid, spec in cpu_scenarios.MODELS.items():
        if spec["base"] and not os.path.isfile(
                os.path.join(config_dir(configs, spec["base"]), "config.json")):
            problems.append(f"cpu model {mid}: no exported config for {spec['base']}")
    seen = set()
    for sid, model_id, task, settings in cpu_scenarios.SCENARIOS:
        if sid in seen:
            problems.append(f"{sid}: duplicate scenario id")
        seen.add(sid)
        if model_id not in cpu_scenarios.MODELS:
            problems.append(f"{sid}: model {model_id} not in cpu_scenarios.MODELS")
        if task not in ("inference", "train"):
            problems.append(f"{sid}: unknown task {task}")
        unknown = set(settings) - KNOWN_KEYS
        if unknown:
            problems.append(f"{sid}: unknown settings {sorted(unknown)}")
    return problems


def cpu_versions(torch, transformers):
    v = f"torch {torch.__version__}, transformers {transformers.__version__}"
    try:
        import peft
        v += f", peft {peft.__version__}"
    except ImportError:
        pass
    return v


def measure_cpu(args):
    """Runs each CPU scenario in a child process (fresh allocator per row), writes its rows."""
    import subprocess

    here = os.path.dirname(os.path.abspath(__file__))
    import torch
    import transformers
    import cpu_scenarios

    models_dir = args.models_out or os.path.join(os.path.dirname(os.path.abspath(args.out)),
                                                 "models")
    cpu_scenarios.write_configs(args.configs, models_dir, transformers, args.remote_code)
    versions = cpu_versions(torch, transformers)
    done = set()
    if args.resume and os.path.exists(args.out):
        with open(args.out) as f:
            done = {r["id"] for r in csv.DictReader(f)}
    out = Writer(args.out, None, versions, decimals=4)
    start = time.time()
    for sid, model_id, task, settings in cpu_scenarios.SCENARIOS:
        if args.only and not any(o in sid for o in args.only.split(",")):
            continue
        if sid in done:
            continue
        if time.time() - start > args.budget_s:
            print(f"budget of {args.budget_s}s spent: stopping before {sid}", flush=True)
            break
        cmd = [sys.executable, os.path.join(here, "measure.py"), "--device", "cpu",
               "--worker", sid, "--configs", models_dir, "--pydeps", args.pydeps or "",
               "--nice", "0"]  # the child inherits this process's niceness: no second increment
        if args.traces:
            cmd += ["--traces", args.traces]
        if args.remote_code:
            cmd += ["--remote-code", args.remote_code]
        t0 = time.time()
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=args.row_timeout_s)
        except subprocess.TimeoutExpired:
            print(f"{sid}: timed out after {args.row_timeout_s}s", flush=True)
            continue
        lines = [ln for ln in p.stdout.splitlines() if ln.startswith("{")]
        if p.returncode != 0 or not lines:
            tail = (p.stderr or "").strip().splitlines()[-3:]
            print(f"{sid}: failed (rc {p.returncode}): {' | '.join(tail)}", flush=True)
            continue
        r = json.loads(lines[-1])
        s = dict(settings, device="cpu")
        layers = cpu_scenarios.MODELS[model_id]["notes"]
        note = "; ".join([layers, f"peak in {r['peak_stage']}"] + r.get("notes", []))
        for measure in ("memory_after_load", "peak_forward", "peak_backward",
                        "max_memory_allocated"):
            if r.get(measure) is not None:
                out.row(sid, model_id, task, s, measure, r[measure], note)
        print(f"{sid}: {r['max_memory_allocated'] / 2**20:.1f} MiB peak in {r['peak_stage']}, "
              f"{time.time() - t0:.1f}s", flush=True)


def setup_cpu_process(args):
    """Thread counts and priority for the CPU harness (this process and its children only)."""
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = str(args.threads)
    try:
        os.nice(args.nice)
    except OSError:
        pass
    here = os.path.dirname(os.path.abspath(__file__))
    if here not in sys.path:
        sys.path.insert(0, here)
    import pydeps
    return pydeps.activate(args.pydeps or os.environ.get("MEMFIT_PYDEPS", ""))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--configs", help="memfit models --export-configs DIR")
    parser.add_argument("--out", default="validation/results/measured.csv")
    parser.add_argument("--dry-run", action="store_true", help="check scenarios and configs only")
    parser.add_argument("--only", default="", help="run scenarios whose id contains this")
    parser.add_argument("--budget-s", type=float, default=420.0, help="stop starting new rows after")
    parser.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    parser.add_argument("--pydeps", default="", help="cpu: folder with transformers, "
                        "huggingface_hub, accelerate, peft sources (or env MEMFIT_PYDEPS)")
    parser.add_argument("--self-check", action="store_true",
                        help="cpu: check the peak-allocation method on tensors of known size")
    parser.add_argument("--traces", default="", help="cpu: folder for per-row JSON summaries "
                        "of the blocks alive at the peak")
    parser.add_argument("--models-out", default="", help="cpu: where the built configs are "
                        "written (default: the --out file's folder/models, as memfit validate reads)")
    parser.add_argument("--remote-code", default=os.environ.get("MEMFIT_REMOTE_CODE", ""),
                        help="cpu: folder with the remote modeling code of cpu_scenarios.MODELS "
                        "entries with a 'remote' key, one package folder each (validation/README.md)")
    parser.add_argument("--threads", type=int, default=1, help="cpu: OMP/OpenBLAS threads")
    parser.add_argument("--nice", type=int, default=10, help="cpu: niceness increment")
    parser.add_argument("--row-timeout-s", type=float, default=600.0)
    parser.add_argument("--resume", action="store_true",
                        help="cpu: skip scenario ids already in --out")
    parser.add_argument("--worker", default="", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.device == "cpu" and (args.self_check or args.worker):
        setup_cpu_process(args)
        if args.self_check:
            import cpu_memory
            failures = cpu_memory.self_check()
            print("self-check: " + ("ok" if not failures else f"{len(failures)} failed"))
            return 1 if failures else 0
        import cpu_run
        r = cpu_run.run(args.worker, args.configs, args.traces or None, args.remote_code)
        print(json.dumps({k: v for k, v in r.items() if k != "live_at_peak"}))
        return 0
    if not args.configs:
        parser.error("--configs is required")
    problems = check_scenarios(args.configs) + check_cpu_scenarios(args.configs)
    for p in problems:
        print(f"measure.py: {p}", file=sys.stderr)
    if problems:
        return 1
    if args.dry_run:
        import cpu_scenarios
        print(f"{len(SCENARIOS)} scenarios and {len(cpu_scenarios.SCENARIOS)} CPU scenarios "
              f"checked: configs present, settings known")
        return 0
    if args.device == "cpu":
        setup_cpu_process(args)
        measure_cpu(args)
        return 0
    measure(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
