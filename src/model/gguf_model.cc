// Model from GGUF headers. Tensor sizes are exact (ggml block table); hyperparameters come from
// model/gguf_hparams.cc. Layers are the "blk.N." groups (llama.cpp's repeating layers); the input
// layer is token_embd (+ position/type embeddings), the output layer output_norm + output.

#include "memfit/gguf_model.h"

#include <charconv>
#include <unordered_map>

#include "memfit/checked_math.h"
#include "model/gguf_hparams.h"

namespace memfit {
namespace {

Dtype DtypeOf(const GgmlTypeInfo& t) {
  switch (t.id) {
    case 0: return Dtype::kF32;
    case 1: return Dtype::kF16;
    case 24: return Dtype::kI8;
    case 25: return Dtype::kI16;
    case 26: return Dtype::kI32;
    case 27: return Dtype::kI64;
    case 28: return Dtype::kF64;
    case 30: return Dtype::kBF16;
    default: return Dtype::kBlockQuantized;
  }
}

Status CheckSplits(const std::vector<GgufShard>& shards) {
  const uint64_t n = shards.size();
  for (uint64_t i = 0; i < n; ++i) {
    const GgufFile& f = shards[i].file;
    auto no = f.GetUint("split.no");
    auto count = f.GetUint("split.count");
    if (n == 1 && !count) return Ok{};
    if (!no || !count) return MakeError("{}: split file without split.no/split.count", shards[i].name);
    if (*count != n) {
      return MakeError("{}: split.count is {} but {} shard files were given", shards[i].name, *count, n);
    }
    if (*no != i) return MakeError("{}: split.no is {}, expected {}", shards[i].name, *no, i);
  }
  if (auto total = shards[0].file.GetUint("split.tensors.count")) {
    uint64_t seen = 0;
    for (const auto& s : shards) seen += s.file.tensors.size();
    if (seen != *total) {
      return MakeError("{}: split.tensors.count is {} but the shards hold {} tensors", shards[0].name, *total, seen);
    }
  }
  return Ok{};
}

}  // namespace

int64_t GgufLayerOf(std::string_view name) {
  if (!name.starts_with("blk.")) return -1;
  name.remove_prefix(4);
  int64_t il = -1;
  auto [ptr, ec] = std::from_chars(name.data(), name.data() + name.size(), il);
  if (ec != std::errc() || ptr == name.data() || ptr == name.data() + name.size() || *ptr != '.') return -1;
  return il;
}

std::string_view GgufFileTypeName(uint64_t ft) {
  // llama.cpp src/llama-model-loader.cpp llama_model_ftype_name.
  switch (ft) {
    case 0: return "all F32";
    case 1: return "F16";
    case 2: return "Q4_0";
    case 3: return "Q4_1";
    case 7: return "Q8_0";
    case 8: return "Q5_0";
    case 9: return "Q5_1";
    case 10: return "Q2_K - Medium";
    case 11: return "Q3_K - Small";
    case 12: return "Q3_K - Medium";
    case 13: return "Q3_K - Large";
    case 14: return "Q4_K - Small";
    case 15: return "Q4_K - Medium";
    case 16: return "Q5_K - Small";
    case 17: return "Q5_K - Medium";
    case 18: return "Q6_K";
    case 19: return "IQ2_XXS - 2.0625 bpw";
    case 20: return "IQ2_XS - 2.3125 bpw";
    case 21: return "Q2_K - Small";
    case 22: return "IQ3_XS - 3.3 bpw";
    case 23: return "IQ3_XXS - 3.0625 bpw";
    case 24: return "IQ1_S - 1.5625 bpw";
    case 25: return "IQ4_NL - 4.5 bpw";
    case 26: return "IQ3_S - 3.4375 bpw";
    case 27: return "IQ3_S mix - 3.66 bpw";
    case 28: return "IQ2_S - 2.5 bpw";
    case 29: return "IQ2_M - 2.7 bpw";
    case 30: return "IQ4_XS - 4.25 bpw";
    case 31: return "IQ1_M - 1.75 bpw";
    case 32: return "BF16";
    case 36: return "TQ1_0 - 1.69 bpw ternary";
    case 37: return "TQ2_0 - 2.06 bpw ternary";
    case 38: return "MXFP4 MoE";
    default: return "";
  }
}

GgufModelFacts GgufFacts(const std::vector<GgufShard>& shards) {
  GgufModelFacts facts;
  if (shards.empty()) return facts;
  const GgufFile& f = shards[0].file;
  if (auto ft = f.GetUint("general.file_type")) facts.file_type = std::string(GgufFileTypeName(*ft));
  for (const auto& s : shards) {
    // Saturating: each file's sizes are checked, their sum over shards is only reported.
    facts.file_bytes = CheckedAdd(facts.file_bytes, s.file.file_bytes).value_or(UINT64_MAX);
    facts.tensor_bytes = CheckedAdd(facts.tensor_bytes, s.file.tensor_bytes).value_or(UINT64_MAX);
  }
  auto type = f.GetString("general.type");
  auto arch = f.GetString("general.architecture");
  facts.is_projector = (type && (*type == "mmproj" || *type == "clip")) || (arch && *arch == "clip");
  facts.shard_count = static_cast<uint32_t>(shards.size());
  return facts;
}

Result<Model> ModelFromGguf(const std::vector<GgufShard>& shards, std::string_view name) {
  if (shards.empty()) return MakeError("{}: no GGUF files", name);
  MEMFIT_RETURN_IF_ERROR(CheckSplits(shards));
  const GgufFile& meta = shards[0].file;
  Model model;
  model.name = std::string(name);
  auto arch = meta.GetString("general.architecture");
  if (!arch) return MakeError("{}: general.architecture is missing or not a string", shards[0].name);
  model.model_type = *arch;
  model.architecture = *arch;
  const GgufModelFacts facts = GgufFacts(shards);
  model.source = fmt::format("GGUF v{} header{}", meta.version,
                             shards.size() > 1 ? fmt::format(" ({} split files)", shards.size()) : "");
  size_t count = 0;
  for (const auto& s : shards) count += s.file.tensors.size();
  model.tensors.reserve(count);
  std::unordered_map<std::string_view, size_t> seen;
  seen.reserve(count);
  ByteSum total;
  int64_t max_layer = -1;
  for (size_t si = 0; si < shards.size(); ++si) {
    for (const auto& info : shards[si].file.tensors) {
      if (!seen.emplace(info.name, si).second) {
        return MakeError("{}: tensor \"{}\" appears in more than one split file", shards[si].name, info.name);
      }
      Tensor t;
      t.name = info.name;
      t.shape.assign(info.dims.rbegin(), info.dims.rend());  // outermost first, as in PyTorch
      t.dtype = DtypeOf(*info.type);
      t.dtype_label = std::string(info.type->name);
      t.numel = info.elements;
      t.bytes = info.bytes;
      t.in_head = info.name.starts_with("output.");
      if (facts.is_projector) t.component = "projector";
      total.Add(t.bytes);
      max_layer = std::max(max_layer, GgufLayerOf(info.name));
      model.tensors.push_back(std::move(t));
    }
  }
  if (total.overflowed()) return MakeError("{}: total tensor bytes overflow 64 bits", name);
  // The bounds every estimator relies on (model.h): a sparse or remote file may claim tensors of
  // up to 2^63 elements each.
  MEMFIT_RETURN_IF_ERROR(CheckModelBounds(model, name));
  model.no_split_patterns = {"blk.*"};
  if (facts.is_projector) {
    model.notes.push_back("multimodal projector (mmproj) file: loaded beside a language model with --mmproj");
    return model;
  }
  // Which layers hold routed experts. The layer numbers come from tensor names ("blk.N."), so the
  // vector is sized by block_count, never by N: a name may say blk.9000000000000000000 (such a
  // tensor is rejected below, once block_count has been read and checked).
  const uint64_t block_count = meta.GetUint(*arch + ".block_count").value_or(0);
  const uint64_t moe_layers = max_layer >= 0 ? std::min(static_cast<uint64_t>(max_layer) + 1, block_count) : 0;
  std::vector<bool> layer_moe(static_cast<size_t>(std::min<uint64_t>(moe_layers, kMaxGgufLayers)), false);
  bool any_tensor = false;
  for (const auto& t : model.tensors) {
    any_tensor = true;
    int64_t il = GgufLayerOf(t.name);
    if (il >= 0 && static_cast<uint64_t>(il) < layer_moe.size() && t.name.find("_exps.") != std::string::npos) {
      layer_moe[il] = true;
    }
  }
  if (!any_tensor) layer_moe.clear();
  MEMFIT_RETURN_IF_ERROR(ReadGgufHyperparameters(meta, *arch, layer_moe, model));
  if (max_layer >= 0 && static_cast<uint64_t>(max_layer) >= model.hp.num_layers) {
    return MakeError("{}: tensor blk.{} beyond {}.block_count {}", name, max_layer, *arch, model.hp.num_layers);
  }
  bool has_output = false, has_embd = false;
  for (const auto& t : model.tensors) {
    has_output |= t.name == "output.weight";
    has_embd |= t.name == "token_embd.weight";
    if (t.name == "token_embd.weight" && model.hp.vocab_size == 0 && !t.shape.empty() &&
        t.shape.front() <= kMaxGgufHparam) {
      model.hp.vocab_size = t.shape.front();
    }
  }
  model.hp.tie_word_embeddings = any_tensor && !has_output && has_embd;
  if (model.hp.tie_word_embeddings) {
    model.notes.push_back("no output.weight: the output layer reuses token_embd.weight (tied)");
  }
  if (!any_tensor) model.notes.push_back("vocab-only GGUF file: no tensors, hyperparameters only");
  if (!facts.file_type.empty()) model.notes.push_back("file type " + facts.file_type);
  return model;
}

}  // namespace memfit
