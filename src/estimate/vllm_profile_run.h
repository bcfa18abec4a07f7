#pragma once
// vLLM's profile run (vllm/v1/worker/gpu_worker.py `determine_available_memory` ->
// vllm/v1/worker/gpu_model_runner.py `profile_run`): the terms of its activation peak that a
// plain forward pass does not have. Private to src/estimate; docs/estimates.md, "vLLM's profile
// run", cites each term's file and release.

#include <cstdint>

#include "memfit/engine_release.h"
#include "memfit/model.h"

namespace memfit::estimate {

// Bytes alive per logit (one sampled row x one vocabulary entry) at the peak of
// `_dummy_sampler_run`, `c` being the model dtype's bytes. The model-dtype logits of
// compute_logits stay referenced by the runner while Sampler.forward works on their float32
// copy (`logits = logits.to(torch.float32)`), then:
// - kTorchSort (apply_top_k_top_p): the sorted values (4) and their int64 indices (8), the
//   top-k mask (bool, 1), the softmax the cumsum is written into (4), the top-p mask (1) and the
//   re-sorted `logits_sort.scatter(...)` (4): c + 4 + 22 = c + 26;
// - kFlashInfer (top_k_top_p_sampling_from_logits): the top-k masked logits (4) and their
//   softmax (4): c + 4 + 8 = c + 12;
// - kNone: the float32 copy only: c + 4.
uint64_t VllmSamplerBytesPerLogit(VllmSampler sampler, uint64_t c);

// The fused MoE layer's working set for `tokens` tokens (fused_moe.py `fused_experts_impl`; the
// modular kernel's TritonExperts.workspace_shapes are the same): the router's logits (tokens x
// experts, model dtype), topk_weights (float32) and topk_ids (int32), `cache13` of M x top_k x
// max(N, K) shared by the first and the last GEMM's outputs, and `intermediate_cache2` of
// M x top_k x N / 2 (the activation's output), where N = 2 x `expert_width` (gated: w1 holds
// gate and up; else N = expert_width and cache2 is M x top_k x N), K = `hidden` and M = `tokens`
// (VLLM_FUSED_MOE_CHUNK_SIZE caps M at 16384 or more, above every release default of
// max_num_batched_tokens; memfit does not chunk, an upper bound beyond it).
uint64_t VllmFusedMoeBytes(uint64_t tokens, uint64_t num_experts, uint64_t top_k,
                           uint64_t expert_width, uint64_t hidden, bool gated, uint64_t c);

// Whether any layer routes its tokens to experts (LayerInfo::moe).
bool HasMoeLayers(const Model& model);

// Whether the model has a vision or audio encoder (a tensor of a component named "vision..." or
// "...audio...": vision_tower, vision_model, audio_tower, embed_vision, ...): vLLM profiles it.
bool HasMultimodalEncoder(const Model& model);

// The encoder outputs profile_run keeps in its encoder cache through `_dummy_run`: the dummy
// items' embeddings, `budget_tokens` rows (max_num_batched_tokens; vLLM's encoder budget is
// max(max_num_batched_tokens, the largest item's tokens)) of the language model's `hidden` width
// in the model dtype (`c` bytes).
uint64_t VllmEncoderCacheBytes(uint64_t budget_tokens, uint64_t hidden, uint64_t c);

}  // namespace memfit::estimate
