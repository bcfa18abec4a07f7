#pragma once
// Per-family facts of transformers' inference forward (private to src/estimate), each read from
// the family's modeling file at v4.48.3 (the release validation/ measured): how eager attention
// holds its scores, what the prefill's cache pins beyond its keys and values, and which causal
// LMs upcast every prompt token's logits. Derived from the model type the estimator already
// gets, so the architecture builders need no new property. Sources: docs/estimates.md,
// "Prefill peak".

#include <cstdint>
#include <string_view>

#include "memfit/model.h"

namespace memfit::estimate {

// Whether the class attends with Llama's eager_attention_forward pattern (repeat_kv to the query
// heads, a float32 softmax, the probabilities returned to the decoder layer), rather than an
// attention module of its own (GPT-2, GPT-NeoX, GPT-J, BLOOM, OPT, Falcon, MPT, BERT, T5, ...).
bool LlamaStyleAttention(std::string_view model_type);

// Whether the decoder layer norms the attention's and the MLP's outputs instead of their inputs,
// so that both read the residual stream itself (OLMo-2: Olmo2DecoderLayer).
bool PostNormOnly(std::string_view model_type);

// Eager attention's (batch, heads, q, k) tensors alive together at its peak.
struct EagerScores {
  uint64_t bytes_per_score = 0;  // per head and (query, key) pair
  bool float_mask = true;        // a (batch, 1, q, k) mask in the model dtype is alive beside them
  uint64_t outputs = 0;          // attention outputs (heads x head_dim per token) alive beside them
  // A (batch, heads, q, k) bias in the model dtype, made once and handed to every layer, alive
  // through the stack (T5's position_bias with the mask added).
  bool head_bias = false;
};

// Whether the layer keeps its projections' q and k alive beside their rotated copies: fused-qkv
// classes whose q and k are views of the projection (Phi-3, Falcon), and partial-rotary classes
// that split q and k into views and concatenate the rotated part back (GPT-NeoX, GPT-J,
// CodeGen, StableLM, Phi, Persimmon).
bool KeepsPreRotaryProjections(std::string_view model_type);

// Whether the gated MLP is one fused gate_up projection chunked into gate and up (Phi-3, GLM):
// `up_states = self.gate_up_proj(hidden_states)`, `gate, up_states = up_states.chunk(2, dim=-1)`,
// `up_states = up_states * self.activation_fn(gate)`.
bool FusedGateUpMlp(std::string_view model_type);

// Whether generate() gives the class a cache it allocates whole before the first layer (Gemma-2's
// and Cohere-2's HybridCache: `cache_implementation = "hybrid"`), rather than DynamicCache.
bool PreallocatesCache(std::string_view model_type);

// The activation's transient working set in units of its input ([T, f]), input included:
// transformers' NewGELUActivation (gelu_new, Python ops: `0.5 * input * (1.0 + torch.tanh(...
// (input + 0.044715 * torch.pow(input, 3.0))))`) holds four; a fused kernel (silu, gelu, relu,
// gelu_pytorch_tanh) two.
uint64_t ActivationWorkingSet(std::string_view activation);

// Whether the decoder's first hidden state is inputs_embeds itself, which the model's forward
// keeps referenced through every layer (so from layer 1 on it is a tensor of its own).
bool KeepsInputEmbeds(std::string_view model_type);

// `c`: the model dtype's bytes per element; `fp16`: a 2-byte dtype is float16, not bfloat16.
EagerScores EagerScoresFor(std::string_view model_type, uint64_t c, bool fp16 = false);

// Elements per token that one attention layer's prefill cache pins beyond the keys and values it
// is counted for (its heads split under `tp`): fused-qkv classes whose cached keys or values are
// views of the projection's output, which stays alive until the first decode step's torch.cat
// copies them. 0 for every other class.
uint64_t PinnedProjectionElements(std::string_view model_type, const LayerInfo& layer,
                                  uint64_t tp);

// Whether the causal LM's forward upcasts the logits of every token it computes to float32
// (`self.lm_head(hidden_states).to(torch.float32)`).
bool UpcastsEveryLogit(std::string_view model_type);

// Whether the class's eager attention upcasts its queries and keys to float32 before the scores
// (GPT-J's and CodeGen's `_attn`): scores and softmax in float32 whatever the model dtype.
bool UpcastsQueryKey(std::string_view model_type);

}  // namespace memfit::estimate
