// Per-family terms of transformers' inference forward, read op by op from the modeling files at
// v4.48.3; docs/estimates.md, "Prefill peak".

#include "estimate/prefill_terms.h"

#include <algorithm>
#include <iterator>

#include "memfit/checked_math.h"

namespace memfit::estimate {

bool LlamaStyleAttention(std::string_view model_type) {
  static constexpr std::string_view kOwnAttention[] = {
      "gpt2", "gpt_neo", "gpt_neox", "gptj", "gpt_bigcode", "codegen", "bloom", "opt", "mpt",
      "falcon", "xglm", "biogpt", "bert", "roberta", "t5", "vit"};
  return std::find(std::begin(kOwnAttention), std::end(kOwnAttention), model_type) ==
         std::end(kOwnAttention);
}

uint64_t PinnedProjectionElements(std::string_view model_type, const LayerInfo& layer,
                                  uint64_t tp) {
  if (layer.attention != AttentionKind::kFull && layer.attention != AttentionKind::kSliding) {
    return 0;
  }
  const uint64_t q = CeilDiv(layer.num_heads, tp) * layer.head_dim_k;
  const uint64_t k = std::max<uint64_t>(CeilDiv(layer.num_kv_heads ? layer.num_kv_heads
                                                                    : layer.num_heads, tp), 1) *
                     layer.head_dim_k;
  if (model_type == "gpt2" || model_type == "bloom") {
    // Keys and values are both views of the fused projection's output: modeling_gpt2.py
    // `query_states, key_states, value_states = self.c_attn(hidden_states).split(...)` then
    // `.view(...).transpose(1, 2)`, cached as `present = (key_states, value_states)`;
    // modeling_bloom.py `_reshape(fused_qkv)` returns `fused_qkv[..., 1, :].transpose(1, 2)`
    // and `[..., 2, :]`, handed to `layer_past.update`. The cache holds the whole q | k | v
    // output: the queries' part beyond what it is counted for.
    return q;
  }
  if (model_type == "gpt_neox" || model_type == "phi3") {
    // The keys are rotated into new tensors (`torch.cat((query, query_pass), dim=-1)` in
    // modeling_gpt_neox.py `_attn_projections_and_rope`; `apply_rotary_pos_emb` in
    // modeling_phi3.py), the values stay views of the fused output (`qkv[..., 2 * head_size:]`,
    // `qkv[..., query_pos + num_key_value_heads * head_dim:]`) and are cached as they are: the
    // cache holds the rotated keys plus the whole q | k | v output, the queries' and the keys'
    // parts beyond what it is counted for.
    return q + k;
  }
  return 0;
}

bool PostNormOnly(std::string_view model_type) {
  // modeling_olmo2.py at v4.48.3: `hidden_states = self.self_attn(hidden_states=hidden_states,
  // ...)`, then `self.post_attention_layernorm(hidden_states)`; the same for the MLP with
  // post_feedforward_layernorm. OLMo-3 (olmo3) keeps the layout.
  return model_type == "olmo2" || model_type == "olmo3";
}

bool KeepsPreRotaryProjections(std::string_view model_type) {
  // At v4.48.3: modeling_gpt_neox.py `_attn_projections_and_rope` (`query_rot = query[...,
  // : self.rotary_ndims]`, `torch.cat((query, query_pass), dim=-1)`), modeling_gptj.py
  // (`q_rot = query[:, :, :, : self.rotary_dim]`, `torch.cat([q_rot, q_pass], dim=-1)`),
  // modeling_stablelm.py and modeling_phi.py (`query_rot, query_pass = (...)`, `torch.cat(
  // (query_rot, query_pass), dim=-1)`), modeling_phi3.py (`query_states = qkv[..., :query_pos]`,
  // then apply_rotary_pos_emb), modeling_falcon.py (`_split_heads(fused_qkv)` views, then
  // apply_rotary_pos_emb; Falcon's ALiBi variants rotate nothing and are counted alike).
  // Measured: s-nx-, s-gj-, s-slm- and s-fa- rows of cpu-torch1.13-tf4.48-slopes.csv.
  static constexpr std::string_view kTypes[] = {"gpt_neox", "gptj", "codegen", "stablelm",
                                                "phi", "persimmon", "phi3", "falcon"};
  return std::find(std::begin(kTypes), std::end(kTypes), model_type) != std::end(kTypes);
}

bool FusedGateUpMlp(std::string_view model_type) {
  // Phi3MLP (modeling_phi3.py) and GlmMLP (modeling_glm.py) at v4.48.3, Glm4MLP from 4.51;
  // measured: s-p3-inf-fp32-4x512 (peak in the MLP: `aten::mm` of [T, 2f] beside silu and mul).
  return model_type == "phi3" || model_type == "glm" || model_type == "glm4";
}

bool PreallocatesCache(std::string_view model_type) {
  // Gemma2ForCausalLM and Cohere2ForCausalLM at v4.48.3 (generation_config cache_implementation
  // "hybrid": HybridCache's torch.zeros for every layer when generate() starts; measured:
  // s-gmt-inf-fp32-4x512, `aten::zeros` in the run stage).
  return model_type == "gemma2" || model_type == "cohere2";
}

uint64_t ActivationWorkingSet(std::string_view activation) {
  // activations.py NewGELUActivation at v4.48.3: `0.5 * input` and `torch.pow(input, 3.0)`
  // then `0.044715 * ...` alive beside the input; later the tanh term and the product. Measured:
  // s-phi-inf-fp32-4x512 (`aten::pow` and two `aten::mul` of [T, f] at the peak).
  return activation == "gelu_new" ? 4 : 2;
}

bool KeepsInputEmbeds(std::string_view model_type) {
  // LlamaModel.forward at v4.48.3: `inputs_embeds = self.embed_tokens(input_ids)`, then
  // `hidden_states = inputs_embeds` (modeling_llama.py:566-575), the pattern of every Llama-style
  // class; GPT-NeoX (`self.emb_dropout(inputs_embeds)`, the same tensor in eval), GPT-J and
  // Falcon (`hidden_states = inputs_embeds`) alike.
  return LlamaStyleAttention(model_type) || model_type == "gpt_neox" || model_type == "gptj" ||
         model_type == "falcon";
}

EagerScores EagerScoresFor(std::string_view model_type, uint64_t c, bool fp16) {
  if (model_type == "opt") {
    // modeling_opt.py OPTAttention (eager) at v4.48.3: `torch.bmm(query, key^T)`, `+
    // attention_mask`, `torch.max(attn_weights, finfo.min)` (each new, the old freed), then
    // `softmax(attn_weights, dim=-1, dtype=torch.float32).to(torch.float16)` in float16 only
    // (input c, the float32 output and its cast: 2 c + 4), softmax in the model dtype otherwise
    // (2 c). Measured: s-opt-inf-bf16-1x2040 (+76% against the Llama-style 10 B).
    return {.bytes_per_score = fp16 ? 2 * c + 4 : 2 * c, .float_mask = true};
  }
  if (model_type == "gpt_neox") {
    // modeling_gpt_neox.py eager_attention_forward: `attn_scores = torch.zeros(...)` then
    // `torch.baddbmm(attn_scores, ...)` (the zeros and the product, c each), `attn_scores +
    // causal_mask` (old and new), `nn.functional.softmax(attn_scores, dim=-1)` in the model dtype
    // (input and output) and `.to(value.dtype)`, a no-op: two c-sized scores at every step. The
    // masked scores stay referenced to the function's end, where `attn_output.transpose(1,
    // 2).contiguous()` copies the output: two outputs beside the two scores (measured:
    // s-nx-inf-fp32-1x2048, peak at that copy).
    return {.bytes_per_score = 2 * c, .float_mask = true, .outputs = 2};
  }
  if (model_type == "t5") {
    // modeling_t5.py T5Attention at v4.48.3: the first layer's `compute_bias` (1, heads, q, k)
    // plus the mask (`position_bias + causal_mask`, the encoder's (batch, 1, 1, k)) is a
    // (batch, heads, q, k) tensor every later layer reuses; each layer's `scores +=
    // position_bias_masked`, then `softmax(scores.float(), dim=-1).type_as(scores)`: the
    // scores, their float32 copy and output (c + 8 in 16-bit, 2 c in float32). No 4-D mask.
    // In float32 `.float()` and `.type_as` copy nothing, and the peak moves to `attn_weights @
    // value_states`: its output and the copy matmul makes of the transposed query beside the
    // same scores (measured: s-t5-inf-fp32-4x512, `aten::bmm` and `reshape > clone` blocks).
    return {.bytes_per_score = c >= 4 ? 2 * c : c + 8, .float_mask = false,
            .outputs = c >= 4 ? 2u : 0u, .head_bias = true};
  }
  if (model_type == "gpt2") {
    // modeling_gpt2.py eager_attention_forward: matmul, `/ torch.full(...)`, `torch.where(
    // causal_mask, ...)` with the bool `bias` buffer, `+ attention_mask`, softmax in the model
    // dtype: each step holds its input and output (2 c). GPT2Model gives eager attention the
    // (batch, 1, 1, k) padding mask (`attention_mask[:, None, None, :]`), not a 4-D causal one.
    return {.bytes_per_score = 2 * c, .float_mask = false};
  }
  if (model_type == "falcon") {
    // modeling_falcon.py FalconAttention (rotary, eager): `query_layer @ key_layer.transpose`,
    // `/=` in place, `F.softmax(attention_scores + attention_mask, dim=-1,
    // dtype=hidden_states.dtype)`: the scores, their sum with the mask and the softmax output,
    // all in the model dtype (3 c).
    return {.bytes_per_score = 3 * c, .float_mask = true};
  }
  if (model_type == "bloom") {
    // modeling_bloom.py BloomAttention: `attention_scores = alibi.baddbmm(...)` stays referenced
    // while `attn_weights + causal_mask` makes a second copy, then `F.softmax(attn_weights,
    // dim=-1, dtype=torch.float32)`: in 16-bit a float32 copy of its input and the float32
    // output (2 c + 8); in float32 the upcast is a no-op (3 c).
    return {.bytes_per_score = c >= 4 ? 3 * c : 2 * c + 8, .float_mask = true};
  }
  if (model_type == "gptj") {
    // modeling_gptj.py GPTJAttention._attn: `query.to(torch.float32)`, `key.to(torch.float32)`,
    // so the matmul, `/ self.scale_attn`, `+ causal_mask` and the softmax are float32 whatever
    // the model dtype (two 4-byte scores at every step; `.to(value.dtype)` then holds 4 + c).
    return {.bytes_per_score = std::max<uint64_t>(8, 4 + c), .float_mask = true};
  }
  // Llama-style eager_attention_forward (modeling_llama.py): `softmax(attn_weights,
  // dtype=torch.float32).to(query.dtype)`: in float32 the scores and the output (8 B); in 16-bit
  // the scores (c), their float32 copy and the float32 output alive together (c + 8), measured on
  // CPU (validation/FINDINGS.md).
  return {.bytes_per_score = c >= 4 ? 2 * c : c + 8, .float_mask = true};
}

bool UpcastsQueryKey(std::string_view model_type) {
  // modeling_gptj.py GPTJAttention._attn and modeling_codegen.py CodeGenAttention._attn at
  // v4.48.3: "Keep the attention weights computation in fp32 to avoid overflow issues",
  // `query.to(torch.float32)`, `key.to(torch.float32)`.
  return model_type == "gptj" || model_type == "codegen";
}

bool UpcastsEveryLogit(std::string_view model_type) {
  // modeling_gptj.py GPTJForCausalLM.forward and modeling_codegen.py CodeGenForCausalLM.forward:
  // "make sure sampling in fp16 works correctly and compute loss in fp32 to match with mesh-tf
  // version", `lm_logits = self.lm_head(hidden_states).to(torch.float32)` for every token.
  return model_type == "gptj" || model_type == "codegen";
}

}  // namespace memfit::estimate
