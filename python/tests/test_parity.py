"""memfit's functions answer exactly what the CLI prints with --format json: the keywords become
the same request, with the request layer's defaults (no second implementation in Python)."""

import pytest

import memfit


def test_every_catalog_model_estimate_memory_is_the_cli_json(catalog_ids, cli_json):
    assert len(catalog_ids) >= 100, catalog_ids
    for model in catalog_ids:
        mine = memfit.estimate_memory(model, offline=True).to_dict()
        assert mine == cli_json("estimate-memory", model, {"offline": True}), model
        assert mine["schema"] == "memfit.estimate-memory/1"
        assert isinstance(mine["resident_bytes"], int) and mine["resident_bytes"] > 0, model


# (function, command, model, keywords): the CLI gets the same words as flags.
SETTINGS = [
    ("inference", "inference", "Qwen/Qwen3-8B", {"context": 32768, "batch": 4}),
    ("inference", "inference", "meta-llama/Llama-3.1-8B",
     {"quant": "bnb-nf4", "kv_dtype": "fp8", "gpu": "rtx4090"}),
    ("inference", "inference", "deepseek-ai/DeepSeek-V3",
     {"engine": "vllm", "tp": 8, "gpu": "h200", "context": 131072}),
    ("inference", "inference", "mistralai/Mistral-7B-v0.3",
     {"curve": True, "curve_gpu": ["rtx4090", "h100"]}),
    ("inference", "inference", "openai/gpt-oss-20b", {"engine": "sglang", "gpu": "h100", "batch": 16}),
    ("train", "train", "meta-llama/Llama-3.1-8B",
     {"method": "qlora", "optimizer": "paged-adamw-8bit", "context": 2048,
      "checkpointing": "full"}),
    ("train", "train", "Qwen/Qwen2.5-1.5B", {"method": "full", "gpu": "h100", "batch": 8}),
    ("train", "train", "google/gemma-2-2b", {"method": "lora", "optimizer": "adamw-8bit"}),
    ("fit", "fit", "meta-llama/Llama-3.1-70B", {"gpu": ["rtx4090", "rtx4090"], "ram": "64GiB",
                                                "task": "inference"}),
    ("fit", "fit", "Qwen/Qwen3-235B-A22B", {"engine": "vllm", "gpu": "8xh200"}),
    ("fit", "fit", "Qwen/Qwen3-8B", {"engine": "sglang", "gpu": "h100", "search": True,
                                     "context": 32768, "batch": 16}),
    ("fit", "fit", "microsoft/phi-4", {"task": "train", "gpu": "a100"}),
    ("estimate_memory", "estimate-memory", "bert-base-cased", {"dtypes": ["float32", "int8"]}),
    ("estimate_memory", "estimate-memory", "openai-community/gpt2", {"accelerate": True}),
    ("inspect", "inspect", "Qwen/Qwen3-0.6B", {}),
    ("gpus", "gpus", None, {"min_memory": "24GiB", "vendor": "nvidia"}),
    ("models", "models", None, {"family": "llama"}),
]


@pytest.mark.parametrize("function,command,model,keywords", SETTINGS,
                         ids=[f"{s[0]}-{s[2]}-{'-'.join(s[3])}" for s in SETTINGS])
def test_settings_are_the_cli_json(function, command, model, keywords, cli_json):
    call = getattr(memfit, function)
    args = ([model] if model else [])
    kwargs = dict(keywords)
    if command not in ("gpus", "models"):
        kwargs["offline"] = True
    mine = call(*args, **kwargs).to_dict()
    assert mine == cli_json(command, model, kwargs)


def test_str_is_the_cli_table(cli):
    code, out, _ = cli("inference", "Qwen/Qwen3-8B", "--context", "32768", "--offline")
    assert code == 0
    assert str(memfit.inference("Qwen/Qwen3-8B", context=32768, offline=True)) == out


def test_markdown_and_csv_are_the_cli_formats(cli):
    result = memfit.estimate_memory("bert-base-cased", offline=True)
    for fmt, text in (("markdown", result.to_markdown()), ("csv", result.to_csv())):
        code, out, _ = cli("estimate-memory", "bert-base-cased", "--offline", "--format", fmt)
        assert code == 0
        assert text == out, fmt


def test_defaults_are_the_request_layers():
    # No keyword and every keyword None give the same request: Python adds no defaults.
    plain = memfit.inference("Qwen/Qwen3-8B", offline=True)
    nones = memfit.inference("Qwen/Qwen3-8B", offline=True, context=None, batch=None, gpu=None)
    assert plain.request == {"model": "Qwen/Qwen3-8B", "offline": True}
    assert nones.to_dict() == plain.to_dict()
