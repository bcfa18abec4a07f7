#pragma once
// The prefill's activation peak per GPU (private to src/estimate; inference_peaks.cc), for
// EstimateInference: the largest transient of one forward pass as transformers runs it or as a
// serving engine's profile run does, with the logits each keeps, and the transformers rules
// that decide those logits. docs/estimates.md, "Inference" and "Prefill peak".

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "memfit/engine_release.h"
#include "memfit/estimate_inference.h"
#include "memfit/model.h"
#include "memfit/runtime_versions.h"

namespace memfit::estimate {

// The transformers release that added a model type natively; before it the Hub's own modeling
// code runs (trust_remote_code). nullopt: native in every release modelled.
std::optional<LibraryVersion> NativeSince(std::string_view model_type);

// Whether transformers `v` runs the Hub's modeling code for this model type (NativeSince).
bool RunsRemoteCode(std::string_view model_type, const RuntimeVersions& v);

// Whether transformers' generate() computes logits for every prompt token of this model type.
bool AllTokenLogitsInGenerate(std::string_view model_type, const RuntimeVersions& v);

// What a vLLM release's profile run does beyond a plain forward (estimate/vllm_profile_run.h):
// `release_rules` false keeps memfit's rules before --engine-version (SGLang, and options
// without a release): the MoE layer as a dense MLP of the expert width, the sampled rows'
// logits over this GPU's vocabulary shard and their float32 copy.
struct EngineForward {
  bool release_rules = false;
  VllmSampler sampler = VllmSampler::kNone;
};

// One forward pass over batch x seq tokens on one GPU.
struct PrefillPass {
  uint64_t batch = 1;          // sequences
  uint64_t seq = 0;            // tokens per sequence
  uint32_t elem_bytes = 2;     // bytes per activation element (the model dtype's)
  bool fp16 = false;           // the 2-byte dtype is float16 (some classes upcast only it)
  AttnImpl attn = AttnImpl::kFlash;
  uint64_t tp = 1;             // heads, MLP width and vocabulary split over tp GPUs
  uint64_t logit_tokens = 0;   // rows whose logits the pass computes
  // Logits as transformers' forward leaves them (all tokens in the model dtype); otherwise as a
  // serving engine's sampler takes them (logit_tokens rows upcast to float32).
  bool transformers = false;
  RuntimeVersions versions{};
  // How transformers runs the Mamba layers: the kernels add nothing beyond the layer's
  // projections; the torch path's float32 products are counted.
  Mamba2Scan scan = Mamba2Scan::kKernels;
  EngineForward engine{};      // a vLLM release's profile-run rules
  // transformers: per layer (hp.layers' order), the cache bytes that grow with the prompt (its
  // K/V); the walk holds a layer's entries from its attention on (DynamicCache.update appends
  // the layer's key and value states, no copy). Empty: the walk holds no cache (serving
  // engines, whose pool is allocated apart).
  std::vector<uint64_t> layer_cache{};
};

// The peak's bytes and the step it happens at ("attention", "mlp", "logits", ...).
struct ActivationPeak {
  uint64_t bytes = 0;
  std::string where{};
};

// The largest transient of `pass`, per GPU. Adds an assumption line when the model has no
// per-layer description (one generic layer is used).
ActivationPeak PrefillPeak(const Model& model, const PrefillPass& pass,
                           std::vector<std::string>& assumptions);

}  // namespace memfit::estimate
