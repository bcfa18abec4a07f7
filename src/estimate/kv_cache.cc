// KV cache bytes per layer: GQA/MQA heads, MLA latent, sliding windows, chunked attention,
// DeepSeek-V4 compressed entries, DSA indexer keys, layers sharing a cache, cross-attention, and
// the fixed state of recurrent layers (Mamba, gated delta-net, short conv, ...); kv dtype, paged
// block rounding (vLLM's hybrid page padding), TP split/replication. docs/estimates.md, "KV cache".

#include <algorithm>
#include <iterator>
#include <string_view>

#include <fmt/format.h>

#include "base/enum_names.h"
#include "memfit/checked_math.h"
#include "memfit/estimate_inference.h"
#include "memfit/recurrent_state.h"
#include "memfit/units.h"

namespace memfit {
namespace {

// Bytes for `elements` of `bits` each, rounded up; nullopt on overflow.
std::optional<uint64_t> BitsToBytes(uint64_t elements, uint32_t bits) {
  auto b = CheckedMul(elements, bits);
  if (!b) return std::nullopt;
  return CeilDiv(*b, 8);
}

// Families whose transformers cache keeps the SSM state in the model dtype, not float32: the
// caches are made with dtype = the embeddings' (MambaCache: models/mamba/modeling_mamba.py, also
// Falcon-Mamba's; Mamba2Cache: models/mamba2/modeling_mamba2.py;
// HybridMambaAttentionDynamicCache: models/jamba/modular_jamba.py).
bool TransformersStateInModelDtype(const Model& model) {
  static constexpr std::string_view kTypes[] = {"mamba", "falcon_mamba", "mamba2", "jamba"};
  return std::find(std::begin(kTypes), std::end(kTypes), model.model_type) != std::end(kTypes);
}

// Bytes of a recurrent layer's state for one sequence: conv steps in the model dtype, the
// recurrent state in `state_bits`; nullopt on overflow.
std::optional<uint64_t> StateBytes(const RecurrentElements& r, uint32_t model_bits,
                                   uint32_t state_bits) {
  CheckedU64 bits = r.conv * model_bits + r.recurrent * state_bits;
  if (bits.overflowed()) return std::nullopt;
  return CeilDiv(bits.value(), 8);
}

// --kv-dtype's words: each dtype's name, then the other spellings it reads (llama.cpp's q8_0
// and q4_0 included).
constexpr auto kKvDtypes = std::to_array<EnumWord<KvDtype>>({
    {"model", KvDtype::kModel}, {"auto", KvDtype::kModel},
    {"float32", KvDtype::kF32}, {"fp32", KvDtype::kF32},
    {"float16", KvDtype::kF16}, {"fp16", KvDtype::kF16}, {"f16", KvDtype::kF16},
    {"bfloat16", KvDtype::kBF16}, {"bf16", KvDtype::kBF16},
    {"fp8", KvDtype::kFp8}, {"fp8_e4m3", KvDtype::kFp8}, {"fp8_e5m2", KvDtype::kFp8},
    {"fp8-e4m3", KvDtype::kFp8},
    {"int8", KvDtype::kInt8}, {"q8_0", KvDtype::kInt8},
    {"int4", KvDtype::kInt4}, {"q4_0", KvDtype::kInt4}});

}  // namespace

std::string_view KvDtypeName(KvDtype dtype) { return NameOf(dtype, kKvDtypes); }

Result<KvDtype> ParseKvDtype(std::string_view s) {
  if (auto dtype = FindWord(s, kKvDtypes)) return *dtype;
  if (s == "fp8_ds_mla") {
    // vLLM's DeepSeek-V3.2 layout: what --kv-dtype fp8 gives that model on vLLM and SGLang.
    return MakeError("--kv-dtype fp8_ds_mla: pass --kv-dtype fp8 (vLLM and SGLang store an fp8 "
                     "cache of DeepSeek-V3.2 as fp8_ds_mla, 656 bytes per token and layer)");
  }
  if (s.starts_with("nvfp4")) {
    return MakeError("--kv-dtype {}: memfit does not model vLLM's NVFP4 KV cache yet (its layout "
                     "and scales were not read from vLLM's source); expected model, float16, "
                     "bfloat16, float32, fp8, int8 or int4", s);
  }
  return MakeError("--kv-dtype {}: expected model, float16, bfloat16, float32, fp8, int8 or int4",
                   s);
}

uint32_t KvBits(KvDtype dtype, Dtype model_dtype) {
  switch (dtype) {
    case KvDtype::kModel: return DtypeBits(model_dtype) == 0 ? 16 : DtypeBits(model_dtype);
    case KvDtype::kF32: return 32;
    case KvDtype::kF16:
    case KvDtype::kBF16: return 16;
    case KvDtype::kFp8:
    case KvDtype::kInt8: return 8;
    case KvDtype::kInt4: return 4;
  }
  return 16;
}

namespace {

// The layers of a model described without them (GGUF-less configs that name only the counts):
// every layer full attention.
Result<std::vector<LayerInfo>> UniformLayers(const Model& model,
                                             std::vector<std::string>& assumptions) {
  const Hyperparameters& hp = model.hp;
  if (hp.num_layers == 0 || hp.num_attention_heads == 0) {
    return MakeError(
        "{}: the KV cache needs the number of layers and attention heads "
        "(\"num_hidden_layers\", \"num_attention_heads\"), which the model "
        "description lacks; `memfit estimate-memory` still answers",
        model.name);
  }
  uint64_t hd = hp.head_dim ? hp.head_dim : hp.hidden_size / hp.num_attention_heads;
  uint64_t kv = hp.num_kv_heads ? hp.num_kv_heads : hp.num_attention_heads;
  std::vector<LayerInfo> layers(hp.num_layers, LayerInfo{.num_heads = hp.num_attention_heads,
                                                         .num_kv_heads = kv,
                                                         .head_dim_k = hd,
                                                         .head_dim_v = hd});
  assumptions.push_back(
      "no per-layer attention description: every layer assumed full "
      "attention with " +
      std::to_string(kv) + " KV heads of " + std::to_string(hd));
  return layers;
}

// vLLM's hybrid manager: the attention block grows so that one attention page holds the
// largest recurrent state; that page is then what each recurrent layer takes per sequence.
// Returns the page's bytes (0: no recurrent layer, or no attention) and raises `block`.
Result<uint64_t> HybridStatePage(const Model& model, const std::vector<LayerInfo>& layers,
                                 const KvCacheOptions& o, uint32_t bits, uint32_t model_bits,
                                 uint64_t& block, std::vector<std::string>& assumptions) {
  const Hyperparameters& hp = model.hp;
  uint64_t attn_token = 0, largest_state = 0;
  for (const auto& L : layers) {
    if (L.recurrent) {
      const uint64_t steps = L.state.conv_kernel ? L.state.conv_kernel - 1 : 0;
      RecurrentElements r = RecurrentStateElements(L.state, steps, o.tp);
      const uint32_t sb = L.state.state_bits ? L.state.state_bits : model_bits;
      auto b = StateBytes(r, model_bits, sb);
      if (!b) return MakeError("{}: recurrent state size overflows", model.name);
      largest_state = std::max(largest_state, *b);
    } else if (attn_token == 0 && L.attention != AttentionKind::kNone) {
      uint64_t kv =
          std::max<uint64_t>(CeilDiv(L.num_kv_heads ? L.num_kv_heads : L.num_heads, o.tp), 1);
      uint64_t elems = L.attention == AttentionKind::kMla && o.mla_latent
                           ? hp.kv_lora_rank + hp.qk_rope_head_dim
                           : kv * (L.head_dim_k + L.head_dim_v);
      attn_token = BitsToBytes(elems, bits).value_or(0);
    }
  }
  if (largest_state == 0 || attn_token == 0) return uint64_t{0};
  // align: 16 tokens for FlashAttention/FlashInfer, 64 for MLA backends.
  const uint64_t align = hp.kv_lora_rank > 0 ? 64 : 16;
  const uint64_t needed = align * CeilDiv(largest_state, align * attn_token);
  if (needed > block) {
    assumptions.push_back(fmt::format(
        "vLLM hybrid KV manager: attention block size raised from {} to {} tokens so that one "
        "page ({} per layer) holds a recurrent layer's state",
        block, needed, FormatBytes(needed * attn_token)));
    block = needed;
  }
  return block * attn_token;
}

// What the estimate assumed about encoder-decoder models and replicated KV heads.
void AddKvAssumptions(const Hyperparameters& hp, const KvCacheOptions& o, bool encoder_is_context,
                      bool replicated, KvCacheEstimate& e) {
  if (hp.is_encoder_decoder) {
    e.assumptions.push_back(
        "every decoder layer has cross-attention over the encoder output with "
        "its self-attention head layout");
  }
  if (encoder_is_context) {
    e.assumptions.push_back(
        fmt::format("the model states no encoder length: the encoder input "
                    "is taken as --context ({} tokens; --encoder-tokens sets "
                    "it)",
                    o.context_tokens));
    e.assumptions.push_back(
        o.decoder_tokens
            ? fmt::format("the decoder's self-attention caches {} tokens (--decoder-tokens)",
                          o.decoder_tokens)
            : fmt::format("the decoder's self-attention caches up to --context ({} tokens): it "
                          "holds only the decoder's own tokens; --decoder-tokens sets them",
                          o.context_tokens));
  }
  if (replicated) {
    e.assumptions.push_back(
        fmt::format("KV heads fewer than --tp {}: each GPU keeps a replica of "
                    "one KV head (vLLM, llm-analysis)",
                    o.tp));
  }
}

// EstimateKvCache's walk over the layers: each layer's entries (kind, tokens, bytes) into the
// estimate, the totals, and what the options fix for every layer (dtype bits, block rounding,
// the encoder's and the decoder's lengths).
class KvLayerWalk {
 public:
  // `block`: the block size after HybridStatePage; `state_page`: its page (0: none).
  KvLayerWalk(const Model& model, const KvCacheOptions& o, uint64_t block, uint64_t state_page,
              KvCacheEstimate& e);
  Status Layer(uint64_t i, const LayerInfo& L);
  // The totals, with the assumption lines; an error when the total overflowed.
  Status Finish();

 private:
  uint64_t RoundTokens(uint64_t t) const { return block_ ? CeilDiv(t, block_) * block_ : t; }
  // One entry of `tokens` tokens for all o.batch sequences.
  Status AddEntry(uint64_t i, std::string kind, uint64_t tokens, uint64_t elems_per_token,
                  uint32_t elem_bits);
  Status RecurrentState(uint64_t i, const LayerInfo& L);
  Status MlaLayer(uint64_t i, const LayerInfo& L);
  Status AttentionLayer(uint64_t i, const LayerInfo& L);
  Status IndexerKeys(uint64_t i, const LayerInfo& L);
  Status CrossAttention(uint64_t i, const LayerInfo& L);

  const Model& model_;
  const Hyperparameters& hp_;
  const KvCacheOptions& o_;
  KvCacheEstimate& e_;
  const uint64_t block_;
  const uint64_t state_page_;
  const uint32_t bits_;
  const uint32_t model_bits_;
  const bool model_dtype_state_;
  uint64_t ctx_ = 0;
  uint64_t encoder_len_ = 0;
  bool encoder_is_context_ = false;
  uint64_t self_tokens_ = 0;
  bool replicated_ = false;
  ByteSum total_, per_token_, state_total_;
};

KvLayerWalk::KvLayerWalk(const Model& model, const KvCacheOptions& o, uint64_t block,
                         uint64_t state_page, KvCacheEstimate& e)
    : model_(model),
      hp_(model.hp),
      o_(o),
      e_(e),
      block_(block),
      state_page_(state_page),
      bits_(KvBits(o.dtype, o.model_dtype)),
      model_bits_(DtypeBits(o.model_dtype) ? DtypeBits(o.model_dtype) : 16),
      model_dtype_state_(TransformersStateInModelDtype(model)) {
  ctx_ = RoundTokens(o.context_tokens);
  // Encoder-decoder models: the encoder's length is the config's, --encoder-tokens, or, where the
  // model states none (T5's relative positions), the prompt itself; then the decoder's
  // self-attention holds only the decoder's tokens (FINDINGS 1h: --decoder-tokens, else the
  // context as the most it could hold).
  encoder_len_ = o.encoder_tokens ? o.encoder_tokens : hp_.encoder_max_positions;
  encoder_is_context_ = hp_.is_encoder_decoder && encoder_len_ == 0;
  if (encoder_is_context_) encoder_len_ = o.context_tokens;
  self_tokens_ = encoder_is_context_ && o.decoder_tokens ? RoundTokens(o.decoder_tokens) : ctx_;
}

Status KvLayerWalk::AddEntry(uint64_t i, std::string kind, uint64_t tokens,
                             uint64_t elems_per_token, uint32_t elem_bits) {
  auto per_tok = BitsToBytes(elems_per_token, elem_bits);
  auto elems = CheckedMul(elems_per_token, tokens);
  auto all = elems ? CheckedMul(*elems, o_.batch) : std::nullopt;
  auto bytes = all ? BitsToBytes(*all, elem_bits) : std::nullopt;
  if (!per_tok || !bytes) return MakeError("{}: kv cache size overflows", model_.name);
  e_.layers.push_back({i, std::move(kind), tokens, *per_tok, *bytes});
  total_.Add(*bytes);
  return Ok{};
}

Status KvLayerWalk::Layer(uint64_t i, const LayerInfo& L) {
  if (L.kv_shared && L.attention != AttentionKind::kNone) {
    e_.layers.push_back({i, "shared", 0, 0, 0});
    return Ok{};
  }
  if (L.recurrent) {
    MEMFIT_RETURN_IF_ERROR(RecurrentState(i, L));
    if (L.attention == AttentionKind::kNone) return Ok{};
  }
  switch (L.attention) {
    case AttentionKind::kNone:
      e_.layers.push_back({i, "none", 0, 0, 0});
      return Ok{};
    case AttentionKind::kMla:
      MEMFIT_RETURN_IF_ERROR(MlaLayer(i, L));
      break;
    case AttentionKind::kFull:
    case AttentionKind::kSliding:
    case AttentionKind::kChunked:
      MEMFIT_RETURN_IF_ERROR(AttentionLayer(i, L));
      break;
  }
  if (L.indexer_head_dim > 0) MEMFIT_RETURN_IF_ERROR(IndexerKeys(i, L));
  if (hp_.is_encoder_decoder) MEMFIT_RETURN_IF_ERROR(CrossAttention(i, L));
  return Ok{};
}

Status KvLayerWalk::RecurrentState(uint64_t i, const LayerInfo& L) {
  const uint64_t steps = o_.conv_full_kernel ? L.state.conv_kernel
                                             : (L.state.conv_kernel ? L.state.conv_kernel - 1 : 0);
  RecurrentElements r = RecurrentStateElements(L.state, steps, o_.tp);
  const uint32_t state_bits = L.state.state_bits ? L.state.state_bits
                              : o_.recurrent_state_fp32 && !model_dtype_state_ ? 32
                                                                               : model_bits_;
  auto one = StateBytes(r, model_bits_, state_bits);
  if (!one) return MakeError("{}: recurrent state size overflows", model_.name);
  const uint64_t per_seq = std::max(*one, state_page_);
  auto bytes = CheckedMul(per_seq, o_.batch);
  if (!bytes) return MakeError("{}: recurrent state size overflows", model_.name);
  e_.layers.push_back({i, std::string(LayerMixerName(L.mixer)), 0, 0, *bytes});
  total_.Add(*bytes);
  state_total_.Add(*bytes);
  return Ok{};
}

Status KvLayerWalk::MlaLayer(uint64_t i, const LayerInfo& L) {
  uint64_t elems;
  if (o_.mla_latent) {
    if (hp_.kv_lora_rank == 0) {
      return MakeError("{}: MLA layer {} without kv_lora_rank in the model description",
                       model_.name, i);
    }
    elems = hp_.kv_lora_rank + hp_.qk_rope_head_dim;  // one latent per token, all heads
  } else {
    elems = CeilDiv(L.num_heads, o_.tp) * (L.head_dim_k + L.head_dim_v);
  }
  if (o_.mla_latent && o_.fp8_indexer && o_.dtype == KvDtype::kFp8 &&
      model_.model_type == "deepseek_v32") {
    // A paged engine's fp8 cache of DeepSeek-V3.2 is FlashMLA's sparse layout, "fp8_ds_mla"
    // (vLLM's vllm/model_executor/models/config.py DeepseekV32ForCausalLM turns any fp8
    // --kv-cache-dtype into it; SGLang's NSATokenToKVPool, quant_block_size 128 and
    // rope_storage_dtype bfloat16): the latent in fp8, a float32 scale per 128 of it and
    // the rope part in bf16. DeepSeek-V3.2: 512 + 4 x 4 + 64 x 2 = 656 bytes per token.
    elems = hp_.kv_lora_rank + CeilDiv(hp_.kv_lora_rank, 128) * 4 + hp_.qk_rope_head_dim * 2;
    per_token_.Add(elems);
    return AddEntry(i, "mla", ctx_, elems, 8);
  }
  per_token_.Add(*BitsToBytes(elems, bits_));
  return AddEntry(i, "mla", ctx_, elems, bits_);
}

Status KvLayerWalk::AttentionLayer(uint64_t i, const LayerInfo& L) {
  uint64_t kv = L.num_kv_heads ? L.num_kv_heads : L.num_heads;
  if (kv == 0 || L.head_dim_k == 0) {
    return MakeError("{}: the KV cache of layer {} needs {}, which the config does not "
                     "give; `memfit estimate-memory` still answers",
                     model_.name, i,
                     L.num_heads == 0 ? "\"num_attention_heads\""
                     : kv == 0        ? "\"num_key_value_heads\""
                                      : "\"head_dim\"");
  }
  if (kv < o_.tp) replicated_ = true;
  uint64_t heads = std::max<uint64_t>(CeilDiv(kv, o_.tp), 1);
  uint64_t elems = heads * (L.head_dim_k + (L.k_eq_v ? 0 : L.head_dim_v));
  per_token_.Add(*BitsToBytes(elems, bits_));
  uint64_t tokens = self_tokens_;
  std::string kind = "full";
  if (L.attention != AttentionKind::kFull && L.window_tokens > 0) {
    uint64_t kept = L.window_tokens;
    if (o_.window_extra_tokens) kept = L.window_tokens - 1 + o_.window_extra_tokens;
    tokens = std::min(self_tokens_, RoundTokens(kept));
    kind = L.attention == AttentionKind::kSliding ? "sliding" : "chunked";
  }
  if (L.compress_ratio > 0) {
    // DeepSeek-V4: the window plus one compressed entry per compress_ratio tokens.
    MEMFIT_RETURN_IF_ERROR(AddEntry(i, kind, tokens, elems, bits_));
    kind = "compressed";
    tokens = RoundTokens(CeilDiv(o_.context_tokens, L.compress_ratio));
  }
  return AddEntry(i, kind, tokens, elems, bits_);
}

// DSA lightning indexer: one key of index_head_dim per token (per compressed entry in
// DeepSeek-V4), replicated across TP ranks. Paged engines: fp8 + a float32 scale per 128.
Status KvLayerWalk::IndexerKeys(uint64_t i, const LayerInfo& L) {
  uint64_t tokens = L.compress_ratio ? RoundTokens(CeilDiv(o_.context_tokens, L.compress_ratio))
                                     : ctx_;
  if (o_.fp8_indexer) {
    return AddEntry(i, "indexer", tokens,
                    L.indexer_head_dim + CeilDiv(L.indexer_head_dim, 128) * 4, 8);
  }
  return AddEntry(i, "indexer", tokens, L.indexer_head_dim, model_bits_);
}

// Every decoder layer of an encoder-decoder model: cross-attention over the encoder's output.
Status KvLayerWalk::CrossAttention(uint64_t i, const LayerInfo& L) {
  uint64_t kv = L.num_kv_heads ? L.num_kv_heads : L.num_heads;
  uint64_t elems = std::max<uint64_t>(CeilDiv(kv, o_.tp), 1) * (L.head_dim_k + L.head_dim_v);
  return AddEntry(i, "cross", RoundTokens(encoder_len_), elems, bits_);
}

Status KvLayerWalk::Finish() {
  if (total_.overflowed()) return MakeError("{}: kv cache size overflows", model_.name);
  AddKvAssumptions(hp_, o_, encoder_is_context_, replicated_, e_);
  e_.bytes = total_.total();
  e_.bytes_per_token = per_token_.total();
  e_.state_bytes = state_total_.total();
  return Ok{};
}

}  // namespace

Result<KvCacheEstimate> EstimateKvCache(const Model& model, const KvCacheOptions& o) {
  KvCacheEstimate e;
  if (o.tp == 0 || o.batch == 0) return MakeError("kv cache: --tp and --batch must be at least 1");
  std::vector<LayerInfo> layers = model.hp.layers;
  if (layers.empty()) {
    MEMFIT_ASSIGN_OR_RETURN(layers, UniformLayers(model, e.assumptions));
  }
  const uint32_t bits = KvBits(o.dtype, o.model_dtype);
  const uint32_t model_bits = DtypeBits(o.model_dtype) ? DtypeBits(o.model_dtype) : 16;
  uint64_t block = o.block_size;
  uint64_t state_page = 0;
  if (o.pad_state_to_page && block > 0) {
    MEMFIT_ASSIGN_OR_RETURN(
        state_page, HybridStatePage(model, layers, o, bits, model_bits, block, e.assumptions));
  }
  e.block_size = block;
  KvLayerWalk walk(model, o, block, state_page, e);
  for (uint64_t i = 0; i < layers.size(); ++i) {
    MEMFIT_RETURN_IF_ERROR(walk.Layer(i, layers[i]));
  }
  MEMFIT_RETURN_IF_ERROR(walk.Finish());
  return e;
}

}  // namespace memfit
