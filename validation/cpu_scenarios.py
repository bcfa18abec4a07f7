"""The CPU scenario matrix: models (catalog configs with fewer layers, or configs made from
transformers' config classes) and rows. Pure data plus the config writer; no torch needed.

Model ids name the config actually built: `<catalog id>-L<n>` is the catalog config with
`num_hidden_layers` (or the family's key) set to n, other overrides are in the suffix and in
MODELS[...]["notes"]. `write_configs()` writes each as transformers sees it (`config.to_dict()`
after loading, so defaults the catalog file leaves out, e.g. GPT-2's 0.1 dropouts, are explicit)
into `<dir>/<org>__<name>/config.json`, the layout `memfit validate --models` reads.
"""

import hashlib
import importlib
import json
import os
import sys

# id -> spec. base: catalog id exported by `memfit models --export-configs` (None: made from the
# config class `config_class` with `overrides`). overrides: keys set on top of the base.
# remote: the model's own modeling code (`trust_remote_code` on the Hub), read from
# `<--remote-code DIR>/<package>/` (never vendored here: validation/README.md names each file's
# source and sha256); config_class and the model class are taken from that package.
MODELS = {
    "meta-llama/Llama-3.2-1B-L2": {
        "base": "meta-llama/Llama-3.2-1B", "overrides": {"num_hidden_layers": 2},
        "notes": "Llama-3.2-1B config, 16 -> 2 layers (GQA 32/8, tied embeddings)"},
    "Qwen/Qwen2.5-0.5B-L2": {
        "base": "Qwen/Qwen2.5-0.5B", "overrides": {"num_hidden_layers": 2},
        "notes": "Qwen2.5-0.5B config, 24 -> 2 layers (GQA 14/2, qkv bias, tied embeddings)"},
    "mistralai/Mistral-7B-v0.1-L1-sw128": {
        "base": "mistralai/Mistral-7B-v0.1",
        "overrides": {"num_hidden_layers": 1, "sliding_window": 128},
        "notes": "Mistral-7B-v0.1 config, 32 -> 1 layer, sliding_window 4096 -> 128 (shorter than "
                 "the context)"},
    "openai-community/gpt2": {
        "base": "openai-community/gpt2", "overrides": {},
        "notes": "GPT-2 small, all 12 layers; dropouts 0.1 (transformers' GPT2Config defaults: the "
                 "catalog file leaves them out)"},
    "openai-community/gpt2-nodrop": {
        "base": "openai-community/gpt2",
        "overrides": {"attn_pdrop": 0.0, "embd_pdrop": 0.0, "resid_pdrop": 0.0},
        "notes": "GPT-2 small with every dropout 0 (to isolate the dropout masks)"},
    "facebook/opt-1.3b-L2": {
        "base": "facebook/opt-1.3b", "overrides": {"num_hidden_layers": 2},
        "notes": "OPT-1.3b config, 24 -> 2 layers (dropout 0.1, tied embeddings)"},
    "bigscience/bloom-560m-L2": {
        "base": "bigscience/bloom-560m", "overrides": {"n_layer": 2},
        "notes": "BLOOM-560m config, 24 -> 2 layers (ALiBi, 250880 vocabulary, tied)"},
    "microsoft/phi-1_5-L2": {
        "base": None, "config_class": "PhiConfig",
        "overrides": {"num_hidden_layers": 2, "architectures": ["PhiForCausalLM"]},
        "notes": "PhiConfig defaults (phi-1_5 dimensions: h 2048, f 8192, 32 heads, partial rotary "
                 "0.5, vocab 51200, untied head), 24 -> 2 layers"},
    "mistralai/Mixtral-8x7B-v0.1-L1": {
        "base": "mistralai/Mixtral-8x7B-v0.1", "overrides": {"num_hidden_layers": 1},
        "notes": "Mixtral-8x7B config, 32 -> 1 layer (8 experts, top 2)"},
    "mistralai/Mixtral-8x7B-v0.1-tiny": {
        "base": "mistralai/Mixtral-8x7B-v0.1",
        "overrides": {"num_hidden_layers": 2, "hidden_size": 1024, "intermediate_size": 3584,
                      "num_attention_heads": 8, "num_key_value_heads": 2},
        "notes": "Mixtral-8x7B config scaled for full training on CPU: 2 layers, hidden 1024, "
                 "intermediate 3584, 8/2 heads (8 experts, top 2, vocab 32000 kept)"},
    "google/gemma-2-2b-L2": {
        "base": "google/gemma-2-2b", "overrides": {"num_hidden_layers": 2},
        "notes": "Gemma-2-2b config, 26 -> 2 layers (sliding window 4096 on even layers, "
                 "softcapping, vocab 256000, tied)"},
    "google/gemma-2-2b-tiny-sw128": {
        "base": "google/gemma-2-2b",
        "overrides": {"num_hidden_layers": 4, "hidden_size": 512, "intermediate_size": 2048,
                      "num_attention_heads": 8, "num_key_value_heads": 4, "head_dim": 64,
                      "vocab_size": 32000, "sliding_window": 128},
        "notes": "Gemma-2-2b config scaled down so that attention, cache and logits show: 4 "
                 "layers (sliding window 128 on even layers, shorter than the context), hidden "
                 "512, intermediate 2048, 8/4 heads of 64, vocab 32000; soft-capping kept"},
    "deepseek-ai/DeepSeek-V3-tiny": {
        "base": None, "config_class": "DeepseekV3Config",
        "remote": {"package": "deepseek_v3", "modeling": "modeling_deepseek",
                   "configuration": "configuration_deepseek"},
        "overrides": {"vocab_size": 32000, "hidden_size": 512, "intermediate_size": 1536,
                      "moe_intermediate_size": 256, "num_hidden_layers": 2,
                      "first_k_dense_replace": 1, "n_routed_experts": 8,
                      "num_experts_per_tok": 2, "n_group": 2, "topk_group": 1,
                      "n_shared_experts": 1, "num_attention_heads": 8,
                      "num_key_value_heads": 8, "q_lora_rank": 192, "kv_lora_rank": 128,
                      "qk_rope_head_dim": 32, "qk_nope_head_dim": 64, "v_head_dim": 64,
                      "max_position_embeddings": 4096, "rope_scaling": None,
                      "num_nextn_predict_layers": 0,
                      "architectures": ["DeepseekV3ForCausalLM"]},
        "notes": "DeepSeek-V3's own modeling code (remote code; MLA + noaux_tc MoE), scaled "
                 "down: 2 layers (1 dense, 1 MoE with 8 routed experts top 2 in 2 groups + 1 "
                 "shared), hidden 512, 8 heads, q_lora 192, kv_lora 128, nope/rope/v 64/32/64, "
                 "vocab 32000, untied"},
    "google-bert/bert-base-cased-L4": {
        "base": "google-bert/bert-base-cased", "overrides": {"num_hidden_layers": 4},
        "notes": "BERT-base-cased (BertForMaskedLM), 12 -> 4 layers; dropouts 0.1 (BertConfig "
                 "defaults)"},
    "google-t5/t5-small": {
        "base": "google-t5/t5-small",
        "overrides": {"decoder_start_token_id": 0, "pad_token_id": 0, "eos_token_id": 1},
        "notes": "T5-small, all 6+6 layers (dropout_rate 0.1, tied embeddings; t5-small's "
                 "decoder_start/pad 0 and eos 1, which the catalog file leaves out)"},
    "google-t5/t5-small-L2": {
        "base": "google-t5/t5-small",
        "overrides": {"num_layers": 2, "num_decoder_layers": 2, "decoder_start_token_id": 0,
                      "pad_token_id": 0, "eos_token_id": 1},
        "notes": "T5-small, 6+6 -> 2+2 layers (dropout_rate 0.1, tied embeddings; decoder_start/"
                 "pad 0 and eos 1 as google-t5/t5-small)"},
    "google/vit-base-patch16-224-L4": {
        "base": None, "config_class": "ViTConfig",
        "overrides": {"num_hidden_layers": 4, "num_labels": 1000,
                      "architectures": ["ViTForImageClassification"]},
        "notes": "ViTConfig defaults (ViT-B/16 at 224: h 768, 12 heads, 197 tokens, dropout 0), "
                 "12 -> 4 layers, 1000 labels"},
    "ibm-ai-platform/Bamba-tiny": {
        "base": None, "config_class": "BambaConfig",
        "overrides": {"num_hidden_layers": 4, "attn_layer_indices": [2], "hidden_size": 512,
                      "intermediate_size": 1024, "num_attention_heads": 8,
                      "num_key_value_heads": 2, "vocab_size": 32000, "mamba_n_heads": 16,
                      "mamba_d_head": 64, "architectures": ["BambaForCausalLM"]},
        "notes": "BambaConfig defaults (Mamba-2 d_state 256, d_conv 4, expand 2, 1 group, chunk "
                 "256, partial rotary 0.5, untied head) scaled down: 4 layers with attention on "
                 "layer 2 only, hidden 512, intermediate 1024, 8/2 heads, 16 Mamba heads of 64, "
                 "vocab 32000; BambaMixer's torch_forward (no mamba_ssm kernels on CPU)"},
}

# Settings keys as in measure.py (KNOWN_KEYS) plus: device, foreach (AdamW foreach=True/False),
# layers (built layer count, also in the model id).
S = dict  # brevity


def _inf(model, sid, dtype, ctx=256, decode=4, batch=1):
    return (sid, model, "inference", S(dtype=dtype, batch=batch, context=ctx, decode=decode,
                                        attn="eager"))


def _fwd(model, sid, dtype, seq=256, batch=2):
    # one forward pass (encoders, ViT): no generate()
    return (sid, model, "inference", S(dtype=dtype, batch=batch, context=seq, attn="eager"))


def _tr(model, sid, precision, seq=256, batch=2, ckpt="none", foreach=False, method="full",
        rank=16, decoder_tokens=None):
    s = S(method=method)
    if method == "lora":
        s.update(rank=rank, alpha=2 * rank)
    s.update(precision=precision, optimizer="adamw", foreach=str(foreach).lower(), batch=batch,
             seq=seq, attn="eager", checkpointing=ckpt)
    if decoder_tokens:
        s.update(decoder_tokens=decoder_tokens)  # encoder-decoder: target tokens (default seq)
    return (sid, model, "train", s)


Q = "Qwen/Qwen2.5-0.5B-L2"
LL = "meta-llama/Llama-3.2-1B-L2"
MI = "mistralai/Mistral-7B-v0.1-L1-sw128"
G2 = "openai-community/gpt2"
G2N = "openai-community/gpt2-nodrop"
OPT = "facebook/opt-1.3b-L2"
BL = "bigscience/bloom-560m-L2"
PHI = "microsoft/phi-1_5-L2"
MX = "mistralai/Mixtral-8x7B-v0.1-L1"
MXT = "mistralai/Mixtral-8x7B-v0.1-tiny"
GM = "google/gemma-2-2b-L2"
DS = "deepseek-ai/DeepSeek-V3-tiny"
GMT = "google/gemma-2-2b-tiny-sw128"
BE = "google-bert/bert-base-cased-L4"
T5 = "google-t5/t5-small"
T5L2 = "google-t5/t5-small-L2"
VIT = "google/vit-base-patch16-224-L4"
BA = "ibm-ai-platform/Bamba-tiny"

SCENARIOS = [
    # loads (every row also records memory_after_load)
    # inference: prefill + decode with generate() (decoders, T5), one forward (BERT, ViT)
    _inf(Q, "c-qw-inf-fp32", "float32"),
    _inf(Q, "c-qw-inf-bf16", "bfloat16"),
    _inf(Q, "c-qw-inf-fp32-b2-512", "float32", ctx=512, batch=2),
    _inf(LL, "c-ll-inf-fp32", "float32"),
    _inf(LL, "c-ll-inf-bf16", "bfloat16"),
    _inf(MI, "c-mi-inf-fp32", "float32"),
    _inf(MI, "c-mi-inf-bf16", "bfloat16"),
    _inf(G2, "c-g2-inf-fp32", "float32"),
    _inf(G2, "c-g2-inf-bf16", "bfloat16"),
    _inf(OPT, "c-opt-inf-fp32", "float32"),
    _inf(OPT, "c-opt-inf-bf16", "bfloat16"),
    _inf(BL, "c-bl-inf-fp32", "float32"),
    _inf(BL, "c-bl-inf-bf16", "bfloat16"),
    _inf(PHI, "c-phi-inf-fp32", "float32"),
    _inf(PHI, "c-phi-inf-bf16", "bfloat16"),
    _inf(MXT, "c-mxt-inf-fp32", "float32"),
    _inf(T5, "c-t5-inf-fp32", "float32"),
    _fwd(BE, "c-be-fwd-fp32", "float32"),
    _fwd(BE, "c-be-fwd-bf16", "bfloat16"),
    _fwd(VIT, "c-vit-fwd-fp32", "float32", seq=197),
    # training: forward + backward + AdamW step, model.train() (config dropout)
    _tr(Q, "c-qw-tr-fp32", "fp32"),
    _tr(Q, "c-qw-tr-fp32-foreach", "fp32", foreach=True),
    _tr(Q, "c-qw-tr-fp32-ckpt", "fp32", ckpt="full"),
    _tr(Q, "c-qw-tr-bf16m", "bf16-mixed"),
    _tr(Q, "c-qw-tr-bf16m-ckpt", "bf16-mixed", ckpt="full"),
    _tr(Q, "c-qw-tr-bf16", "bf16"),
    _tr(Q, "c-qw-lora-bf16", "bf16", method="lora"),
    _tr(Q, "c-qw-lora-bf16-ckpt", "bf16", method="lora", ckpt="full"),
    _tr(G2, "c-g2-tr-fp32", "fp32"),
    _tr(G2N, "c-g2n-tr-fp32", "fp32"),
    _tr(G2, "c-g2-tr-fp32-foreach", "fp32", foreach=True),
    _tr(G2, "c-g2-tr-fp32-ckpt", "fp32", ckpt="full"),
    _tr(G2, "c-g2-tr-bf16m", "bf16-mixed"),
    _tr(G2, "c-g2-lora-bf16", "bf16", method="lora"),
    _tr(OPT, "c-opt-tr-fp32", "fp32", batch=1),
    _tr(OPT, "c-opt-tr-bf16m", "bf16-mixed", batch=1),
    _tr(OPT, "c-opt-lora-bf16", "bf16", method="lora"),
    _tr(BL, "c-bl-tr-fp32", "fp32", batch=1),
    _tr(BL, "c-bl-lora-bf16", "bf16", method="lora"),
    _tr(PHI, "c-phi-lora-fp32", "fp32", method="lora"),
    _tr(MXT, "c-mxt-tr-fp32", "fp32", batch=1),
    _tr(MXT, "c-mxt-tr-bf16m", "bf16-mixed", batch=1),
    _tr(BE, "c-be-tr-fp32", "fp32"),
    _tr(BE, "c-be-tr-fp32-foreach", "fp32", foreach=True),
    _tr(BE, "c-be-tr-fp32-ckpt", "fp32", ckpt="full"),
    _tr(BE, "c-be-tr-bf16m", "bf16-mixed"),
    _tr(BE, "c-be-lora-bf16", "bf16", method="lora"),
    _tr(T5, "c-t5-tr-fp32", "fp32"),
    _tr(T5, "c-t5-tr-bf16m", "bf16-mixed"),
    _tr(T5, "c-t5-tr-fp32-ckpt", "fp32", ckpt="full"),
    _tr(T5, "c-t5-lora-bf16", "bf16", method="lora"),
    _tr(VIT, "c-vit-tr-fp32", "fp32", seq=197, batch=4),
    _tr(VIT, "c-vit-tr-bf16m", "bf16-mixed", seq=197, batch=4),
    _tr(VIT, "c-vit-tr-fp32-ckpt", "fp32", seq=197, batch=4, ckpt="full"),
    # longer prompts: the attention scores (eager) and the all-token logits grow with them
    _inf(Q, "c-qw-inf-fp32-2k", "float32", ctx=2048),
    _inf(Q, "c-qw-inf-bf16-2k", "bfloat16", ctx=2048),
    _inf(G2, "c-g2-inf-fp32-1k", "float32", ctx=1024),
    _inf(BL, "c-bl-inf-bf16-1k", "bfloat16", ctx=1024),
    # slow on CPU (bf16 matmuls without native bf16, big layers): last
    _inf(MX, "c-mx-inf-bf16", "bfloat16"),
    _inf(GM, "c-gm-inf-bf16", "bfloat16"),
    _inf(GM, "c-gm-inf-fp32", "float32"),
    _tr(PHI, "c-phi-lora-bf16", "bf16", method="lora"),
    _tr(LL, "c-ll-lora-bf16", "bf16", method="lora"),
    _tr(LL, "c-ll-lora-bf16-ckpt", "bf16", method="lora", ckpt="full"),
    _tr(MI, "c-mi-lora-bf16", "bf16", method="lora", batch=1),
    _tr(MX, "c-mx-lora-bf16", "bf16", method="lora", batch=1, seq=128),
    _tr(GM, "c-gm-lora-bf16", "bf16", method="lora", batch=1),
    # T5 (encoder-decoder): 2+2 layers; decoder (target) tokens apart from the encoder's
    _tr(T5L2, "c-t5l2-tr-fp32-d64", "fp32", decoder_tokens=64),
    _tr(T5L2, "c-t5l2-tr-bf16m-d64", "bf16-mixed", decoder_tokens=64),
    _tr(T5L2, "c-t5l2-tr-bf16", "bf16", decoder_tokens=128),
    _tr(T5L2, "c-t5l2-tr-fp32-ckpt", "fp32", ckpt="full", decoder_tokens=128),
    _tr(T5L2, "c-t5l2-lora-fp32", "fp32", method="lora", decoder_tokens=128),
    _tr(T5L2, "c-t5l2-lora-bf16-ckpt", "bf16", method="lora", ckpt="full"),
    # MLA + MoE with DeepSeek-V3's own (remote) code: inference only (its MoE and gate assert
    # eval mode: `moe_infer` runs only when not self.training)
    _inf(DS, "c-ds3-inf-fp32", "float32"),
    _inf(DS, "c-ds3-inf-bf16", "bfloat16"),
    _inf(DS, "c-ds3-inf-fp32-b2-1k", "float32", ctx=1024, batch=2),
    # Gemma-2 scaled down: hybrid cache with sliding layers shorter than the context,
    # attention and final-logit soft-capping in training
    _inf(GMT, "c-gmt-inf-fp32-1k", "float32", ctx=1024),
    _inf(GMT, "c-gmt-inf-bf16-1k", "bfloat16", ctx=1024),
    _tr(GMT, "c-gmt-tr-fp32", "fp32"),
    _tr(GMT, "c-gmt-tr-bf16m", "bf16-mixed"),
    # larger last: full bf16-mixed Llama (262M-parameter tied embedding)
    _tr(LL, "c-ll-tr-bf16m", "bf16-mixed", batch=1),
    # hybrid Mamba-2 + attention (Bamba, BambaMixer's torch path): recurrent state + one KV layer
    _inf(BA, "c-ba-inf-fp32", "float32", ctx=512),
    _inf(BA, "c-ba-inf-bf16", "bfloat16", ctx=512),
    _tr(BA, "c-ba-tr-fp32", "fp32", seq=512, batch=1),
]


def folder_for(configs, model_id):
    return os.path.join(configs, model_id.replace("/", "__"))


def remote_module(spec, which, remote_dir):
    """The remote-code module `which` ("modeling" or "configuration") of a MODELS spec."""
    remote = spec["remote"]
    if not remote_dir or not os.path.isdir(os.path.join(remote_dir, remote["package"])):
        raise FileNotFoundError(f"remote code: no folder {remote['package']} in --remote-code "
                                f"{remote_dir or '(not given)'} (validation/README.md)")
    if remote_dir not in sys.path:
        sys.path.insert(0, remote_dir)
    return importlib.import_module(remote["package"] + "." + remote[which])


def remote_sha256(spec, remote_dir):
    """`file sha256` of the remote modeling and configuration files (for the row's notes)."""
    remote = spec["remote"]
    out = []
    for which in ("modeling", "configuration"):
        path = os.path.join(remote_dir, remote["package"], remote[which] + ".py")
        with open(path, "rb") as f:
            out.append(f"{remote[which]}.py sha256 {hashlib.sha256(f.read()).hexdigest()}")
    return out


def config_class(spec, transformers, remote_dir):
    if "remote" in spec:
        return getattr(remote_module(spec, "configuration", remote_dir), spec["config_class"])
    return getattr(transformers, spec["config_class"])


def write_configs(catalog_dir, out_dir, transformers, remote_dir=""):
    """Writes every MODELS config as transformers resolves it; returns {id: path}. A model whose
    remote code is absent is skipped (its rows fail with the reason)."""
    paths = {}
    for mid, spec in MODELS.items():
        if spec["base"]:
            src = folder_for(catalog_dir, spec["base"])
            config = transformers.AutoConfig.from_pretrained(src)
        else:
            try:
                config = config_class(spec, transformers, remote_dir)()
            except FileNotFoundError as e:
                print(f"{mid}: {e}", flush=True)
                continue
        for k, v in spec["overrides"].items():
            setattr(config, k, v)
        d = folder_for(out_dir, mid)
        os.makedirs(d, exist_ok=True)
        data = config.to_dict()
        data.pop("transformers_version", None)
        data.pop("_name_or_path", None)
        with open(os.path.join(d, "config.json"), "w") as f:
            json.dump(data, f, indent=2, sort_keys=True)
            f.write("\n")
        paths[mid] = d
    return paths
