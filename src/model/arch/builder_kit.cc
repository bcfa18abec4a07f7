#include "model/arch/builder_kit.h"

#include <algorithm>
#include <initializer_list>

#include "formats/hf_config_json.h"
#include "memfit/checked_math.h"
#include "model/arch/mlx_quantization.h"

namespace memfit::arch {
namespace {

thread_local uint64_t t_max_tensors = kMaxBuiltTensors;
thread_local bool t_compact_repeats = false;

// Models up to this many tensors grow as vectors do; past it the builder reserves its hint.
constexpr uint64_t kSmallModelTensors = 4096;

// A config's first unsigned integer among `keys`, at the top level or in "text_config"; 0 if none.
uint64_t FirstCount(const nlohmann::json& raw, std::initializer_list<const char*> keys) {
  for (const nlohmann::json* level :
       {&raw, raw.contains("text_config") ? &raw["text_config"] : nullptr}) {
    if (level == nullptr || !level->is_object()) continue;
    for (const char* key : keys) {
      auto it = level->find(key);
      if (it != level->end() && it->is_number_unsigned()) return it->get<uint64_t>();
    }
  }
  return 0;
}

// About how many tensors a config describes, from above: layers x (routed experts + 8) x 12
// (an NVFP4 expert stores 3 linears x 4 tensors) plus 4,096. Only a capacity: an overestimate
// costs address space the model never touches, an underestimate one more doubling.
uint64_t ExpectedTensors(const HfConfig& config) {
  const auto& raw = config.raw();
  if (!raw.is_object()) return 0;
  constexpr uint64_t kCap = uint64_t{1} << 20;  // keeps the product below 2^64
  const uint64_t layers =
      std::min(kCap, FirstCount(raw, {"num_hidden_layers", "n_layer", "num_layers", "n_layers"}));
  const uint64_t experts =
      std::min(kCap, FirstCount(raw, {"n_routed_experts", "num_experts", "num_local_experts",
                                      "moe_num_experts", "n_experts"}));
  return (layers + 1) * (experts + 8) * 12 + kSmallModelTensors;
}

}  // namespace

TensorLimitScope::TensorLimitScope(uint64_t max_tensors) : previous_(t_max_tensors) {
  t_max_tensors = max_tensors;
}

TensorLimitScope::~TensorLimitScope() { t_max_tensors = previous_; }

CompactRepeatsScope::CompactRepeatsScope(bool compact) : previous_(t_compact_repeats) {
  t_compact_repeats = compact;
}

CompactRepeatsScope::~CompactRepeatsScope() { t_compact_repeats = previous_; }

ModelBuilder::ModelBuilder(const HfConfig& config, Dtype dtype)
    : where_(config.where()),
      dtype_(dtype),
      max_tensors_(t_max_tensors),
      capacity_hint_(std::min(ExpectedTensors(config), t_max_tensors)),
      compact_repeats_(t_compact_repeats),
      mlx_(CurrentMlxQuantization()) {
  FillCommon(config, model_);
}

ModelBuilder::ModelBuilder(const HfConfig& config) : ModelBuilder(config, Dtype::kF32) {
  dtype_ = CheckpointDtype(config, model_.assumptions);
}

void ModelBuilder::Fail(const Error& error) {
  if (error_.message.empty()) error_ = error;
}

void ModelBuilder::Grow() {
  auto& tensors = model_.tensors;
  if (tensors.size() == tensors.capacity() && tensors.size() >= kSmallModelTensors &&
      capacity_hint_ > tensors.capacity()) {
    tensors.reserve(capacity_hint_);
  }
}

void ModelBuilder::Emit(std::string name, std::vector<uint64_t> shape, Dtype dtype, TensorKind kind,
                        std::string tied_to, bool stored) {
  if (failed()) return;
  if (model_.tensors.size() + repeated_ >= max_tensors_) {
    FailTensorCap();
    return;
  }
  auto numel = CheckedProduct(shape);
  std::optional<uint64_t> bytes = numel ? TensorBytes(*numel, dtype) : std::nullopt;
  if (!bytes) {
    Fail(MakeError("{}: tensor \"{}\" is too large: its size overflows 64 bits", where_, name));
    return;
  }
  Grow();
  Tensor t;
  t.name = std::move(name);
  t.shape = std::move(shape);
  t.dtype = dtype;
  t.dtype_label = std::string(DtypeName(dtype));
  t.numel = *numel;
  t.bytes = *bytes;
  t.kind = kind;
  t.in_head = in_head_;
  t.tied_to = std::move(tied_to);
  t.stored = stored && !base_only_;
  t.base_only = base_only_;
  t.component = component_;
  model_.tensors.push_back(std::move(t));
}

void ModelBuilder::FailTensorCap() {
  Fail(
      MakeError("{}: the config describes more than {} tensors, memfit's limit for a model "
                "built from config.json (see docs/security.md)",
                where_, max_tensors_));
}

bool ModelBuilder::MarkRepeat(size_t first, uint64_t copies, size_t index_at) {
  auto& tensors = model_.tensors;
  if (failed() || first >= tensors.size() || copies < 2) return false;
  for (size_t i = first; i < tensors.size(); ++i) {
    const std::string& name = tensors[i].name;
    if (name.size() <= index_at || name[index_at] != '0' || tensors[i].repeat_span != 0 ||
        tensors[i].copies != 1 || name.size() - index_at > UINT32_MAX) {
      return false;  // not copy 0 of one module (or already a run): emit every copy instead
    }
  }
  const uint64_t span = tensors.size() - first;
  const auto extra = CheckedMul(span, copies - 1);
  if (!extra || tensors.size() + repeated_ + *extra > max_tensors_ || span > UINT32_MAX) {
    FailTensorCap();
    return true;  // failed: nothing more to emit
  }
  repeated_ += *extra;
  for (size_t i = first; i < tensors.size(); ++i) {
    tensors[i].copies = copies;
    tensors[i].repeat_index_from_end = static_cast<uint32_t>(tensors[i].name.size() - index_at);
  }
  tensors[first].repeat_span = static_cast<uint32_t>(span);
  return true;
}

void ModelBuilder::Param(std::string name, std::vector<uint64_t> shape) {
  Emit(std::move(name), std::move(shape), dtype_, TensorKind::kParameter, "", true);
}

void ModelBuilder::ParamAs(std::string name, std::vector<uint64_t> shape, Dtype dtype) {
  Emit(std::move(name), std::move(shape), dtype, TensorKind::kParameter, "", true);
}

void ModelBuilder::Packed(std::string name, std::vector<uint64_t> shape, Dtype dtype,
                          uint64_t logical_params) {
  const size_t before = model_.tensors.size();
  Emit(std::move(name), std::move(shape), dtype, TensorKind::kParameter, "", true);
  if (model_.tensors.size() > before && model_.tensors.back().numel != logical_params) {
    model_.tensors.back().logical_params = logical_params;
  }
}

bool ModelBuilder::MlxWeight(const std::string& prefix, uint64_t in, uint64_t out, uint64_t experts,
                             const std::string& lookup) {
  if (!mlx_) return false;
  const auto spec = MlxSpecFor(*mlx_, lookup.empty() ? prefix : lookup, in, component_);
  if (!spec) return false;
  EmitMlxQuantized(*this, prefix, in, out, *spec, experts);
  return true;
}

void ModelBuilder::StackedLinear(const std::string& name, std::vector<uint64_t> shape,
                                 uint64_t experts, uint64_t in, uint64_t out,
                                 const std::string& mlx_module) {
  const std::string module = name.ends_with(".weight") ? name.substr(0, name.size() - 7) : name;
  if (!MlxWeight(module, in, out, experts, mlx_module)) Param(name, std::move(shape));
}

void ModelBuilder::Linear(const std::string& prefix, uint64_t in, uint64_t out, bool bias) {
  if (!MlxWeight(prefix, in, out)) Param(prefix + ".weight", {out, in});
  if (bias) Param(prefix + ".bias", {out});
}

void ModelBuilder::Embedding(const std::string& prefix, uint64_t num, uint64_t dim) {
  if (!MlxWeight(prefix, dim, num)) Param(prefix + ".weight", {num, dim});
}

void ModelBuilder::LayerNorm(const std::string& prefix, uint64_t dim, bool bias) {
  Param(prefix + ".weight", {dim});
  if (bias) Param(prefix + ".bias", {dim});
}

void ModelBuilder::RmsNorm(const std::string& prefix, uint64_t dim) {
  Param(prefix + ".weight", {dim});
}

void ModelBuilder::Conv(const std::string& prefix, uint64_t in, uint64_t out,
                        std::vector<uint64_t> kernel, bool bias, uint64_t groups) {
  if (groups == 0 || in % groups != 0) {
    Fail(MakeError("{}: {}: {} input channels do not split into {} groups", where_, prefix, in,
                   groups));
    return;
  }
  std::vector<uint64_t> shape = {out, in / groups};
  shape.insert(shape.end(), kernel.begin(), kernel.end());
  Param(prefix + ".weight", std::move(shape));
  if (bias) Param(prefix + ".bias", {out});
}

void ModelBuilder::Buffer(std::string name, std::vector<uint64_t> shape, Dtype dtype,
                          bool persistent) {
  Emit(std::move(name), std::move(shape), dtype,
       persistent ? TensorKind::kBuffer : TensorKind::kNonPersistentBuffer, "", persistent);
}

void ModelBuilder::Tied(std::string name, std::vector<uint64_t> shape, const std::string& target) {
  Emit(std::move(name), std::move(shape), dtype_, TensorKind::kParameter, target, false);
}

Result<Model> ModelBuilder::Finish() {
  if (failed()) return error_;
  ByteSum stored, resident;
  bool overflow = false;
  uint64_t count = 0;  // every copy of a compact run counts against the cap
  for (const auto& t : model_.tensors) {
    const auto bytes = CheckedMul(t.bytes, t.copies);
    overflow = overflow || !bytes;
    if (t.stored) stored.Add(bytes.value_or(0));
    resident.Add(bytes.value_or(0));
    count += std::min<uint64_t>(t.copies, max_tensors_ + 1);
  }
  if (count > max_tensors_) {
    FailTensorCap();
    return error_;
  }
  if (overflow || stored.overflowed() || resident.overflowed()) {
    return MakeError("{}: the model's total size overflows 64 bits", where_);
  }
  MEMFIT_RETURN_IF_ERROR(CheckModelBounds(model_, where_));
  return std::move(model_);
}

uint64_t MarkStoredOnly(Model& model, size_t first) {
  uint64_t bytes = 0;  // bounded by the builder's overflow checks (Finish)
  for (size_t t = first; t < model.tensors.size(); ++t) {
    model.tensors[t].loaded = false;
    bytes += model.tensors[t].bytes * model.tensors[t].copies;
  }
  return bytes;
}

Dtype CheckpointDtype(const HfConfig& config, std::vector<std::string>& assumptions) {
  if (auto dtype = config.torch_dtype()) return *dtype;
  assumptions.push_back(kFloat32CheckpointAssumption);
  return Dtype::kF32;
}

namespace {

template <typename T>
T GetOrFail(ModelBuilder& b, const Result<T>& value) {
  if (value) return *value;
  b.Fail(value.error());
  return T{};
}

}  // namespace

uint64_t Get(ModelBuilder& b, const Result<uint64_t>& value) { return GetOrFail(b, value); }
bool Get(ModelBuilder& b, const Result<bool>& value) { return GetOrFail(b, value); }
double Get(ModelBuilder& b, const Result<double>& value) { return GetOrFail(b, value); }
std::string Get(ModelBuilder& b, const Result<std::string>& value) { return GetOrFail(b, value); }

void FillCommon(const HfConfig& config, Model& model) {
  model.model_type = config.model_type();
  auto archs = config.architectures();
  if (!archs.empty()) model.architecture = archs.front();
  model.config_dtype = config.torch_dtype();
  if (const auto* q = QuantizationConfigJson(config)) {
    model.quantization_config = std::make_shared<const JsonValue>(*q);
  } else if (auto mlx = config.raw().find("quantization");
             mlx != config.raw().end() && mlx->is_object()) {
    // Older mlx-lm releases write only "quantization" (mlx_quantization.h).
    model.quantization_config = std::make_shared<const JsonValue>(*mlx);
  }
  for (const auto& key : config.auto_map_keys()) {
    if (key.starts_with("AutoModelFor")) {
      model.auto_map_class = key;
      break;
    }
  }
}

uint64_t DivideExact(ModelBuilder& b, const HfConfig& config, uint64_t numerator,
                     std::string_view numerator_name, uint64_t denominator,
                     std::string_view denominator_name) {
  if (denominator == 0) {
    b.Fail(MakeError("{}: field \"{}\" must not be zero", config.where(), denominator_name));
    return 0;
  }
  if (numerator % denominator != 0) {
    b.Fail(MakeError("{}: \"{}\" = {} is not divisible by \"{}\" = {}", config.where(),
                     numerator_name, numerator, denominator_name, denominator));
    return 0;
  }
  return numerator / denominator;
}

bool CheckNonZero(ModelBuilder& b, const HfConfig& c,
                  std::initializer_list<std::pair<uint64_t, std::string_view>> fields,
                  std::string_view context) {
  if (b.failed()) return false;
  for (const auto& [value, key] : fields) {
    if (value != 0) continue;
    b.Fail(MakeError("{}: {}field \"{}\" must not be zero", c.where(), context, key));
    return false;
  }
  return true;
}

uint64_t MulDims(ModelBuilder& b, uint64_t x, uint64_t y, std::string_view what) {
  auto product = CheckedMul(x, y);
  if (!product) {
    b.Fail(MakeError("{}: {} = {} x {} overflows 64 bits", b.where(), what, x, y));
    return 0;
  }
  return *product;
}

void GatedMlp(ModelBuilder& b, const std::string& prefix, uint64_t in, uint64_t width,
              uint64_t out) {
  b.Linear(prefix + ".gate_proj", in, width, false);
  b.Linear(prefix + ".up_proj", in, width, false);
  b.Linear(prefix + ".down_proj", width, out, false);
}

std::string Layer(std::string_view prefix, uint64_t index) {
  return fmt::format("{}.{}", prefix, index);
}

std::string FillDefaults(nlohmann::json& json, const nlohmann::json& defaults,
                         bool null_is_absent) {
  std::string list;
  for (const auto& [key, value] : defaults.items()) {
    if (json.contains(key) && !(null_is_absent && json[key].is_null())) continue;
    json[key] = value;
    list += fmt::format("{}{} = {}", list.empty() ? "" : ", ", key, value.dump());
  }
  return list;
}

std::vector<uint64_t> UintList(ModelBuilder& b, const HfConfig& c, std::string_view key,
                               std::vector<uint64_t> fallback, size_t max_entries) {
  const auto& raw = c.raw();
  auto it = raw.find(std::string(key));
  if (it == raw.end() || it->is_null()) return fallback;
  std::vector<uint64_t> out;
  bool ok = it->is_array() && it->size() <= max_entries;
  if (ok) {
    for (const auto& v : *it) {
      if (!v.is_number_integer() || v.get<int64_t>() < 0 ||
          v.get<uint64_t>() > kMaxConfigDimension) {
        ok = false;
        break;
      }
      out.push_back(v.get<uint64_t>());
    }
  }
  if (!ok) {
    b.Fail(MakeError("{}: field \"{}\" must list at most {} non-negative integers up to {}",
                     c.where(), key, max_entries, kMaxConfigDimension));
    return {};
  }
  return out;
}

}  // namespace memfit::arch
