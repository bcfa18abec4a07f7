// Per-family terms of transformers' inference forward, read op by op from the modeling files at
// v4.48.3; docs/estimates.md, "Prefill peak".

#include "estimate/prefill_terms.h"

#include <algorithm>

namespace memfit::estimate {

EagerScores EagerScoresFor(std::string_view model_type, uint64_t c) {
  if (model_type == "gpt_neox") {
    // modeling_gpt_neox.py eager_attention_forward: `attn_scores = torch.zeros(...)` then
    // `torch.baddbmm(attn_scores, ...)` (the zeros and the product, c each), `attn_scores +
    // causal_mask` (old and new), `nn.functional.softmax(attn_scores, dim=-1)` in the model dtype
    // (input and output) and `.to(value.dtype)`, a no-op: two c-sized scores at every step.
    return {.bytes_per_score = 2 * c, .float_mask = true};
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

}  // namespace memfit::estimate
