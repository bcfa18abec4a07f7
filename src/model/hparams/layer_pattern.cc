// Layer patterns of hybrid and interleaved models. Each key is read as the family's reference
// configuration class documents it (docs/architectures.md, "Hyperparameters from any config"):
//   hybrid_override_pattern  NemotronHConfig: M = Mamba2, * = attention, - = MLP, E = MoE
//   layers_block_type        GraniteMoeHybridConfig / JambaConfig / Zamba2Config
//   layer_types              Gemma3/Gemma4/Qwen3.5/Step3/Cohere2/LFM2 configs (one word a layer)
//   full_attn_idxs           Lfm2Config (attention layers; the others are short convolutions)
//   linear_attn_config       KimiLinearConfig (1-based full_attn_layers / kda_layers)
//   attn_type_list           MiniMaxConfig (1 = softmax attention, 0 = lightning attention)
//   full_attention_interval  Qwen3NextConfig (every n-th layer is full attention)
//   attn_layer_period/offset JambaConfig
//   hybrid_layer_pattern     MiMo-V2-Flash (1 = sliding-window layer)
//   compress_ratios          DeepSeek-V4 (0 = sliding window only)
//   no_rope_layers           Llama4TextConfig (1 = RoPE layer = chunked attention)
//   sliding_window_pattern   Gemma2/Gemma3 (every n-th layer global)
//   use_sliding_window / max_window_layers   Qwen2Config

#include "model/hparams/layer_pattern.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>

namespace memfit::hparams {
namespace {

bool Contains(const std::string& s, std::string_view part) {
  return s.find(part) != std::string::npos;
}

// Mamba-2 when the config carries Mamba-2's head or group keys, or the family names it.
LayerMixer MambaKind(ConfigKeys& keys, const std::string& model_type) {
  if (Contains(model_type, "mamba2") || Contains(model_type, "nemotron_h") ||
      Contains(model_type, "granitemoehybrid") || Contains(model_type, "falcon_h1") ||
      Contains(model_type, "zamba2") || Contains(model_type, "bamba") ||
      keys.Has({"mamba_num_heads", "mamba_n_heads", "mamba_n_groups", "n_groups",
                "mamba_head_dim", "mamba_d_head"})) {
    return LayerMixer::kMamba2;
  }
  return LayerMixer::kMamba;
}

// The non-attention mixer of a family whose pattern says "linear".
LayerMixer LinearKind(const std::string& model_type) {
  if (Contains(model_type, "minimax")) return LayerMixer::kLinearAttention;
  if (Contains(model_type, "kimi")) return LayerMixer::kKimiDelta;
  return LayerMixer::kGatedDeltaNet;  // Qwen3-Next, Qwen3.5/3.6
}

LayerKind LayerPatternRecurrent(LayerMixer mixer) {
  return LayerKind{.mixer = mixer, .attention = AttentionKind::kNone};
}

// One word of "layer_types" / "layers_block_type".
LayerKind FromWord(const std::string& word, ConfigKeys& keys, const std::string& model_type,
                   std::set<std::string>& unknown) {
  if (Contains(word, "sliding") || word == "local" || word == "swa") {
    return {.attention = AttentionKind::kSliding};
  }
  if (Contains(word, "chunk")) return {.attention = AttentionKind::kChunked};
  if (Contains(word, "mamba") || word == "ssm" || word == "m") {
    return LayerPatternRecurrent(MambaKind(keys, model_type));
  }
  if (word == "hybrid") {  // Zamba2: a Mamba2 block plus the shared attention block
    LayerKind k = LayerPatternRecurrent(LayerMixer::kMamba2);
    k.attention = AttentionKind::kFull;
    return k;
  }
  if (Contains(word, "linear") || Contains(word, "delta") || Contains(word, "kda")) {
    return LayerPatternRecurrent(LinearKind(model_type));
  }
  if (Contains(word, "conv")) return LayerPatternRecurrent(LayerMixer::kShortConv);
  if (Contains(word, "full") || Contains(word, "attention") || word == "global" ||
      word == "attn") {
    return {.attention = AttentionKind::kFull};
  }
  unknown.insert(word);
  return {.attention = AttentionKind::kFull};
}

std::set<uint64_t> IndexSet(const std::optional<std::vector<uint64_t>>& list, uint64_t base) {
  std::set<uint64_t> out;
  if (!list) return out;
  for (uint64_t i : *list) {
    if (i >= base) out.insert(i - base);
  }
  return out;
}

// Nemotron-H's "hybrid_override_pattern", one character per layer: 'M' Mamba2, '*' attention,
// '-' an MLP alone, 'E' an MoE alone. s.size() == kinds.size().
void ApplyHybridOverridePattern(const std::string& s, std::vector<LayerKind>& kinds,
                                std::set<std::string>& unknown) {
  for (uint64_t i = 0; i < kinds.size(); ++i) {
    LayerKind& k = kinds[i];
    k.pattern_sets_mlp = true;
    switch (s[i]) {
      case 'M':
        k = LayerPatternRecurrent(LayerMixer::kMamba2);
        k.pattern_sets_mlp = true;
        k.has_mlp = false;
        break;
      case '*':
        k.has_mlp = false;
        break;
      case '-':
        k.mixer = LayerMixer::kNone;
        k.attention = AttentionKind::kNone;
        break;
      case 'E':
        k.mixer = LayerMixer::kNone;
        k.attention = AttentionKind::kNone;
        k.moe = true;
        break;
      default:
        unknown.insert(std::string(1, s[i]));
        k.has_mlp = false;
    }
  }
}

// A word per layer ("layers_block_type", "layer_types"); words.size() == kinds.size().
void ApplyLayerWords(const std::vector<std::string>& words, ConfigKeys& keys,
                     const std::string& model_type, std::vector<LayerKind>& kinds,
                     std::set<std::string>& unknown) {
  // Nemotron-H's word list: "mamba" and "attention" layers have no MLP, "moe" and "mlp" layers
  // are an MLP alone.
  const bool nemotron = std::any_of(words.begin(), words.end(),
                                    [](const std::string& w) { return w == "moe" || w == "mlp"; });
  for (uint64_t i = 0; i < kinds.size(); ++i) {
    const std::string& w = words[i];
    if (nemotron && (w == "moe" || w == "mlp")) {
      kinds[i] = {.mixer = LayerMixer::kNone,
                  .attention = AttentionKind::kNone,
                  .pattern_sets_mlp = true,
                  .moe = w == "moe"};
      continue;
    }
    kinds[i] = FromWord(w, keys, model_type, unknown);
    if (nemotron) {
      kinds[i].pattern_sets_mlp = true;
      kinds[i].has_mlp = false;
    }
  }
}

// What applies over any layer pattern: Gemma 4's global head layout, Gemma 3n/4's shared KV
// layers, the sparse-attention indexers.
void MarkGlobalSharedAndIndexedLayers(ConfigKeys& keys, std::vector<LayerKind>& kinds) {
  const uint64_t n = kinds.size();
  // Gemma 4: the full-attention layers use the global head layout.
  if (keys.Has({"global_head_dim", "num_global_key_value_heads"})) {
    for (auto& k : kinds) k.global_dims = k.attention == AttentionKind::kFull;
  }
  // Gemma 3n/4: the last num_kv_shared_layers layers read an earlier layer's cache.
  uint64_t shared = std::min(keys.Uint({"num_kv_shared_layers"}), n);
  for (uint64_t i = n - shared; i < n; ++i) kinds[i].kv_shared = true;
  // DSA (DeepSeek-V3.2, GLM-5) and MiniMax-M3's block-sparse attention keep indexer keys.
  if (keys.Has({"index_head_dim"}) && !keys.Has({"compress_ratios"})) {
    for (auto& k : kinds) k.sparse_indexer = k.attention != AttentionKind::kNone;
  }
  if (const auto* sa = keys.Find({"sparse_attention_config"}); sa && sa->is_object()) {
    if (auto it = sa->find("sparse_attention_freq"); it != sa->end() && it->is_array()) {
      for (uint64_t i = 0; i < n && i < it->size(); ++i) {
        const auto& v = (*it)[i];
        kinds[i].sparse_indexer = v.is_number() && v.get<double>() != 0;
      }
    }
  }
}

}  // namespace

std::vector<LayerKind> ReadLayerKinds(ConfigKeys& keys, uint64_t n, const std::string& model_type,
                                      std::vector<std::string>& assumptions) {
  std::vector<LayerKind> kinds(n);
  std::set<std::string> unknown;
  auto list_size_ok = [&](size_t size, std::string_view key) {
    if (size == n) return true;
    assumptions.push_back(fmt::format("\"{}\" lists {} layers, the model has {}: the pattern is "
                                      "ignored and every layer taken as full attention",
                                      key, size, n));
    return false;
  };
  if (const auto* p = keys.Find({"hybrid_override_pattern"}); p && p->is_string()) {
    const std::string s = p->get<std::string>();
    if (list_size_ok(s.size(), "hybrid_override_pattern")) {
      ApplyHybridOverridePattern(s, kinds, unknown);
    }
  } else if (auto words = keys.StringList({"layers_block_type", "layer_types", "layers_type"})) {
    if (list_size_ok(words->size(), "layer_types")) {
      ApplyLayerWords(*words, keys, model_type, kinds, unknown);
    }
  } else if (auto idx = keys.UintList({"full_attn_idxs"})) {
    auto full = IndexSet(idx, 0);
    for (uint64_t i = 0; i < n; ++i) {
      if (!full.count(i)) kinds[i] = LayerPatternRecurrent(LayerMixer::kShortConv);
    }
  } else if (const auto* lac = keys.Find({"linear_attn_config"}); lac && lac->is_object()) {
    // KimiLinearConfig: 1-based layer numbers.
    std::set<uint64_t> kda;
    if (auto it = lac->find("kda_layers"); it != lac->end() && it->is_array()) {
      for (const auto& v : *it) {
        if (v.is_number_integer() && v.get<int64_t>() >= 1) kda.insert(v.get<uint64_t>() - 1);
      }
    }
    for (uint64_t i = 0; i < n; ++i) {
      if (kda.count(i)) kinds[i] = LayerPatternRecurrent(LayerMixer::kKimiDelta);
    }
  } else if (auto types = keys.UintList({"attn_type_list"})) {
    if (list_size_ok(types->size(), "attn_type_list")) {
      for (uint64_t i = 0; i < n; ++i) {
        if ((*types)[i] == 0) kinds[i] = LayerPatternRecurrent(LayerMixer::kLinearAttention);
      }
    }
  } else if (uint64_t interval = keys.Uint({"full_attention_interval"}); interval > 0) {
    for (uint64_t i = 0; i < n; ++i) {
      if ((i + 1) % interval != 0) kinds[i] = LayerPatternRecurrent(LinearKind(model_type));
    }
  } else if (uint64_t period = keys.Uint({"attn_layer_period"}); period > 0) {
    uint64_t offset = keys.Uint({"attn_layer_offset"});
    for (uint64_t i = 0; i < n; ++i) {
      if (i % period != offset) kinds[i] = LayerPatternRecurrent(MambaKind(keys, model_type));
    }
  } else if (auto swa = keys.UintList({"hybrid_layer_pattern"})) {
    if (list_size_ok(swa->size(), "hybrid_layer_pattern")) {
      for (uint64_t i = 0; i < n; ++i) {
        if ((*swa)[i] == 1) kinds[i] = {.attention = AttentionKind::kSliding, .swa_dims = true};
      }
    }
  } else if (auto ratios = keys.UintList({"compress_ratios"})) {
    // DeepSeek-V4: every layer keeps a sliding window; ratio r > 0 adds one compressed entry per
    // r tokens (r = 4 layers also keep indexer keys). The list may hold an MTP layer's entry.
    for (uint64_t i = 0; i < n; ++i) {
      kinds[i].attention = AttentionKind::kSliding;
      kinds[i].compress_ratio = i < ratios->size() ? (*ratios)[i] : 0;
      kinds[i].sparse_indexer = kinds[i].compress_ratio == 4;
    }
  } else if (keys.Has({"attention_chunk_size"}) &&
             (keys.Has({"no_rope_layers"}) || Contains(model_type, "llama4"))) {
    auto rope = keys.UintList({"no_rope_layers"});
    uint64_t interval = keys.Uint({"no_rope_layer_interval"}, 4);
    for (uint64_t i = 0; i < n; ++i) {
      bool uses_rope = rope && i < rope->size() ? (*rope)[i] == 1
                                                : (interval == 0 || (i + 1) % interval != 0);
      if (uses_rope) kinds[i].attention = AttentionKind::kChunked;
    }
    if (!rope) {
      assumptions.push_back(fmt::format("no \"no_rope_layers\": every {}th layer global, the "
                                        "others chunked (Llama4TextConfig's default)", interval));
    }
  } else if (uint64_t pattern = keys.Uint({"sliding_window_pattern", "sliding_window_layers"});
             pattern > 0 && keys.Has({"sliding_window"})) {
    for (uint64_t i = 0; i < n; ++i) {
      if ((i + 1) % pattern != 0) kinds[i].attention = AttentionKind::kSliding;
    }
  } else if (keys.Has({"use_sliding_window"})) {
    if (keys.Bool({"use_sliding_window"}, false) && keys.Has({"sliding_window"})) {
      uint64_t first = keys.Uint({"max_window_layers"}, 0);
      for (uint64_t i = first; i < n; ++i) kinds[i].attention = AttentionKind::kSliding;
    }
  } else if (Contains(model_type, "mamba") || Contains(model_type, "rwkv")) {
    for (auto& k : kinds) {
      k = LayerPatternRecurrent(MambaKind(keys, model_type));
      k.has_mlp = false;  // Mamba blocks have no separate MLP
    }
  } else if (keys.Uint({"sliding_window"}) > 0) {
    for (auto& k : kinds) k.attention = AttentionKind::kSliding;
    assumptions.push_back("\"sliding_window\" without a layer pattern: every layer uses the "
                          "window (as Mistral, Mixtral and Phi-3 do)");
  }
  if (!unknown.empty()) {
    std::string list;
    for (const auto& w : unknown) list += (list.empty() ? "\"" : ", \"") + w + "\"";
    assumptions.push_back(fmt::format("layer kind(s) {} not known to memfit: taken as full "
                                      "attention", list));
  }
  MarkGlobalSharedAndIndexedLayers(keys, kinds);
  return kinds;
}

void ReadMoeLayers(ConfigKeys& keys, uint64_t num_experts, std::vector<LayerKind>& kinds) {
  const uint64_t n = kinds.size();
  if (num_experts == 0 || (!kinds.empty() && kinds.front().pattern_sets_mlp)) return;
  if (keys.Bool({"enable_moe_block"}, false)) {  // Gemma 4: a dense MLP and an MoE block
    for (auto& k : kinds) k.moe = k.has_mlp;
    return;
  }
  const uint64_t first_dense = keys.Uint({"first_k_dense_replace", "first_k_dense",
                                          "num_dense_layers", "moe_layer_start_index"});
  std::vector<bool> moe(n, true);
  if (const auto* freq = keys.Find({"moe_layer_freq"}); freq && freq->is_array()) {
    auto list = keys.UintList({"moe_layer_freq"});
    for (uint64_t i = 0; i < n; ++i) moe[i] = list && i < list->size() && (*list)[i] != 0;
  } else if (uint64_t f = keys.Uint({"moe_layer_freq"}); f > 0) {
    for (uint64_t i = 0; i < n; ++i) moe[i] = i % f == 0;
  } else if (uint64_t step = keys.Uint({"decoder_sparse_step", "interleave_moe_layer_step",
                                        "moe_layer_interval"});
             step > 0) {
    for (uint64_t i = 0; i < n; ++i) moe[i] = (i + 1) % step == 0;
  } else if (uint64_t period = keys.Uint({"expert_layer_period"}); period > 0) {
    uint64_t offset = keys.Uint({"expert_layer_offset"});
    for (uint64_t i = 0; i < n; ++i) moe[i] = i % period == offset;
  }
  for (uint64_t i : IndexSet(keys.UintList({"mlp_only_layers"}), 0)) {
    if (i < n) moe[i] = false;
  }
  if (keys.Has({"moe_layer_end_index"})) {
    uint64_t last = keys.Uint({"moe_layer_end_index"});
    for (uint64_t i = last + 1; i < n; ++i) moe[i] = false;
  }
  for (uint64_t i = 0; i < n; ++i) {
    kinds[i].moe = kinds[i].has_mlp && moe[i] && i >= first_dense;
  }
}

}  // namespace memfit::hparams
