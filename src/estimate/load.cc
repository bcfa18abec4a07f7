// Load memory per dtype and accelerate's estimate-memory figures. Formulas and sources:
// docs/estimates.md, "Load" and "accelerate compatibility".

#include "memfit/estimate_load.h"

#include <algorithm>
#include <map>

#include "memfit/checked_math.h"

namespace memfit {

std::string_view LoadDtypeName(LoadDtype dtype) {
  switch (dtype) {
    case LoadDtype::kAsStored: return "as stored";
    case LoadDtype::kFloat32: return "float32";
    case LoadDtype::kFloat16: return "float16";
    case LoadDtype::kBFloat16: return "bfloat16";
    case LoadDtype::kInt8: return "int8";
    case LoadDtype::kInt4: return "int4";
  }
  return "?";
}

Result<LoadDtype> ParseLoadDtype(std::string_view name) {
  for (auto d : {LoadDtype::kFloat32, LoadDtype::kFloat16, LoadDtype::kBFloat16, LoadDtype::kInt8,
                 LoadDtype::kInt4}) {
    if (LoadDtypeName(d) == name) return d;
  }
  if (name == "stored" || name == "as-stored" || name == "auto") return LoadDtype::kAsStored;
  if (name == "fp32") return LoadDtype::kFloat32;
  if (name == "fp16") return LoadDtype::kFloat16;
  if (name == "bf16") return LoadDtype::kBFloat16;
  return MakeError("unknown dtype \"{}\" (expected float32, float16, bfloat16, int8, int4 or stored)",
                   name);
}

namespace {

// Bits per element a floating parameter takes when loaded at `dtype`; 0 = keep as stored.
uint64_t TargetBits(LoadDtype dtype) {
  switch (dtype) {
    case LoadDtype::kFloat32: return 32;
    case LoadDtype::kFloat16:
    case LoadDtype::kBFloat16: return 16;
    case LoadDtype::kInt8: return 8;
    case LoadDtype::kInt4: return 4;
    case LoadDtype::kAsStored: return 0;
  }
  return 0;
}

}  // namespace

uint64_t LoadedTensorBytes(const Tensor& t, LoadDtype dtype) {
  uint64_t bits = TargetBits(dtype);
  if (bits == 0 || t.kind != TensorKind::kParameter || !IsFloatingPoint(t.dtype) ||
      t.dtype == Dtype::kBlockQuantized) {
    return t.bytes;
  }
  auto total = CheckedMul(t.numel, bits);
  return total ? (*total + 7) / 8 : t.bytes;
}

LoadEstimate EstimateLoad(const Model& model, const LoadOptions& options) {
  return EstimateLoad(model, options, AssignBlocks(model, TensorFilter{}));
}

LoadEstimate EstimateLoad(const Model& model, const LoadOptions& options,
                          const BlockAssignment& blocks) {
  LoadEstimate out;
  out.totals = ComputeTotals(model);
  // Everything resident after loading, ties once (TensorFilter's defaults): which tensors count,
  // found once for every view below.
  const TensorFilter one{.size_of = [](const Tensor&) -> uint64_t { return 1; }};
  std::vector<bool> resident(model.tensors.size());
  for (size_t ti = 0; ti < model.tensors.size(); ++ti) {
    resident[ti] = FilteredSize(model.tensors[ti], one) == 1;
  }
  // The total and the largest block (the first on ties) of one view, in one pass: what
  // SumBlocks + the largest of them give, without a Block per block.
  std::vector<uint64_t> block_bytes(blocks.names.size()), block_params(blocks.names.size());
  auto view = [&](auto size_of) {
    std::fill(block_bytes.begin(), block_bytes.end(), 0);
    std::fill(block_params.begin(), block_params.end(), 0);
    uint64_t total = 0;
    for (size_t ti = 0; ti < model.tensors.size(); ++ti) {
      if (!resident[ti]) continue;
      const Tensor& t = model.tensors[ti];
      const uint64_t size = size_of(t);
      total += size;
      const int32_t b = blocks.tensor_block[ti];
      if (b < 0) continue;
      block_bytes[b] += size;
      if (t.kind == TensorKind::kParameter && size > 0) block_params[b] += LogicalParams(t);
    }
    std::optional<Block> best;
    if (!block_bytes.empty()) {
      const size_t b = static_cast<size_t>(
          std::max_element(block_bytes.begin(), block_bytes.end()) - block_bytes.begin());
      best = Block{.name = blocks.names[b], .bytes = block_bytes[b], .parameters = block_params[b]};
    }
    return std::pair(total, best);
  };
  out.largest_block = view([](const Tensor& t) { return t.bytes; }).second;
  std::map<std::string, uint64_t> by_dtype;
  for (const auto& t : model.tensors) {
    if (t.stored) by_dtype[t.dtype_label] += t.bytes;
  }
  out.dtype_bytes.assign(by_dtype.begin(), by_dtype.end());
  std::sort(out.dtype_bytes.begin(), out.dtype_bytes.end(),
            [](const auto& a, const auto& b) { return a.second > b.second; });

  for (LoadDtype dtype : options.dtypes) {
    LoadRow row{.dtype = dtype};
    auto [total, block] = view([dtype](const Tensor& t) { return LoadedTensorBytes(t, dtype); });
    row.total_bytes = total;
    row.largest_block_bytes = block ? block->bytes : 0;
    const uint64_t params = out.totals.parameters;
    switch (dtype) {
      case LoadDtype::kFloat32:  // 4 weights + 4 gradients + 8 AdamW states
        row.training_adam_bytes = params * 16 + out.totals.buffer_bytes;
        break;
      case LoadDtype::kFloat16:
      case LoadDtype::kBFloat16:  // mixed precision: 4 + 2 weights, 4 gradients, 8 states
        row.training_adam_bytes = params * 18 + out.totals.buffer_bytes;
        break;
      case LoadDtype::kAsStored:
        if (model.config_dtype == Dtype::kF32) row.training_adam_bytes = params * 16;
        else row.training_adam_bytes = params * 18;
        *row.training_adam_bytes += out.totals.buffer_bytes;
        break;
      default:
        break;  // full training of int8/int4 weights is not possible (QLoRA trains adapters)
    }
    out.rows.push_back(row);
  }
  out.notes.push_back(
      "load: parameters (tied ones once) and buffers resident after loading; floating-point "
      "parameters cast to the row's dtype, integer tensors and buffers as stored; int8/int4 rows "
      "are plain 1 and 0.5 bytes per weight with no quantization scales");
  for (const auto& [name, part] : ComponentTotals(model)) {
    out.notes.push_back(fmt::format("component {}: {} parameters, {} bytes resident as stored", name,
                                    part.parameters, part.resident_bytes));
  }
  out.notes.push_back(
      "largest block: the biggest indivisible unit accelerate's device_map keeps on one device");
  out.notes.push_back(
      "training (AdamW): weights + gradients + optimizer states, 16 B/param in float32 and 18 "
      "B/param in fp16/bf16 mixed precision; activations not included (see `memfit train`)");
  return out;
}

namespace {

std::string ConstructorClass(const Model& model, bool with_head) {
  if (with_head) {
    std::string cls = model.auto_map_class;
    std::string base = model.architecture;
    for (std::string_view cut : {"For", "LMHead"}) {
      auto pos = base.find(cut);
      if (pos != std::string::npos) base = base.substr(0, pos);
    }
    if (cls.starts_with("AutoModel")) cls = base + cls.substr(9);
    return cls;
  }
  std::string base = model.architecture;
  for (std::string_view cut : {"For", "LMHead"}) {
    auto pos = base.find(cut);
    if (pos != std::string::npos) base = base.substr(0, pos);
  }
  if (base.empty()) return "AutoModel";
  return base.ends_with("Model") ? base : base + "Model";
}

}  // namespace

Result<AccelerateEstimate> EstimateAccelerate(const Model& model,
                                              const AccelerateOptions& options) {
  AccelerateEstimate out;
  const bool with_head = !model.auto_map_class.empty();
  out.constructor_class = ConstructorClass(model, with_head);
  TensorFilter filter;
  filter.include_head = with_head;
  filter.count_ties_once = !with_head;  // init_empty_weights breaks ties of the head classes
  filter.count_broken_ties = true;      // and ties made by assigning a parameter (BART)
  // accelerate builds in float32: floating tensors at 32 bits; others at their own size, bool at
  // 1/8 byte (dtype_byte_size). Counted in bits to keep the 1/8.
  filter.size_of = [](const Tensor& t) -> uint64_t {
    uint64_t bits = IsFloatingPoint(t.dtype) ? 32 : (t.dtype == Dtype::kBool ? 1 : DtypeBits(t.dtype));
    return t.numel * bits;
  };
  uint64_t total_bits = 0;
  for (const auto& t : model.tensors) total_bits += FilteredSize(t, filter);
  auto blocks = IndivisibleBlocks(model, filter);
  uint64_t largest_bits = 0;
  for (const auto& b : blocks) largest_bits = std::max(largest_bits, b.bytes);
  for (const auto& b : blocks) {
    if (b.bytes != largest_bits) continue;
    // accelerate names modules of the base model, without base_model_prefix.
    std::string name = b.name;
    if (!with_head && !model.base_model_prefix.empty() && name.starts_with(model.base_model_prefix)) {
      name = name.substr(model.base_model_prefix.size());
    }
    out.largest_layer_names.push_back(name);
  }
  const double total = static_cast<double>(total_bits) / 8.0;
  const double largest = static_cast<double>(largest_bits) / 8.0;
  for (const auto& name : options.dtypes) {
    double divisor;
    if (name == "float32") divisor = 1;
    else if (name == "float16") divisor = 2;
    else if (name == "int8") divisor = 4;
    else if (name == "int4") divisor = 8;
    else return MakeError("--accelerate: dtype \"{}\" is not one of accelerate's (float32, float16, int8, int4)", name);
    AccelerateRow row{.dtype = name, .largest_layer_bytes = largest / divisor,
                      .total_bytes = total / divisor};
    if (name == "float32") row.training_adam_bytes = total * 4;
    else if (name == "float16") row.training_adam_bytes = total * 2;
    out.rows.push_back(row);
  }
  return out;
}

}  // namespace memfit
