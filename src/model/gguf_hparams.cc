// Hyperparameters from GGUF `{arch}.*` keys, as llama.cpp's llama_model::load_hparams reads them
// (src/llama-model.cpp, src/llama-hparams.cpp). Per-layer keys may be scalars or arrays
// (feed_forward_length, attention.head_count, attention.head_count_kv); see
// docs/reference/gguf-and-llamacpp.md section 1.5 and docs/estimates.md ("GGUF").

#include "model/gguf_hparams.h"

#include <set>

namespace memfit {
namespace {

// Architectures whose every layer is recurrent (llm_arch_is_recurrent).
const std::set<std::string, std::less<>> kRecurrentArchs = {"mamba", "mamba2", "rwkv6", "rwkv6qwen2",
                                                            "rwkv7", "arwkv7"};

// Sliding-window layer patterns llama.cpp hard-codes per architecture (set_swa_pattern(n): layer il
// uses SWA when il % n < n - 1), used when the file has no sliding_window_pattern key.
struct SwaDefault {
  std::string_view arch;
  uint32_t pattern;
};
constexpr SwaDefault kSwaDefaults[] = {{"gemma2", 2}, {"gemma3", 6}, {"gemma3n", 5}, {"cohere2", 4},
                                       {"llama4", 4}, {"gpt-oss", 2}, {"exaone4", 4}};

class Keys {
 public:
  Keys(const GgufFile& f, std::string arch) : f_(f), arch_(std::move(arch)) {}
  const GgufValue* Get(std::string_view suffix) const { return f_.Find(arch_ + "." + std::string(suffix)); }
  Result<std::optional<uint64_t>> Uint(std::string_view suffix) const {
    const GgufValue* v = Get(suffix);
    if (!v) return std::optional<uint64_t>{};
    auto u = v->AsUint();
    if (!u) return MakeError("{}.{}: expected a non-negative integer, got {}", arch_, suffix,
                             GgufValueTypeName(v->type));
    MEMFIT_RETURN_IF_ERROR(InRange(suffix, *u));
    return std::optional<uint64_t>{*u};
  }
  // A per-layer value: scalar broadcast, or an array of n_layer entries.
  Result<std::vector<uint64_t>> PerLayer(std::string_view suffix, uint64_t n_layer, uint64_t fallback) const {
    const GgufValue* v = Get(suffix);
    if (!v) return std::vector<uint64_t>(n_layer, fallback);
    if (v->is_array()) {
      auto arr = v->AsUintArray();
      if (!arr) return MakeError("{}.{}: expected an array of non-negative integers", arch_, suffix);
      if (arr->size() != n_layer) {
        return MakeError("{}.{}: {} entries for {} layers", arch_, suffix, arr->size(), n_layer);
      }
      for (uint64_t x : *arr) MEMFIT_RETURN_IF_ERROR(InRange(suffix, x));
      return *arr;
    }
    auto u = v->AsUint();
    if (!u) return MakeError("{}.{}: expected a non-negative integer", arch_, suffix);
    MEMFIT_RETURN_IF_ERROR(InRange(suffix, *u));
    return std::vector<uint64_t>(n_layer, *u);
  }
  // Uint(suffix) into `out`: 0 when the key is absent.
  Status UintOrZero(std::string_view suffix, uint64_t& out) const {
    MEMFIT_ASSIGN_OR_RETURN(auto u, Uint(suffix));
    out = u.value_or(0);
    return Ok{};
  }
  Status InRange(std::string_view suffix, uint64_t value) const {
    if (value <= kMaxGgufHparam) return Ok{};
    return MakeError("{}.{}: {} does not fit llama.cpp's 32-bit hyperparameters", arch_, suffix, value);
  }
  const std::string& arch() const { return arch_; }

 private:
  const GgufFile& f_;
  std::string arch_;
};

}  // namespace

Status ReadGgufHyperparameters(const GgufFile& f, const std::string& arch,
                               const std::vector<bool>& layer_has_moe, Model& model) {
  Keys k(f, arch);
  Hyperparameters& hp = model.hp;
  MEMFIT_ASSIGN_OR_RETURN(auto n_layer, k.Uint("block_count"));
  if (!n_layer) return MakeError("{}.block_count is missing", arch);
  if (*n_layer > kMaxGgufLayers) return MakeError("{}.block_count {} is implausible", arch, *n_layer);
  hp.num_layers = *n_layer;
  MEMFIT_RETURN_IF_ERROR(k.UintOrZero("context_length", hp.max_position_embeddings));
  MEMFIT_RETURN_IF_ERROR(k.UintOrZero("embedding_length", hp.hidden_size));
  const uint64_t L = hp.num_layers;
  MEMFIT_ASSIGN_OR_RETURN(auto n_ff, k.PerLayer("feed_forward_length", L, 0));
  MEMFIT_ASSIGN_OR_RETURN(auto n_head, k.PerLayer("attention.head_count", L, 0));
  MEMFIT_ASSIGN_OR_RETURN(auto n_head_kv, k.PerLayer("attention.head_count_kv", L, 0));
  if (!k.Get("attention.head_count_kv")) n_head_kv = n_head;  // llama.cpp default: MHA
  hp.num_attention_heads = L ? n_head[0] : 0;
  hp.num_kv_heads = L ? n_head_kv[0] : 0;
  hp.intermediate_size = L ? n_ff[0] : 0;
  // Head sizes: key_length/value_length, default n_embd / n_head (of layer 0).
  // (first layer with heads: hybrids may start with recurrent layers of head_count 0)
  uint64_t heads = 0;
  for (uint64_t h : n_head) {
    if (h) {
      heads = h;
      break;
    }
  }
  const uint64_t default_head = heads ? hp.hidden_size / heads : 0;
  MEMFIT_ASSIGN_OR_RETURN(auto key_len, k.Uint("attention.key_length"));
  MEMFIT_ASSIGN_OR_RETURN(auto val_len, k.Uint("attention.value_length"));
  const uint64_t head_k = key_len.value_or(default_head);
  const uint64_t head_v = val_len.value_or(default_head);
  hp.head_dim = head_k;
  MEMFIT_ASSIGN_OR_RETURN(auto key_len_swa, k.Uint("attention.key_length_swa"));
  MEMFIT_ASSIGN_OR_RETURN(auto val_len_swa, k.Uint("attention.value_length_swa"));
  // Vocabulary: {arch}.vocab_size, else the token list.
  MEMFIT_ASSIGN_OR_RETURN(auto vocab, k.Uint("vocab_size"));
  if (vocab) hp.vocab_size = *vocab;
  else if (const GgufValue* t = f.Find("tokenizer.ggml.tokens"); t && t->is_array()) hp.vocab_size = t->array_size;
  // MoE.
  MEMFIT_RETURN_IF_ERROR(k.UintOrZero("expert_count", hp.num_experts));
  MEMFIT_RETURN_IF_ERROR(k.UintOrZero("expert_used_count", hp.experts_per_token));
  MEMFIT_RETURN_IF_ERROR(k.UintOrZero("expert_shared_count", hp.num_shared_experts));
  MEMFIT_ASSIGN_OR_RETURN(auto n_ff_exp, k.Uint("expert_feed_forward_length"));
  hp.moe_intermediate_size = n_ff_exp.value_or(hp.num_experts ? hp.intermediate_size : 0);
  MEMFIT_RETURN_IF_ERROR(k.UintOrZero("leading_dense_block_count", hp.leading_dense_layers));
  // MLA.
  MEMFIT_RETURN_IF_ERROR(k.UintOrZero("attention.kv_lora_rank", hp.kv_lora_rank));
  MEMFIT_ASSIGN_OR_RETURN(auto rope_dims, k.Uint("rope.dimension_count"));
  if (hp.kv_lora_rank) hp.qk_rope_head_dim = rope_dims.value_or(0);
  // Causality (embedding models) and sliding windows.
  if (const GgufValue* c = k.Get("attention.causal")) {
    auto b = c->AsBool();
    if (!b) return MakeError("{}.attention.causal: expected a bool", arch);
    hp.causal = *b;
  }
  MEMFIT_RETURN_IF_ERROR(k.UintOrZero("attention.sliding_window", hp.sliding_window));
  std::vector<bool> swa(L, false);
  if (hp.sliding_window > 0) {
    const GgufValue* pattern = k.Get("attention.sliding_window_pattern");
    uint64_t period = 0;
    if (pattern && pattern->is_array()) {
      auto arr = pattern->AsUintArray();
      if (!arr || arr->size() != L) {
        return MakeError("{}.attention.sliding_window_pattern: expected {} bools", arch, L);
      }
      for (uint64_t il = 0; il < L; ++il) swa[il] = (*arr)[il] != 0;
    } else {
      if (pattern) {
        auto p = pattern->AsUint();
        if (!p) return MakeError("{}.attention.sliding_window_pattern: expected an integer", arch);
        period = *p;
      } else {
        for (const auto& d : kSwaDefaults) {
          if (d.arch == arch) period = d.pattern;
        }
        if (period == 0) {
          model.assumptions.push_back(fmt::format(
              "{}: attention.sliding_window {} without a pattern, and llama.cpp has none built in for "
              "this architecture: every layer counted with a full-context KV cache", arch,
              hp.sliding_window));
        } else {
          model.assumptions.push_back(fmt::format(
              "{}: sliding-window pattern {} (llama.cpp's built-in value for this architecture)", arch, period));
        }
      }
      // llama_hparams::set_swa_pattern: il is SWA when il % n < n - 1; n == 0: all layers.
      const bool explicit_pattern = pattern != nullptr;
      for (uint64_t il = 0; il < L; ++il) {
        if (period == 0) swa[il] = explicit_pattern;
        else swa[il] = (il % period) < period - 1;
      }
    }
  }
  // Recurrent state.
  MEMFIT_RETURN_IF_ERROR(k.UintOrZero("ssm.conv_kernel", hp.ssm_conv_kernel));
  MEMFIT_RETURN_IF_ERROR(k.UintOrZero("ssm.inner_size", hp.ssm_inner_size));
  MEMFIT_RETURN_IF_ERROR(k.UintOrZero("ssm.state_size", hp.ssm_state_size));
  MEMFIT_RETURN_IF_ERROR(k.UintOrZero("ssm.group_count", hp.ssm_group_count));
  MEMFIT_RETURN_IF_ERROR(k.UintOrZero("wkv.head_size", hp.wkv_head_size));
  MEMFIT_ASSIGN_OR_RETURN(auto shift, k.Uint("token_shift_count"));
  MEMFIT_RETURN_IF_ERROR(k.UintOrZero("shortconv.l_cache", hp.shortconv_l_cache));
  MEMFIT_ASSIGN_OR_RETURN(auto full_attn_interval, k.Uint("full_attention_interval"));
  hp.token_shift_count = shift.value_or(hp.wkv_head_size ? 2 : 0);
  const bool has_state = hp.ssm_state_size || hp.wkv_head_size || hp.shortconv_l_cache;
  const bool all_recurrent = kRecurrentArchs.count(arch) > 0;

  hp.layers.assign(L, LayerInfo{});
  for (uint64_t il = 0; il < L; ++il) {
    LayerInfo& li = hp.layers[il];
    li.num_heads = n_head[il];
    li.num_kv_heads = n_head_kv[il];
    li.head_dim_k = swa[il] && key_len_swa ? *key_len_swa : head_k;
    li.head_dim_v = swa[il] && val_len_swa ? *val_len_swa : head_v;
    li.moe = il < layer_has_moe.size() ? layer_has_moe[il]
                                       : (hp.num_experts > 0 && il >= hp.leading_dense_layers);
    li.intermediate_size = li.moe ? 0 : n_ff[il];
    bool recurrent = all_recurrent;
    if (!recurrent && full_attn_interval && *full_attn_interval > 0) {
      recurrent = (il + 1) % *full_attn_interval != 0;  // qwen3next: every k-th layer is attention
    } else if (!recurrent && has_state && li.num_kv_heads == 0) {
      recurrent = true;  // hybrids mark recurrent layers with head_count_kv 0
    }
    li.recurrent = recurrent;
    if (recurrent || li.num_kv_heads == 0) {
      li.attention = AttentionKind::kNone;
    } else if (swa[il]) {
      li.attention = AttentionKind::kSliding;
      li.window_tokens = hp.sliding_window;
    } else if (hp.kv_lora_rank) {
      li.attention = AttentionKind::kMla;
    }
  }
  return Ok{};
}

}  // namespace memfit
