#include "model/arch/builder_kit.h"

#include "memfit/checked_math.h"

namespace memfit::arch {
namespace {

thread_local uint64_t t_max_tensors = kMaxBuiltTensors;

}  // namespace

TensorLimitScope::TensorLimitScope(uint64_t max_tensors) : previous_(t_max_tensors) {
  t_max_tensors = max_tensors;
}

TensorLimitScope::~TensorLimitScope() { t_max_tensors = previous_; }

ModelBuilder::ModelBuilder(const HfConfig& config, Dtype dtype)
    : where_(config.where()), dtype_(dtype), max_tensors_(t_max_tensors) {
  FillCommon(config, model_);
}

ModelBuilder::ModelBuilder(const HfConfig& config) : ModelBuilder(config, Dtype::kF32) {
  dtype_ = CheckpointDtype(config, model_.assumptions);
}

void ModelBuilder::Fail(const Error& error) {
  if (error_.message.empty()) error_ = error;
}

void ModelBuilder::Emit(const std::string& name, std::vector<uint64_t> shape, Dtype dtype,
                        TensorKind kind, std::string tied_to, bool stored) {
  if (failed()) return;
  if (model_.tensors.size() >= max_tensors_) {
    Fail(MakeError("{}: the config describes more than {} tensors, memfit's limit for a model "
                   "built from config.json (see docs/security.md)",
                   where_, max_tensors_));
    return;
  }
  auto numel = CheckedProduct(shape);
  std::optional<uint64_t> bytes = numel ? TensorBytes(*numel, dtype) : std::nullopt;
  if (!bytes) {
    Fail(MakeError("{}: tensor \"{}\" is too large: its size overflows 64 bits", where_, name));
    return;
  }
  Tensor t;
  t.name = name;
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

void ModelBuilder::Param(const std::string& name, std::vector<uint64_t> shape) {
  Emit(name, std::move(shape), dtype_, TensorKind::kParameter, "", true);
}

void ModelBuilder::ParamAs(const std::string& name, std::vector<uint64_t> shape, Dtype dtype) {
  Emit(name, std::move(shape), dtype, TensorKind::kParameter, "", true);
}

void ModelBuilder::Packed(const std::string& name, std::vector<uint64_t> shape, Dtype dtype,
                          uint64_t logical_params) {
  const size_t before = model_.tensors.size();
  Emit(name, std::move(shape), dtype, TensorKind::kParameter, "", true);
  if (model_.tensors.size() > before && model_.tensors.back().numel != logical_params) {
    model_.tensors.back().logical_params = logical_params;
  }
}

void ModelBuilder::Linear(const std::string& prefix, uint64_t in, uint64_t out, bool bias) {
  Param(prefix + ".weight", {out, in});
  if (bias) Param(prefix + ".bias", {out});
}

void ModelBuilder::Embedding(const std::string& prefix, uint64_t num, uint64_t dim) {
  Param(prefix + ".weight", {num, dim});
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

void ModelBuilder::Buffer(const std::string& name, std::vector<uint64_t> shape, Dtype dtype,
                          bool persistent) {
  Emit(name, std::move(shape), dtype,
       persistent ? TensorKind::kBuffer : TensorKind::kNonPersistentBuffer, "", persistent);
}

void ModelBuilder::Tied(const std::string& name, std::vector<uint64_t> shape,
                        const std::string& target) {
  Emit(name, std::move(shape), dtype_, TensorKind::kParameter, target, false);
}

Result<Model> ModelBuilder::Finish() {
  if (failed()) return error_;
  ByteSum stored, resident;
  for (const auto& t : model_.tensors) {
    if (t.stored) stored.Add(t.bytes);
    resident.Add(t.bytes);
  }
  if (stored.overflowed() || resident.overflowed()) {
    return MakeError("{}: the model's total size overflows 64 bits", where_);
  }
  MEMFIT_RETURN_IF_ERROR(CheckModelBounds(model_, where_));
  return std::move(model_);
}

Dtype CheckpointDtype(const HfConfig& config, std::vector<std::string>& assumptions) {
  if (auto dtype = config.torch_dtype()) return *dtype;
  assumptions.push_back(
      "config.json names no torch_dtype: weights assumed float32 (transformers' default)");
  return Dtype::kF32;
}

uint64_t Get(ModelBuilder& b, const Result<uint64_t>& value) {
  if (!value) {
    b.Fail(value.error());
    return 0;
  }
  return *value;
}

bool Get(ModelBuilder& b, const Result<bool>& value) {
  if (!value) {
    b.Fail(value.error());
    return false;
  }
  return *value;
}

double Get(ModelBuilder& b, const Result<double>& value) {
  if (!value) {
    b.Fail(value.error());
    return 0;
  }
  return *value;
}

std::string Get(ModelBuilder& b, const Result<std::string>& value) {
  if (!value) {
    b.Fail(value.error());
    return {};
  }
  return *value;
}

void FillCommon(const HfConfig& config, Model& model) {
  model.model_type = config.model_type();
  auto archs = config.architectures();
  if (!archs.empty()) model.architecture = archs.front();
  model.config_dtype = config.torch_dtype();
  if (const auto* q = config.quantization_config()) model.quantization_config = *q;
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

uint64_t MulDims(ModelBuilder& b, uint64_t x, uint64_t y, std::string_view what) {
  auto product = CheckedMul(x, y);
  if (!product) {
    b.Fail(MakeError("{}: {} = {} x {} overflows 64 bits", b.where(), what, x, y));
    return 0;
  }
  return *product;
}

std::string Layer(std::string_view prefix, uint64_t index) {
  return fmt::format("{}.{}", prefix, index);
}

}  // namespace memfit::arch
