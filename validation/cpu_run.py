"""One CPU scenario, profiled: build the model from its config (random weights), run the task,
return the allocation figures. Run by measure.py in a child process per row (`--worker ID`),
so every row starts from a fresh allocator and the rows cannot disturb each other.
"""

import json
import os
import time

import cpu_memory
import cpu_scenarios

ENCODERS = {"bert": "masked-lm", "vit": "image"}
STEPS = 2


def _task_kind(config):
    if config.model_type in ENCODERS:
        return ENCODERS[config.model_type]
    if getattr(config, "is_encoder_decoder", False):
        return "seq2seq"
    return "causal"


def _inputs(torch, config, kind, batch, seq, dtype, labels, target=None):
    g = torch.Generator().manual_seed(0)
    if kind == "image":
        size = config.image_size
        x = {"pixel_values": torch.randn(batch, config.num_channels, size, size, generator=g,
                                         dtype=dtype)}
        if labels:
            x["labels"] = torch.randint(0, config.num_labels, (batch,), generator=g)
        return x
    ids = torch.randint(1, config.vocab_size, (batch, seq), generator=g)
    x = {"input_ids": ids}
    if labels:
        x["labels"] = ids.clone() if kind != "seq2seq" else torch.randint(
            1, config.vocab_size, (batch, target or seq), generator=g)
    return x


def _patch_fsdp_probe(transformers):
    """generate() asks `is_fsdp_managed_module(model)`, which imports torch.distributed.fsdp;
    Debian's torch 1.13 on Python 3.11 fails on that import (a dataclass with a mutable default
    in torch.distributed._shard). The harness never uses FSDP: answer False."""
    import transformers.generation.utils as gen
    import transformers.integrations.fsdp as fsdp

    never = lambda module: False  # noqa: E731
    fsdp.is_fsdp_managed_module = never
    gen.is_fsdp_managed_module = never


def _patch_dynamo_mark(torch):
    """transformers 4.48's static caches (StaticCache, HybridCache for Gemma-2, MambaCache) call
    `torch._dynamo.mark_static_address(tensor)` on the buffers they preallocate: a hint for
    torch.compile with no effect on memory. torch 1.13 has no torch._dynamo: give it a module
    whose mark_static_address does nothing (this process only)."""
    if hasattr(torch, "_dynamo"):
        return
    import types

    torch._dynamo = types.SimpleNamespace(mark_static_address=lambda tensor: None)


def run(sid, configs, trace_dir=None, remote_dir=""):
    import torch
    import transformers

    _patch_fsdp_probe(transformers)
    _patch_dynamo_mark(torch)

    torch.set_num_threads(1)
    spec = next(s for s in cpu_scenarios.SCENARIOS if s[0] == sid)
    _, model_id, task, settings = spec
    folder = cpu_scenarios.folder_for(configs, model_id)
    spec = cpu_scenarios.MODELS[model_id]
    notes = []
    if "remote" in spec:  # the model's own modeling code (trust_remote_code), read locally
        config = cpu_scenarios.config_class(spec, transformers, remote_dir).from_pretrained(folder)
        config._attn_implementation = "eager"
        modeling = cpu_scenarios.remote_module(spec, "modeling", remote_dir)
        cls = getattr(modeling, config.architectures[0])
        notes += ["remote code " + r for r in cpu_scenarios.remote_sha256(spec, remote_dir)]
    else:
        config = transformers.AutoConfig.from_pretrained(folder)
        cls = getattr(transformers, config.architectures[0])
    kind = _task_kind(config)
    dtypes = {"float32": torch.float32, "bfloat16": torch.bfloat16, "fp32": torch.float32,
              "bf16": torch.bfloat16, "bf16-mixed": torch.float32}
    dtype = dtypes[settings.get("dtype", settings.get("precision"))]
    mixed = settings.get("precision") == "bf16-mixed"
    t0 = time.time()
    with cpu_memory.profiled() as h:
        with cpu_memory.stage("load"):
            model = cls._from_config(config, torch_dtype=dtype, attn_implementation="eager")
            if settings.get("method") == "qlora":
                # QLoRA's base quantized at load, as from_pretrained with a 4-bit
                # BitsAndBytesConfig does: the stand-in of validation/sim4bit.py.
                import sim4bit

                quantized = sim4bit.replace_linears(model)
                notes.append(f"bitsandbytes stand-in (validation/sim4bit.py, the memory of "
                             f"bnb >= 0.43.2 NF4 without double quant): {quantized} weights "
                             f"4-bit, the head and norms {settings['precision']}")
        if task == "inference":
            model.eval()
            batch, ctx = settings["batch"], settings["context"]
            decode = settings.get("decode", 0)
            calls = {"n": 0}
            handles = []

            def pre(mod, args):
                calls["n"] += 1
                name = "prefill" if calls["n"] == 1 else "decode"
                handles.append(torch.ops.profiler._record_function_enter_new(
                    cpu_memory.STAGE_PREFIX + name, None))

            def post(mod, args, out):
                torch.ops.profiler._record_function_exit._RecordFunction(handles.pop())

            hooks = [model.register_forward_pre_hook(pre), model.register_forward_hook(post)]
            with cpu_memory.stage("run"), torch.no_grad():
                if decode:
                    x = _inputs(torch, config, kind, batch, ctx - decode, dtype, False)
                    model.generate(**x, max_new_tokens=decode, min_new_tokens=decode,
                                   do_sample=False, pad_token_id=0)
                else:
                    x = _inputs(torch, config, kind, batch, ctx, dtype, False)
                    model(**x)
            for hk in hooks:
                hk.remove()
        else:
            import peft

            model.train()
            with cpu_memory.stage("prepare"):
                if settings.get("checkpointing") == "full":
                    model.gradient_checkpointing_enable()
                    if hasattr(model, "enable_input_require_grads"):
                        model.enable_input_require_grads()
                if settings["method"] in ("lora", "qlora"):
                    task_type = {"causal": "CAUSAL_LM", "seq2seq": "SEQ_2_SEQ_LM"}.get(kind)
                    lora = peft.LoraConfig(r=settings["rank"], lora_alpha=settings["alpha"],
                                           task_type=task_type)
                    model = peft.get_peft_model(model, lora)
                params = [p for p in model.parameters() if p.requires_grad]
                foreach = settings.get("foreach") == "true"
                opt = torch.optim.AdamW(params, lr=1e-5, foreach=foreach)
                # seq2seq: the labels are the decoder's targets (T5 shifts them right into
                # decoder_input_ids), decoder_tokens long (default seq).
                x = _inputs(torch, config, kind, settings["batch"], settings["seq"], dtype, True,
                            settings.get("decoder_tokens"))
            # Two steps: torch creates AdamW's states lazily in the first step(), so only the
            # second step's forward and backward run with the states allocated (steady state).
            for _ in range(STEPS):
                with cpu_memory.stage("forward"):
                    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=mixed):
                        loss = model(**x).loss
                with cpu_memory.stage("backward"):
                    loss.backward()
                with cpu_memory.stage("step"):
                    opt.step()
                with cpu_memory.stage("zero_grad"):
                    opt.zero_grad(set_to_none=True)
                del loss
            notes.append(f"{STEPS} optimizer steps, peak over both")
            notes.append(f"trainable {sum(p.numel() for p in params)}")
    tr = h.trace
    load_end = next(e for s, e, n in tr.stages if n == "load")
    # The peak is taken after the model is built: building with random weights has transients
    # that from_pretrained does not (e.g. a tied head is created untied, then tied: + V x h).
    r = tr.analyse(after_ns=load_end)
    loaded = tr.total_at(load_end)
    sp = r["stage_peaks"]
    cum, out = 0, {}
    load_peak = sp.pop("load", 0)
    notes.append(f"load-stage peak {load_peak} B (random init, excluded)")
    order = ["prepare", "forward", "backward", "step", "zero_grad", "run", "prefill",
             "decode"]
    for st in order:
        if st in sp:
            cum = max(cum, sp[st], loaded)
            out[st] = cum
    params_total = sum(p.numel() for p in model.parameters())
    result = {
        "id": sid, "model": model_id, "task": task, "settings": settings,
        "memory_after_load": loaded, "max_memory_allocated": r["peak"],
        "peak_forward": out.get("forward"), "peak_backward": out.get("backward"),
        "stage_peaks": sp, "peak_stage": r["peak_stage"], "peak_ops": r["peak_ops"][-4:],
        "parameters": params_total, "seconds": round(time.time() - t0, 1),
        "events": r["events"], "ignored_frees": r["ignored_frees"], "notes": notes,
        "live_at_peak": cpu_memory.group_live(r["live_at_peak"], top=30),
        "live_at_stage_peaks": {st: cpu_memory.group_live(b, top=20)
                                for st, b in r["live_at_stage_peaks"].items()
                                if st in ("forward", "backward", "step", "prefill", "decode")},
    }
    if trace_dir:
        os.makedirs(trace_dir, exist_ok=True)
        with open(os.path.join(trace_dir, sid + ".json"), "w") as f:
            json.dump(result, f, indent=1)
            f.write("\n")
    return result
