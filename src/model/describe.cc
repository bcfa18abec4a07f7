#include "memfit/describe.h"
#include "formats/hf_config_json.h"

#include <algorithm>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "memfit/checked_math.h"
#include "memfit/build_exact.h"
#include "memfit/text_hparams.h"
#include "model/logical_params.h"
#include "model/mlx_logical_params.h"

namespace memfit {
namespace {

bool IsNumber(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// Block patterns guessed from names when no config says what the layers are: the first numbered
// segment after a known container ("model.layers.7" -> "model.layers.*", "transformer.h.7").
// At most kMaxGuessedPatterns are kept (real checkpoints have a handful): every module of the tree
// is matched against each pattern, so the count bounds that work (docs/security.md).
constexpr size_t kMaxGuessedPatterns = 64;

std::vector<std::string> GuessNoSplitPatterns(const std::vector<Tensor>& tensors,
                                              std::vector<std::string>& notes) {
  static const std::set<std::string, std::less<>> kContainers = {"layers", "h", "layer", "blocks",
                                                                 "block"};
  std::set<std::string> patterns;
  std::vector<std::string_view> segments;
  for (const auto& t : tensors) {
    segments.clear();
    std::string_view name = t.name;
    for (size_t pos; (pos = name.find('.')) != std::string_view::npos; name.remove_prefix(pos + 1)) {
      segments.push_back(name.substr(0, pos));
    }
    std::string pattern;
    for (size_t i = 0; i < segments.size(); ++i) {
      bool numbered = IsNumber(segments[i]);
      if (!pattern.empty()) pattern += '.';
      pattern += numbered ? std::string_view("*") : segments[i];
      if (numbered && i > 0 && kContainers.count(segments[i - 1])) {
        patterns.insert(pattern);
        break;
      }
    }
  }
  std::vector<std::string> out(patterns.begin(), patterns.end());
  if (out.size() > kMaxGuessedPatterns) {
    notes.push_back(fmt::format(
        "tensor names suggest {} kinds of numbered layer; only the first {} (by name) are treated "
        "as indivisible blocks",
        out.size(), kMaxGuessedPatterns));
    out.resize(kMaxGuessedPatterns);
  }
  return out;
}

Result<Model> FromHeaders(const ModelInputs& inputs) {
  Model model;
  size_t count = 0;
  for (const auto& [file, header] : inputs.safetensors) count += header.tensors.size();
  model.tensors.reserve(count);
  std::unordered_map<std::string_view, std::string_view> seen;  // views into `inputs`
  seen.reserve(count);
  ByteSum total;
  for (const auto& [file, header] : inputs.safetensors) {
    for (const auto& info : header.tensors) {
      auto [it, inserted] = seen.emplace(info.name, file);
      if (!inserted) {
        return MakeError("{}: tensor \"{}\" appears in both {} and {}", inputs.location, info.name,
                         it->second, file);
      }
      Tensor t;
      t.name = info.name;
      t.shape = info.shape;
      t.dtype = info.dtype;
      t.dtype_label = std::string(DtypeName(info.dtype));
      t.numel = CheckedProduct(info.shape).value_or(0);  // validated by the reader
      t.bytes = info.bytes();
      total.Add(t.bytes);
      model.tensors.push_back(std::move(t));
    }
  }
  if (total.overflowed()) return MakeError("{}: total tensor bytes overflow 64 bits", inputs.location);
  return model;
}

// Adds what the config's builder knows (head, ties, buffers, hyperparameters, blocks) to a model
// read from headers.
void MergeBuilt(Model& model, Model built) {
  std::unordered_map<std::string, const Tensor*> by_name;
  by_name.reserve(built.tensors.size());
  for (const auto& t : built.tensors) by_name.emplace(t.name, &t);
  size_t unknown = 0;
  std::unordered_map<std::string, bool> present;
  for (auto& t : model.tensors) {
    present.emplace(t.name, true);
    auto it = by_name.find(t.name);
    if (it == by_name.end()) {
      ++unknown;
      continue;
    }
    t.in_head = it->second->in_head;
    // The builder knows the logical shape (bitsandbytes 4-bit: an odd out x in).
    if (it->second->logical_params && it->second->numel == t.numel) {
      t.logical_params = it->second->logical_params;
    }
    t.component = it->second->component;
    if (it->second->kind != TensorKind::kParameter) t.kind = it->second->kind;
    if (!it->second->tied_to.empty() && !present.count(it->second->tied_to)) {
      // Stored although tied (e.g. falcon-7b's lm_head): the file holds it twice, memory once.
      t.tied_to = it->second->tied_to;
    } else if (!it->second->tied_to.empty()) {
      t.tied_to = it->second->tied_to;
    }
  }
  size_t stored_tied = 0;
  for (const auto& t : model.tensors) {
    if (!t.tied_to.empty()) ++stored_tied;
  }
  if (stored_tied > 0) {
    model.notes.push_back(fmt::format(
        "the checkpoint stores {} tied tensor(s) twice; once loaded they share memory",
        stored_tied));
  }
  // Resident tensors the checkpoint does not hold: ties and non-persistent buffers.
  for (auto& t : built.tensors) {
    if (present.count(t.name)) continue;
    if (!t.tied_to.empty() || t.kind == TensorKind::kNonPersistentBuffer ||
        t.kind == TensorKind::kBuffer) {
      t.stored = false;
      model.tensors.push_back(std::move(t));
    }
  }
  if (unknown > 0) {
    model.notes.push_back(fmt::format(
        "{} tensor(s) in the checkpoint are not part of the {} architecture memfit builds from "
        "config.json (counted as stored)",
        unknown, built.model_type));
  }
  model.hp = std::move(built.hp);
  model.no_split_patterns = std::move(built.no_split_patterns);
  model.model_type = built.model_type;
  model.architecture = built.architecture;
  model.auto_map_class = built.auto_map_class;
  model.base_model_prefix = built.base_model_prefix;
  model.config_dtype = built.config_dtype;
  model.quantization_config = std::move(built.quantization_config);
}

// A model no builder can build from config.json, whose weight index states the stored bytes:
// one tensor of total_size bytes in the config's dtype, the hyperparameters from the generic
// reader when it finds a text model. Load figures are exact; the parameter count and the layer
// structure are not known, and the assumptions say so.
Model IndexOnlyModel(const HfConfig& config, uint64_t total_size, const std::string& index_name,
                     const Error& why) {
  Model model;
  model.model_type = config.model_type();
  auto archs = config.architectures();
  if (!archs.empty()) model.architecture = archs.front();
  model.config_dtype = config.torch_dtype();
  const Dtype dtype = model.config_dtype.value_or(Dtype::kBF16);
  const uint64_t bytes_per = std::max<uint64_t>(DtypeBits(dtype) / 8, 1);
  Tensor t;
  t.name = "weights";
  t.dtype = dtype;
  t.dtype_label = std::string(DtypeName(dtype));
  t.shape = {total_size / bytes_per};
  t.numel = total_size / bytes_per;
  t.bytes = total_size;
  model.tensors.push_back(std::move(t));
  model.source = index_name + " total_size (no tensor shapes)";
  model.assumptions.push_back(fmt::format(
      "weights: the {} total_size ({} bytes, exact); parameters = bytes / {} ({}{}); no "
      "per-layer blocks: {}",
      index_name, total_size, bytes_per, DtypeName(dtype),
      model.config_dtype ? "" : ", assumed: the config names no torch_dtype", why.message));
  if (auto text = ReadTextHyperparameters(config)) {
    model.hp = std::move(text->hp);
    for (auto& a : text->assumptions) model.assumptions.push_back(std::move(a));
  }
  return model;
}

}  // namespace

Result<Model> DescribeModel(const ModelInputs& inputs, const DescribeOptions& options) {
  if (!inputs.gguf.empty()) {
    MEMFIT_ASSIGN_OR_RETURN(Model model, ModelFromGguf(inputs.gguf, inputs.name));
    for (const auto& a : inputs.assumptions) model.assumptions.push_back(a);
    return model;
  }
  std::optional<Result<Model>> built;
  const bool have_headers = !inputs.safetensors.empty();
  if (inputs.config) {
    // Headers give the exact tensors: the generic builder's guesses are not wanted then, only the
    // hyperparameters (read below when no exact builder exists).
    // Headers are merged by name (MergeBuilt): every copy must be written out then.
    BuildOptions build = options.build;
    if (have_headers) build.compact_repeats = false;
    built = have_headers && !options.prefer_config ? BuildExactFromConfig(*inputs.config, build)
                                                   : BuildFromConfig(*inputs.config, build);
  }
  bool use_headers = have_headers && !(options.prefer_config && built && *built);
  Model model;
  if (use_headers) {
    MEMFIT_ASSIGN_OR_RETURN(model, FromHeaders(inputs));
    size_t files = inputs.safetensors.size();
    model.source = fmt::format("safetensors headers ({} file{})", files, files == 1 ? "" : "s");
    const HfConfig* config = inputs.config ? &*inputs.config : nullptr;
    for (auto logical : {InferLogicalParams(model.tensors,
                                            config ? QuantizationConfigJson(*config) : nullptr),
                         InferMlxLogicalParams(model.tensors, config)}) {
      for (auto& n : logical.notes) model.notes.push_back(std::move(n));
      for (auto& a : logical.assumptions) model.assumptions.push_back(std::move(a));
    }
    if (built && *built) {
      MergeBuilt(model, std::move(**built));
      model.source += " + config.json";
    } else {
      if (built) {
        model.notes.push_back("config.json could not be used for the layer structure: " +
                              built->error().message);
      }
      if (inputs.config) {
        model.model_type = inputs.config->model_type();
        auto archs = inputs.config->architectures();
        if (!archs.empty()) model.architecture = archs.front();
        model.config_dtype = inputs.config->torch_dtype();
        // The hyperparameters inference, training and fit need, from any config.
        if (auto text = ReadTextHyperparameters(*inputs.config)) {
          model.hp = std::move(text->hp);
          for (auto& a : text->assumptions) model.assumptions.push_back(std::move(a));
          model.assumptions.push_back(fmt::format(
              "hyperparameters read from {} by the generic reader (no exact builder for "
              "model_type \"{}\")", text->where, model.model_type));
        } else {
          model.notes.push_back("the hyperparameters could not be read from config.json: " +
                                text.error().message);
        }
      }
      model.no_split_patterns = GuessNoSplitPatterns(model.tensors, model.notes);
      for (auto& t : model.tensors) {
        if (t.name.starts_with("lm_head.")) t.in_head = true;
      }
      model.assumptions.push_back(
          "layer blocks guessed from tensor names (no architecture builder for this config)");
    }
  } else if (built) {
    if (!*built) {
      if (!inputs.index || !inputs.index->total_size || *inputs.index->total_size == 0) {
        return built->error();
      }
      model = IndexOnlyModel(*inputs.config, *inputs.index->total_size, inputs.index_name,
                             built->error());
    } else {
      model = std::move(**built);
      // The generic decoder names itself (approximate); every other builder is exact.
      if (model.source.empty()) model.source = "config.json (architecture builder)";
    }
  } else {
    return MakeError("{}: nothing to read: no config.json and no safetensors weights",
                     inputs.location.empty() ? inputs.name : inputs.location);
  }
  MEMFIT_RETURN_IF_ERROR(CheckModelBounds(
      model, inputs.location.empty() ? std::string_view(inputs.name) : inputs.location));
  // The exact builders read the dimensions; the dropout a training estimate counts comes from
  // the config's keys for every family (FillTrainingDropout).
  if (inputs.config) FillTrainingDropout(*inputs.config, model.hp);
  model.name = inputs.name;
  for (const auto& a : inputs.assumptions) model.assumptions.push_back(a);
  if (inputs.index) {
    model.index_total_size = inputs.index->total_size;
    uint64_t stored = ComputeTotals(model).stored_bytes;
    if (inputs.index->total_size && *inputs.index->total_size != stored) {
      // Both are arbitrary uint64 values (total_size comes from the file): print the difference
      // as sign and magnitude, never as a possibly overflowing signed subtraction.
      const uint64_t declared = *inputs.index->total_size;
      model.notes.push_back(fmt::format(
          "{} declares total_size {} bytes; memfit counts {} bytes of stored tensors ({}{} bytes)",
          inputs.index_name, declared, stored, stored > declared ? '+' : '-',
          stored > declared ? stored - declared : declared - stored));
    }
    if (use_headers) {
      // Views of the model's names (alive while `model` is): no copy of 90k strings.
      std::unordered_set<std::string_view> in_headers;
      in_headers.reserve(model.tensors.size());
      for (const auto& t : model.tensors) {
        if (t.stored) in_headers.insert(t.name);
      }
      size_t missing = 0;
      for (const auto& [name, shard] : inputs.index->weight_map) {
        if (!in_headers.count(name)) ++missing;
      }
      if (missing > 0) {
        model.notes.push_back(fmt::format("{} lists {} tensor(s) that no shard header holds",
                                          inputs.index_name, missing));
      }
    }
  }
  return model;
}

}  // namespace memfit
