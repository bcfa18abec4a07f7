// Load memory per dtype and accelerate's estimate-memory figures. Formulas and sources:
// docs/estimates.md, "Load" and "accelerate compatibility".

#include "memfit/estimate_load.h"

#include <algorithm>
#include <map>

#include "base/enum_names.h"
#include "memfit/checked_math.h"
#include "memfit/load_summary.h"

namespace memfit {

namespace {

// Each load dtype's name, then the other spellings --dtype reads.
constexpr auto kLoadDtypes = std::to_array<EnumWord<LoadDtype>>({
    {"as stored", LoadDtype::kAsStored}, {"stored", LoadDtype::kAsStored},
    {"as-stored", LoadDtype::kAsStored}, {"auto", LoadDtype::kAsStored},
    {"float32", LoadDtype::kFloat32}, {"fp32", LoadDtype::kFloat32},
    {"float16", LoadDtype::kFloat16}, {"fp16", LoadDtype::kFloat16},
    {"bfloat16", LoadDtype::kBFloat16}, {"bf16", LoadDtype::kBFloat16},
    {"int8", LoadDtype::kInt8}, {"int4", LoadDtype::kInt4}});

}  // namespace

std::string_view LoadDtypeName(LoadDtype dtype) { return NameOf(dtype, kLoadDtypes); }

Result<LoadDtype> ParseLoadDtype(std::string_view name) {
  // "as stored", the name shown, is not a word --dtype reads ("stored" is).
  if (name != LoadDtypeName(LoadDtype::kAsStored)) {
    if (auto dtype = FindWord(name, kLoadDtypes)) return *dtype;
  }
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

namespace {

uint64_t LoadedEntryBytes(const LoadSummary::Entry& e, uint64_t bits) {
  if (bits == 0 || !e.castable) return e.bytes;
  auto total = CheckedMul(e.numel, bits);
  return total ? (*total + 7) / 8 : e.bytes;
}

// Stored bytes per Tensor::dtype_label in the labels' alphabetical order (what a std::map keyed
// by label gives), summed through a short list: a model has a handful of labels.
std::vector<std::pair<std::string, uint64_t>> StoredBytesByLabel(const Model& model) {
  std::vector<std::pair<std::string, uint64_t>> labels;
  size_t last = 0;
  for (const auto& t : model.tensors) {
    if (!t.stored) continue;
    if (last >= labels.size() || labels[last].first != t.dtype_label) {
      last = static_cast<size_t>(
          std::find_if(labels.begin(), labels.end(),
                       [&](const auto& l) { return l.first == t.dtype_label; }) -
          labels.begin());
      if (last == labels.size()) labels.emplace_back(t.dtype_label, 0);
    }
    labels[last].second += t.bytes * t.copies;  // bounded by CheckModelBounds
  }
  std::sort(labels.begin(), labels.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  return labels;
}

// Whether `next` can join the run `run` without changing any view (LoadSummary::Entry).
bool Mergeable(const LoadSummary::Entry& run, const LoadSummary::Entry& next) {
  if (run.block != next.block || run.parameter != next.parameter || run.castable != next.castable ||
      run.copies != 1 || next.copies != 1) {
    return false;
  }
  if (run.bytes == 0 || run.numel == 0 || next.bytes == 0 || next.numel == 0) return false;
  return !run.castable || run.numel % 2 == 0;
}

}  // namespace

LoadEstimate EstimateLoad(const Model& model, const LoadOptions& options,
                          const BlockAssignment& blocks) {
  return EstimateLoad(SummarizeLoad(model, blocks), options);
}

LoadSummary SummarizeLoad(const Model& model, const BlockAssignment& blocks) {
  LoadSummary out;
  out.totals = ComputeTotals(model);
  out.stored_by_label = StoredBytesByLabel(model);
  std::sort(out.stored_by_label.begin(), out.stored_by_label.end(),
            [](const auto& a, const auto& b) { return a.second > b.second; });
  out.components = ComponentTotals(model);
  out.block_names = blocks.names;
  out.config_dtype = model.config_dtype;
  out.tensors = ExpandedTensorCount(model);
  // Everything resident after loading, ties once (TensorFilter's defaults).
  const TensorFilter one{.size_of = [](const Tensor&) -> uint64_t { return 1; }};
  for (size_t ti = 0; ti < model.tensors.size(); ++ti) {
    const Tensor& t = model.tensors[ti];
    if (FilteredSize(t, one) != 1) continue;
    const bool parameter = t.kind == TensorKind::kParameter;
    LoadSummary::Entry e{
        .bytes = t.bytes,
        .numel = t.numel,
        .logical_params = LogicalParams(t),
        .block = blocks.tensor_block[ti],
        .parameter = parameter,
        .castable = parameter && IsFloatingPoint(t.dtype) && t.dtype != Dtype::kBlockQuantized};
    if (t.copies > 1) {
      // A compact run's copies as one tensor when no view rounds per tensor: ceil(n x c x bits / 8)
      // equals c x ceil(n x bits / 8) for an even n or a tensor kept as stored. Else the entry
      // keeps its count. Products are bounded by CheckModelBounds.
      if (!e.castable || e.numel % 2 == 0) {
        e.bytes *= t.copies;
        e.numel *= t.copies;
        e.logical_params *= t.copies;
      } else {
        e.copies = t.copies;
      }
    }
    if (!out.entries.empty() && Mergeable(out.entries.back(), e)) {
      // Totals were checked against 2^60 bytes and 2^56 elements (CheckModelBounds): no overflow.
      LoadSummary::Entry& run = out.entries.back();
      run.bytes += e.bytes;
      run.numel += e.numel;
      run.logical_params += e.logical_params;
    } else {
      out.entries.push_back(e);
    }
  }
  return out;
}

LoadEstimate EstimateLoad(const LoadSummary& summary, const LoadOptions& options) {
  LoadEstimate out;
  out.totals = summary.totals;
  // The total and the largest block (the first on ties) of one view, in one pass: what
  // SumBlocks + the largest of them give, without a Block per block. `bits`: TargetBits.
  std::vector<uint64_t> block_bytes(summary.block_names.size()),
      block_params(summary.block_names.size());
  auto view = [&](uint64_t bits) {
    std::fill(block_bytes.begin(), block_bytes.end(), 0);
    std::fill(block_params.begin(), block_params.end(), 0);
    uint64_t total = 0;
    for (const LoadSummary::Entry& e : summary.entries) {
      const uint64_t size = LoadedEntryBytes(e, bits) * e.copies;
      total += size;
      if (e.block < 0) continue;
      block_bytes[e.block] += size;
      if (e.parameter && size > 0) block_params[e.block] += e.logical_params * e.copies;
    }
    std::optional<Block> best;
    if (!block_bytes.empty()) {
      const size_t b = static_cast<size_t>(
          std::max_element(block_bytes.begin(), block_bytes.end()) - block_bytes.begin());
      best = Block{.name = summary.block_names[b], .bytes = block_bytes[b],
                   .parameters = block_params[b]};
    }
    return std::pair(total, best);
  };
  out.largest_block = view(0).second;
  out.dtype_bytes = summary.stored_by_label;

  for (LoadDtype dtype : options.dtypes) {
    LoadRow row{.dtype = dtype};
    auto [total, block] = view(TargetBits(dtype));
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
        if (summary.config_dtype == Dtype::kF32) row.training_adam_bytes = params * 16;
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
  for (const auto& [name, part] : summary.components) {
    out.notes.push_back(fmt::format("component {}: {} parameters, {} bytes resident as stored", name,
                                    part.parameters, part.resident_bytes));
  }
  out.notes.push_back(
      "largest block: the biggest indivisible unit accelerate's device_map keeps on one device");
  out.notes.push_back(
      "training (AdamW): weights + gradients + optimizer states, 16 B/param in float32 and 18 "
      "B/param in fp16/bf16 mixed precision; activations not included (`memfit train` adds them "
      "at a context, so it reads higher; accelerate's \"training using Adam\" is 4 x the weights "
      "at the row's dtype, so it reads lower)");
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
