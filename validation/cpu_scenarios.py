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
    if method in ("lora", "qlora"):
        s.update(rank=rank, alpha=2 * rank)
    if method == "qlora":
        s.update(quant="bnb-nf4")  # validation/sim4bit.py: NF4, blocks of 64, no double quant
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


# Slopes (issue 31): every family at three prompt lengths (256, 1,024, 2,048 at batch 1) and a
# second batch size (4 x 512), float32 and bfloat16, generate() with 4 decode steps; ids "s-".
# Families the rows above do not cover are built from their transformers 4.48.3 config classes
# (or catalog configs) scaled down to the same small shape, so that the terms that grow with
# context, batch and dtype (attention scores, logits, caches) are a large share of the peak:
# 2 layers, hidden 512, 8 heads of 64 (8 KV heads), MLP 1536, vocabulary 32000 unless the row
# says otherwise.
TINY = {"num_hidden_layers": 2, "hidden_size": 512, "intermediate_size": 1536,
        "num_attention_heads": 8, "vocab_size": 32000}


def _tiny(config_class, arch, notes, base=None, **overrides):
    o = dict(TINY)
    if base is None:
        # Set after the class's __init__, which took num_key_value_heads from its own heads.
        o["num_key_value_heads"] = TINY["num_attention_heads"]
    o.update(overrides)
    o = {k: v for k, v in o.items() if v is not None}  # None: the family has no such key
    o["architectures"] = [arch]
    return {"base": base, "config_class": config_class, "overrides": o, "notes": notes}


NX = "EleutherAI/pythia-1.4b-tiny"
GJ = "EleutherAI/gpt-j-6b-tiny"
FA = "tiiuae/falcon-7b-tiny"
SC2 = "bigcode/starcoder2-tiny"
OL2 = "allenai/OLMo-2-tiny"
GR = "ibm-granite/granite-3.0-tiny"
CO = "CohereForAI/cohere-tiny"
SLM = "stabilityai/stablelm-2-tiny"
P3 = "microsoft/Phi-3-longrope-tiny"
PMO = "microsoft/Phi-3.5-MoE-tiny"
Q2M = "Qwen/Qwen2-MoE-tiny"
M2 = "state-spaces/mamba2-tiny"
M1 = "state-spaces/mamba-tiny"
JA = "ai21labs/Jamba-tiny"

MODELS.update({
    NX: _tiny(None, "GPTNeoXForCausalLM", "pythia-1.4b config (rotary_pct 0.25, parallel "
              "residual, fused query_key_value, untied embed_out) scaled to the tiny shape",
              base="EleutherAI/pythia-1.4b", intermediate_size=2048),
    GJ: {"base": "EleutherAI/gpt-j-6b",
         "overrides": {"n_layer": 2, "n_embd": 512, "n_head": 8, "rotary_dim": 16,
                       "vocab_size": 32000, "n_positions": 4096,
                       "architectures": ["GPTJForCausalLM"]},
         "notes": "gpt-j-6b config (parallel attention and MLP on one LayerNorm, rotary on 16 of "
                  "64 per head as 64 of 256 there, logits upcast to float32) scaled down: 2 "
                  "layers, hidden 512 (MLP 4 x 512), 8 heads, vocab 32000, 4096 positions (the "
                  "rows run past 2048)"},
    FA: _tiny(None, "FalconForCausalLM", "falcon-7b config (multi-query, parallel attention, "
              "no biases, tied) scaled to the tiny shape (MLP 4 x 512)",
              base="tiiuae/falcon-7b", intermediate_size=None, ffn_hidden_size=2048),
    SC2: _tiny("Starcoder2Config", "Starcoder2ForCausalLM", "Starcoder2Config defaults (biases, "
               "GELU MLP, sliding_window 4096 > context) scaled to the tiny shape, 2 KV heads",
               num_key_value_heads=2),
    OL2: _tiny("Olmo2Config", "Olmo2ForCausalLM", "Olmo2Config defaults (whole-projection q/k "
               "norms, post-norms) scaled to the tiny shape"),
    GR: _tiny("GraniteConfig", "GraniteForCausalLM", "GraniteConfig defaults with "
              "granite-3.0's multipliers (embedding 12, residual 0.22, attention 1/64, logits "
              "scaling 8) scaled to the tiny shape, 2 KV heads, tied",
              num_key_value_heads=2, embedding_multiplier=12.0, residual_multiplier=0.22,
              attention_multiplier=0.015625, logits_scaling=8.0, tie_word_embeddings=True),
    CO: _tiny("CohereConfig", "CohereForCausalLM", "CohereConfig defaults (parallel block, "
              "LayerNorm without bias, logit_scale, tied) scaled to the tiny shape"),
    SLM: _tiny("StableLmConfig", "StableLmForCausalLM", "StableLmConfig defaults (LayerNorm, "
               "partial rotary 0.25) with stablelm-2's qkv bias, scaled to the tiny shape",
               use_qkv_bias=True),
    P3: _tiny("Phi3Config", "Phi3ForCausalLM", "Phi3Config with Phi-3-mini-128k's longrope "
              "(original 4096 of 131072 positions; 32 short and long factors of 1.0 and 2.0) "
              "scaled to the tiny shape (fused qkv_proj and gate_up_proj; Phi-3's vocabulary "
              "32064, whose pad id 32000 must lie inside it)",
              vocab_size=32064, max_position_embeddings=131072,
              original_max_position_embeddings=4096,
              rope_scaling={"type": "longrope", "short_factor": [1.0] * 32,
                            "long_factor": [2.0] * 32}),
    PMO: _tiny("PhimoeConfig", "PhimoeForCausalLM", "PhimoeConfig defaults (16 -> 4 experts, "
               "top 2, sparsemixer) scaled to the tiny shape, 2 KV heads, MLP 1024",
               num_key_value_heads=2, intermediate_size=1024, num_local_experts=4),
    Q2M: _tiny("Qwen2MoeConfig", "Qwen2MoeForCausalLM", "Qwen2MoeConfig defaults (60 -> 8 "
               "experts of 256, top 4, a shared expert of 1024 with its gate) scaled to the tiny "
               "shape, 2 KV heads", num_key_value_heads=2, num_experts=8,
               moe_intermediate_size=256, shared_expert_intermediate_size=1024),
    M2: {"base": None, "config_class": "Mamba2Config",
         "overrides": {"num_hidden_layers": 2, "hidden_size": 512, "num_heads": 16,
                       "head_dim": 64, "n_groups": 1, "vocab_size": 32000,
                       "architectures": ["Mamba2ForCausalLM"]},
         "notes": "Mamba2Config defaults (d_state 128, conv 4, expand 2, chunk 256) scaled down: "
                  "2 layers, hidden 512, 16 heads of 64, 1 group, vocab 32000; the torch scan "
                  "(no mamba_ssm kernels on CPU)"},
    M1: {"base": None, "config_class": "MambaConfig",
         "overrides": {"num_hidden_layers": 2, "hidden_size": 512, "vocab_size": 32000,
                       "architectures": ["MambaForCausalLM"]},
         "notes": "MambaConfig defaults (d_state 16, conv 4, expand 2) scaled down: 2 layers, "
                  "hidden 512, vocab 32000; the torch scan (no kernels on CPU)"},
    JA: _tiny("JambaConfig", "JambaForCausalLM", "JambaConfig defaults scaled to the tiny shape: "
              "layer 0 Mamba-1 (d_state 16), layer 1 attention (2 KV heads) with a MoE of 4 "
              "experts top 2; the torch scan (use_mamba_kernels false)",
              num_key_value_heads=2, attn_layer_period=2, attn_layer_offset=1,
              expert_layer_period=2, expert_layer_offset=1, num_experts=4,
              use_mamba_kernels=False),
})

SLOPE_SIZES = [(256, 1), (1024, 1), (2048, 1), (512, 4)]
# Learned positions end before 2,048 + 4 decode steps: GPT-2's 1,024, OPT's 2,048 (+ 2 offset).
SLOPE_SIZES_BY_KEY = {"g2": [(256, 1), (512, 1), (1020, 1), (512, 4)],
                      "opt": [(256, 1), (1024, 1), (2040, 1), (512, 4)]}
_SLOPE_FAMILIES = [
    ("nx", NX), ("gj", GJ), ("fa", FA), ("sc2", SC2), ("ol2", OL2), ("gr", GR), ("co", CO),
    ("slm", SLM), ("p3", P3), ("pmo", PMO), ("q2m", Q2M), ("m2", M2), ("m1", M1), ("ja", JA),
    # families of the rows above, at the sizes they were not measured
    ("qw", Q), ("ll", LL), ("g2", G2), ("bl", BL), ("opt", OPT), ("gmt", GMT), ("mxt", MXT),
    ("phi", PHI),
    # Mistral (1 layer, a 128-token window shorter than every context) and T5 (generate(): the
    # encoder reads the context, the decoder 4 tokens)
    ("mi", MI), ("t5", T5L2),
]
for _key, _model in _SLOPE_FAMILIES:
    for _dtype, _tag in (("float32", "fp32"), ("bfloat16", "bf16")):
        for _ctx, _batch in SLOPE_SIZES_BY_KEY.get(_key, SLOPE_SIZES):
            SCENARIOS.append(_inf(_model, f"s-{_key}-inf-{_tag}-{_batch}x{_ctx}", _dtype,
                                  ctx=_ctx, batch=_batch))

# BERT at the slopes' sizes too (one forward of the masked LM; 512 positions, so 128 to 512
# tokens). Not here: Bamba (its torch scan's float32 6-D products reach several GiB from 1,024
# tokens), ViT (a fixed image size) and DeepSeek-V3 (remote code the runner may not have).
for _dtype, _tag in (("float32", "fp32"), ("bfloat16", "bf16")):
    for _ctx, _batch in ((128, 1), (256, 1), (512, 1), (128, 4)):
        SCENARIOS.append(_fwd(BE, f"s-be-fwd-{_tag}-{_batch}x{_ctx}", _dtype, seq=_ctx,
                              batch=_batch))

# Training slopes: two steps (the second in the steady state), full fp32 at 256 and 1,024 tokens,
# bf16-mixed at 1,024, full checkpointing and LoRA r64 (pure bf16) at 2 x 1,024 and 1 x 2,048.
_TRAIN_SLOPE_FAMILIES = [("nx", NX), ("gj", GJ), ("fa", FA), ("sc2", SC2), ("ol2", OL2),
                         ("gr", GR), ("co", CO), ("slm", SLM), ("q2m", Q2M), ("p3", P3)]
for _key, _model in _TRAIN_SLOPE_FAMILIES:
    SCENARIOS += [
        _tr(_model, f"s-{_key}-tr-fp32-1x256", "fp32", seq=256, batch=1),
        _tr(_model, f"s-{_key}-tr-fp32-1x1024", "fp32", seq=1024, batch=1),
        _tr(_model, f"s-{_key}-tr-bf16m-1x1024", "bf16-mixed", seq=1024, batch=1),
        _tr(_model, f"s-{_key}-tr-fp32-ckpt-2x1024", "fp32", seq=1024, batch=2, ckpt="full"),
        _tr(_model, f"s-{_key}-lora64-bf16-2x1024", "bf16", seq=1024, batch=2, method="lora",
            rank=64),
        # a second length for checkpointing and LoRA
        _tr(_model, f"s-{_key}-tr-fp32-ckpt-1x2048", "fp32", seq=2048, batch=1, ckpt="full"),
        _tr(_model, f"s-{_key}-lora64-bf16-1x2048", "bf16", seq=2048, batch=1, method="lora",
            rank=64),
    ]


# Longer generation (issue 31): generate() with 64 decode steps, so that the cache's growth step
# by step (DynamicCache's torch.cat per layer and step) and the last step's logits are measured
# where 4 steps hide them; 1 x 1,024 and 4 x 512 (the context includes the 64 new tokens), float32
# and bfloat16; ids "g-".
for _key, _model in (("qw", Q), ("gr", GR), ("ol2", OL2), ("nx", NX), ("p3", P3), ("q2m", Q2M)):
    for _dtype, _tag in (("float32", "fp32"), ("bfloat16", "bf16")):
        for _ctx, _batch in ((1024, 1), (512, 4)):
            SCENARIOS.append(_inf(_model, f"g-{_key}-gen64-{_tag}-{_batch}x{_ctx}", _dtype,
                                  ctx=_ctx, batch=_batch, decode=64))

# QLoRA-style rows: LoRA r16 (PEFT's default targets) over a 4-bit NF4 base, pure bfloat16, the
# base quantized by validation/sim4bit.py (bitsandbytes has no CPU build in Debian 12: a torch
# stand-in with bitsandbytes >= 0.43.2's memory: packed uint8 weights, float32 absmax per 64, a
# dequantized weight per product, the input not kept). 8 layers at the tiny shape, so that the
# layers' saved activations weigh as much as the logits; 1 x 512, 1 x 2,048 and 2 x 1,024 with
# full checkpointing; ids "q-".
_L8 = {"num_hidden_layers": 8}
LL8 = "meta-llama/Llama-tiny-L8"
QW8 = "Qwen/Qwen2-tiny-L8"
MX8 = "mistralai/Mixtral-tiny-L8"
GM8 = "google/gemma-tiny-L8"
NX8 = "EleutherAI/pythia-tiny-L8"
MODELS.update({
    LL8: _tiny("LlamaConfig", "LlamaForCausalLM", "LlamaConfig defaults (SiLU gated MLP, "
               "RMSNorm, untied head) scaled to the tiny shape, 8 layers, 2 KV heads",
               num_key_value_heads=2, **_L8),
    QW8: _tiny("Qwen2Config", "Qwen2ForCausalLM", "Qwen2Config defaults (q/k/v biases, untied "
               "head) scaled to the tiny shape, 8 layers, 2 KV heads", num_key_value_heads=2,
               **_L8),
    MX8: _tiny("MixtralConfig", "MixtralForCausalLM", "MixtralConfig defaults (8 -> 4 experts "
               "of 1536, top 2, transformers' expert loop; every expert's linears 4-bit) scaled "
               "to the tiny shape, 8 layers, 2 KV heads", num_key_value_heads=2,
               num_local_experts=4, **_L8),
    GM8: _tiny("GemmaConfig", "GemmaForCausalLM", "GemmaConfig defaults (GeGLU MLP, "
               "embedding scaled by sqrt(h), head tied to the embedding and kept 16-bit) scaled "
               "to the tiny shape, 8 layers, 8 heads of 64, 1 KV head", head_dim=64,
               num_key_value_heads=1, **_L8),
    NX8: _tiny(None, "GPTNeoXForCausalLM", "pythia-1.4b config (rotary_pct 0.25, parallel "
               "residual, fused query_key_value, untied embed_out) scaled to the tiny shape, "
               "8 layers", base="EleutherAI/pythia-1.4b", intermediate_size=2048, **_L8),
})
# (OLMo-2 and Phi-3 have no PEFT default targets in peft 0.14: Mixtral and Gemma instead.)
for _key, _model in (("ll8", LL8), ("qw8", QW8), ("mx8", MX8), ("gm8", GM8), ("nx8", NX8)):
    SCENARIOS += [
        _tr(_model, f"q-{_key}-qlora16-bf16-1x512", "bf16", seq=512, batch=1, method="qlora"),
        _tr(_model, f"q-{_key}-qlora16-bf16-1x2048", "bf16", seq=2048, batch=1,
            method="qlora"),
        _tr(_model, f"q-{_key}-qlora16-bf16-ckpt-2x1024", "bf16", seq=1024, batch=2,
            method="qlora", ckpt="full"),
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
