#pragma once
// What the tests that count transformers' prefill by hand on a tiny config share: the decoder
// shape most of them start from, the options of such a count, and the estimate, which must
// succeed.

#include <cstdint>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "memfit/estimate_inference.h"
#include "memfit/model.h"

namespace memfit::estimate_test {

// A decoder of 2 layers, hidden 32, 4 heads (2 KV heads) of 8, MLP 64, vocab 100, 4,096
// positions, bfloat16, of `model_type` and its class `architecture`; `changes` merge-patched
// over it (RFC 7386: a key replaces or adds, a null removes).
inline nlohmann::json HandCountConfig(const std::string& model_type,
                                      const std::string& architecture,
                                      const nlohmann::json& changes) {
  nlohmann::json j = {{"model_type", model_type}, {"architectures", {architecture}},
                      {"vocab_size", 100}, {"hidden_size", 32}, {"intermediate_size", 64},
                      {"num_hidden_layers", 2}, {"num_attention_heads", 4},
                      {"num_key_value_heads", 2}, {"max_position_embeddings", 4096},
                      {"torch_dtype", "bfloat16"}};
  j.merge_patch(changes);
  return j;
}

// transformers' inference of `batch` sequences of `context` tokens at `dtype` with `attn`, as
// transformers 4.48 runs it, with no CUDA context: the hand-counted terms, the weights and the
// cache are all there is.
inline InferenceOptions HandCountOptions(uint64_t batch, uint64_t context, Dtype dtype,
                                         AttnImpl attn) {
  InferenceOptions o;
  o.batch = batch;
  o.context_tokens = context;
  o.dtype = dtype;
  o.attn = attn;
  o.overhead.cuda_context_bytes = 0;
  o.versions.transformers = {4, 48};
  return o;
}

// EstimateInference(model, o), which must succeed: a failed test and an empty estimate otherwise.
inline InferenceEstimate EstimateOk(const Model& model, const InferenceOptions& o) {
  auto e = EstimateInference(model, o);
  EXPECT_TRUE(e) << e.error().message;
  return e ? *e : InferenceEstimate{};
}

}  // namespace memfit::estimate_test
