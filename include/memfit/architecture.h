#pragma once
// Architecture builders: config.json in, the tensors transformers would create out (same names,
// shapes and buffers), in the checkpoint's dtype. One builder per family, registered by
// "model_type" (and architectures[0] where a type has several heads). See docs/architectures.md.

#include <string>
#include <string_view>
#include <vector>

#include "memfit/hf_config.h"
#include "memfit/model.h"
#include "memfit/result.h"
#include "memfit/runtime_versions.h"

namespace memfit {

// Which transformers version's buffers to emit. Buffers that are never saved (rotary caches,
// causal masks, position ids) differ between versions; accelerate's reference figures were made
// with 4.42, while a current transformers is what users load with.
enum class BufferConvention : uint8_t {
  kCurrent,          // transformers >= 4.48: rotary inv_freq once per model, no cos/sin caches
  kTransformers442,  // transformers 4.42, as in accelerate_reference.jsonl
};

// The most tensors a builder emits for one config (a config is a few hundred bytes: its counts,
// such as num_hidden_layers x num_experts, must not make memfit allocate without bound). The
// largest real checkpoints hold under 100,000 tensors. See docs/security.md.
inline constexpr uint64_t kMaxBuiltTensors = uint64_t{1} << 20;

struct BuildOptions {
  BufferConvention buffers = BufferConvention::kCurrent;
  // Under kCurrent, the transformers release whose modules to build (--transformers-version;
  // default RuntimeVersions'): only where a release's buffers differ from the newest's
  // (GPT-NeoX before 4.49 keeps a causal mask and a rotary table in every layer).
  LibraryVersion transformers = RuntimeVersions{}.transformers;
  // The head to build instead of architectures[0]'s, as an AutoModel class name
  // ("AutoModelForSequenceClassification"): accelerate builds the first AutoModelFor* in
  // "auto_map". Empty: architectures[0]. Builders that do not know the head return an error.
  std::string head_class{};
  // Build the unquantized model even when config.json has a "quantization_config", as
  // accelerate's create_empty_model does (from_config ignores quantization). Default: the tensors
  // as the quantized checkpoint stores them.
  bool ignore_quantization = false;
  // Keep repeated modules (a layer's routed experts) compact: one copy with a count
  // (Tensor::copies) instead of every copy, when each copy is provably the same tensors under
  // another index and the copies lie in one no-split block. Only for callers that take compact
  // models (the load summary, totals, blocks); see ExpandRepeats in memfit/model.h.
  bool compact_repeats = false;
  // Builders stop with an error past this many tensors (BuildFromConfig enforces it).
  uint64_t max_tensors = kMaxBuiltTensors;
};

using ArchitectureBuilderFn = Result<Model> (*)(const HfConfig& config, const BuildOptions& options);

struct ArchitectureBuilder {
  std::string_view model_type;    // config.json "model_type"
  std::string_view architecture;  // architectures[0], or "" for any
  ArchitectureBuilderFn build;
  std::string_view family;        // for docs and `memfit models`: "llama", "bert", ...
};

// The builder for a config, by architectures[0] first, then model_type; nullptr when none.
const ArchitectureBuilder* FindArchitectureBuilder(std::string_view model_type,
                                                   std::string_view architecture);
// All registered builders, in registry order.
const std::vector<ArchitectureBuilder>& ArchitectureBuilders();

// Builds the model a config describes. An unknown model_type is an error that says headers give
// an exact answer for any architecture.
Result<Model> BuildFromConfig(const HfConfig& config, const BuildOptions& options = {});

}  // namespace memfit
