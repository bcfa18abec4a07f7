#pragma once
// Helpers for architecture builders: emit tensors named and shaped as transformers creates them,
// with overflow-checked sizes. A builder records the first error and returns it from Finish().

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "formats/hf_config_json.h"
#include "memfit/architecture.h"
#include "memfit/hf_config.h"
#include "memfit/model.h"
#include "memfit/result.h"

namespace memfit::arch {

struct MlxQuantization;

// Loops over counts read from a config (layers, experts) must stop once b.failed(): the builder
// fails when it passes its tensor cap (BuildOptions::max_tensors) or a size overflows.
class ModelBuilder {
 public:
  // The checkpoint dtype the config implies (CheckpointDtype), its assumption recorded in the
  // model.
  explicit ModelBuilder(const HfConfig& config);
  // `dtype`: the checkpoint dtype for parameters, chosen by the caller.
  ModelBuilder(const HfConfig& config, Dtype dtype);

  // A parameter in the checkpoint dtype (or `dtype` when given).
  // Names are taken by value: a temporary ("prefix + \".weight\"") moves into the tensor.
  void Param(std::string name, std::vector<uint64_t> shape);
  void ParamAs(std::string name, std::vector<uint64_t> shape, Dtype dtype);
  // A parameter of a quantized layer as stored: a packed weight or quantization metadata. It
  // counts `logical_params` parameters (Tensor::logical_params): out x in for a packed weight,
  // 0 for scales, zero points and g_idx.
  void Packed(std::string name, std::vector<uint64_t> shape, Dtype dtype, uint64_t logical_params);
  // nn.Linear(in, out): weight [out, in], bias [out]. Under an MLX quantization
  // (MlxQuantizationScope) the weight is stored as mlx-lm quantizes it (mlx_quantization.h).
  void Linear(const std::string& prefix, uint64_t in, uint64_t out, bool bias);
  // nn.Embedding(num, dim): weight [num, dim], quantized like Linear under MLX.
  void Embedding(const std::string& prefix, uint64_t num, uint64_t dim);
  // `experts` linears (in -> out) stacked in one parameter `name` of `shape` (fused MoE experts):
  // a Param, or under MLX what mlx-lm's QuantizedSwitchLinear stores, `<name>.weight` uint32
  // [experts, out, in x bits / 32] with scales (and biases) [experts, out, in / group], looked up
  // in the block as `mlx_module` (mlx-lm's path, e.g. "...experts.gate_proj") when given.
  void StackedLinear(const std::string& name, std::vector<uint64_t> shape, uint64_t experts,
                     uint64_t in, uint64_t out, const std::string& mlx_module = "");
  // nn.LayerNorm(dim): weight and bias (bias optional).
  void LayerNorm(const std::string& prefix, uint64_t dim, bool bias = true);
  // RMSNorm(dim): weight only.
  void RmsNorm(const std::string& prefix, uint64_t dim);
  // nn.Conv{1,2}d: weight [out, in/groups, k...], bias [out].
  void Conv(const std::string& prefix, uint64_t in, uint64_t out, std::vector<uint64_t> kernel,
            bool bias, uint64_t groups = 1);
  // A buffer; persistent ones are in the state dict (and usually in checkpoints).
  void Buffer(std::string name, std::vector<uint64_t> shape, Dtype dtype, bool persistent);
  // A parameter that shares storage with `target` (tied embeddings): resident once, not stored.
  void Tied(std::string name, std::vector<uint64_t> shape, const std::string& target);

  // Tensors emitted while set belong to the task head (absent from the base AutoModel).
  void SetHead(bool in_head) { in_head_ = in_head; }
  // Tensors emitted while set exist only in the base AutoModel, not in the class being built
  // (BERT's pooler under BertForMaskedLM): Tensor::base_only, never stored.
  void SetBaseOnly(bool base_only) { base_only_ = base_only; }
  // Tensors emitted while set belong to this multimodal component.
  void SetComponent(std::string component) { component_ = std::move(component); }
  Dtype dtype() const { return dtype_; }
  const std::string& where() const { return where_; }

  // Records an error (the first one wins), e.g. from a failed config read.
  void Fail(const Error& error);
  bool failed() const { return !error_.message.empty(); }

  // Whether repeated modules may be kept compact (BuildOptions::compact_repeats, through
  // CompactRepeatsScope); see RepeatedModules in expert_kit.h.
  bool compact_repeats() const { return compact_repeats_; }
  // Marks tensors [first, end) as copy 0 of `copies` copies whose index is the "0" at
  // `index_at` in their names (Tensor::copies); checks the tensor cap as if every copy had been
  // emitted. False, with nothing marked, when a name has no "0" there (emit the copies instead).
  bool MarkRepeat(size_t first, uint64_t copies, size_t index_at);

  Model& model() { return model_; }
  // The finished model; checks the totals for overflow.
  Result<Model> Finish();

 private:
  void Emit(std::string name, std::vector<uint64_t> shape, Dtype dtype, TensorKind kind,
            std::string tied_to, bool stored);
  // Makes room for the next tensor: the first time the model outgrows kSmallModelTensors, room for
  // capacity_hint_ tensors at once, so a model of 10^5 expert tensors is not relocated (moved
  // to a new, freshly faulted buffer) at every doubling. See docs/benchmarks.md.
  void Grow();
  void FailTensorCap();
  // Emits `prefix`'s weight [out, in] (`experts` of them stacked when not 0) MLX-quantized when
  // the MLX quantization covers `lookup` (`prefix` when empty).
  bool MlxWeight(const std::string& prefix, uint64_t in, uint64_t out, uint64_t experts = 0,
                 const std::string& lookup = "");
  std::string where_;
  Dtype dtype_;
  uint64_t max_tensors_;
  uint64_t capacity_hint_ = 0;  // ExpectedTensors(config), capped at max_tensors_
  bool compact_repeats_ = false;
  uint64_t repeated_ = 0;  // tensors the compact runs stand for beyond their templates
  bool in_head_ = false;
  bool base_only_ = false;
  std::string component_;
  std::shared_ptr<const MlxQuantization> mlx_;  // CurrentMlxQuantization() at construction
  Model model_;
  Error error_;
};

// Marks tensors [first, end) of `model` as stored but not loaded (multi-token-prediction layers
// that the causal LM does not load) and returns their stored bytes, every copy of a compact run
// counted.
uint64_t MarkStoredOnly(Model& model, size_t first);

// The checkpoint dtype a config implies: "torch_dtype"/"dtype", else float32 (transformers'
// default), recording an assumption in that case.
Dtype CheckpointDtype(const HfConfig& config, std::vector<std::string>& assumptions);
// That assumption's words: about the checkpoint, not what a command loads (inference's --dtype).
inline constexpr const char* kFloat32CheckpointAssumption =
    "config.json names no torch_dtype: the checkpoint's weights assumed float32 (transformers' "
    "default)";

// Reads a value or records the error in `b` and returns 0/false/"": lets builders read many fields
// without a check after each; the builder's Finish() returns the first error.
uint64_t Get(ModelBuilder& b, const Result<uint64_t>& value);
bool Get(ModelBuilder& b, const Result<bool>& value);
double Get(ModelBuilder& b, const Result<double>& value);
std::string Get(ModelBuilder& b, const Result<std::string>& value);

// Fills Model fields common to every builder from the config (name, type, architecture,
// auto_map class, config dtype, quantization_config).
void FillCommon(const HfConfig& config, Model& model);

// Checks that `numerator` divides evenly, recording "<where>: field ... must divide ..." if not.
uint64_t DivideExact(ModelBuilder& b, const HfConfig& config, uint64_t numerator,
                     std::string_view numerator_name, uint64_t denominator,
                     std::string_view denominator_name);

// Records "<where>: <context>field "<key>" must not be zero" for the first field that is 0, unless
// the builder failed before; false when it has failed.
bool CheckNonZero(ModelBuilder& b, const HfConfig& c,
                  std::initializer_list<std::pair<uint64_t, std::string_view>> fields,
                  std::string_view context = "");

// x * y for a dimension computed from config values (heads x head_dim); records an error naming
// `what` and returns 0 on overflow.
uint64_t MulDims(ModelBuilder& b, uint64_t x, uint64_t y, std::string_view what);

// Sets the tensor cap of every ModelBuilder constructed on this thread while it lives
// (BuildFromConfig uses it to pass BuildOptions::max_tensors to the builders).
class TensorLimitScope {
 public:
  explicit TensorLimitScope(uint64_t max_tensors);
  ~TensorLimitScope();
  TensorLimitScope(const TensorLimitScope&) = delete;
  TensorLimitScope& operator=(const TensorLimitScope&) = delete;

 private:
  uint64_t previous_;
};

// Sets BuildOptions::compact_repeats for every ModelBuilder constructed on this thread while it
// lives (BuildFromConfig uses it).
class CompactRepeatsScope {
 public:
  explicit CompactRepeatsScope(bool compact);
  ~CompactRepeatsScope();
  CompactRepeatsScope(const CompactRepeatsScope&) = delete;
  CompactRepeatsScope& operator=(const CompactRepeatsScope&) = delete;

 private:
  bool previous_;
};

// A gated (SwiGLU-style) MLP under `prefix` without biases: gate_proj and up_proj (in -> width),
// down_proj (width -> out).
void GatedMlp(ModelBuilder& b, const std::string& prefix, uint64_t in, uint64_t width,
              uint64_t out);

// Layer name helper: Layer("model.layers", 3) -> "model.layers.3".
std::string Layer(std::string_view prefix, uint64_t index);

// Sets each field of `defaults` (a config class's defaults) that `json` lacks, or holds as null
// when `null_is_absent`, and returns them as "key = value, ..." in key order ("" when none was
// missing): the list a builder's "fields absent, ... defaults are used" assumption names.
std::string FillDefaults(nlohmann::json& json, const nlohmann::json& defaults,
                         bool null_is_absent = false);

// A config field listing at most `max_entries` integers in [0, kMaxConfigDimension]
// ("upsample_rates"); `fallback` when absent; else records an error naming it and returns {}.
std::vector<uint64_t> UintList(ModelBuilder& b, const HfConfig& c, std::string_view key,
                               std::vector<uint64_t> fallback, size_t max_entries = 64);

}  // namespace memfit::arch
