#include "estimate/modules.h"

#include <array>
#include <cctype>

namespace memfit::estimate {
namespace {

bool IsEmbeddingName(std::string_view module) {
  static constexpr std::array<std::string_view, 9> kNames = {
      "wte", "wpe", "shared", "word_embeddings", "position_embeddings", "token_type_embeddings",
      "embed_tokens", "embed_positions", "tok_embeddings"};
  const size_t dot = module.rfind('.');
  std::string_view last = dot == std::string_view::npos ? module : module.substr(dot + 1);
  for (auto n : kNames) {
    if (last == n) return true;
  }
  return last.find("embed") != std::string_view::npos;
}

}  // namespace

bool MatchesTarget(std::string_view module, std::string_view target) {
  if (module == target) return true;
  return module.size() > target.size() && module.ends_with(target) &&
         module[module.size() - target.size() - 1] == '.';
}

int64_t LayerIndex(std::string_view name) {
  // The first all-digit path segment after "layers", "h", "layer", "block(s)" or "blocks".
  size_t start = 0;
  std::string_view prev;
  while (start <= name.size()) {
    size_t end = name.find('.', start);
    if (end == std::string_view::npos) end = name.size();
    std::string_view seg = name.substr(start, end - start);
    bool digits = !seg.empty() && seg.size() < 10;
    for (char c : seg) digits = digits && std::isdigit(static_cast<unsigned char>(c));
    if (digits && (prev == "layers" || prev == "h" || prev == "layer" || prev == "block" ||
                   prev == "blocks")) {
      int64_t v = 0;  // at most 9 digits: no overflow
      for (char c : seg) v = v * 10 + (c - '0');
      return v;
    }
    prev = seg;
    start = end + 1;
  }
  return -1;
}

std::vector<RoleTensor> ClassifyTensors(const Model& model) {
  std::vector<RoleTensor> out;
  out.reserve(model.tensors.size());
  for (const auto& t : model.tensors) {
    RoleTensor r{.tensor = &t};
    std::string_view name = t.name;
    if (name.ends_with(".weight")) name.remove_suffix(7);
    else if (name.ends_with(".bias")) name.remove_suffix(5);
    r.module = name;
    if (!t.tied_to.empty()) {
      r.role = Role::kTied;
    } else if (t.kind != TensorKind::kParameter) {
      r.role = Role::kBuffer;
    } else if (t.shape.size() <= 1) {
      r.role = Role::kSmall;
    } else if (t.in_head) {
      r.role = Role::kHead;
      if (t.shape.size() == 2) { r.out = t.shape[0]; r.in = t.shape[1]; }
    } else if (t.shape.size() == 2 && IsEmbeddingName(r.module)) {
      r.role = Role::kEmbedding;
    } else if (t.shape.size() == 2 && t.name.ends_with(".weight")) {
      r.role = Role::kLinear;
      r.out = t.shape[0];
      r.in = t.shape[1];
    } else if (t.shape.size() == 3 && t.name.find("experts") != std::string::npos) {
      r.role = Role::kLinear;  // fused expert stack [experts, a, b]
      r.out = t.shape[0] * t.shape[1];
      r.in = t.shape[2];
    } else {
      r.role = Role::kOther;
    }
    out.push_back(std::move(r));
  }
  return out;
}

std::string_view WeightModule(std::string_view tensor_name) {
  size_t dot = tensor_name.rfind('.');
  std::string_view m = dot == std::string_view::npos ? std::string_view{} : tensor_name.substr(0, dot);
  if (m.ends_with(".weight")) m.remove_suffix(7);
  return m;
}

}  // namespace memfit::estimate
