// KV cache bytes per layer: GQA/MQA heads, MLA latent, sliding windows, cross-attention,
// kv dtype, paged block rounding, TP split/replication. docs/estimates.md, "KV cache".

#include <algorithm>

#include <fmt/format.h>

#include "memfit/checked_math.h"
#include "memfit/estimate_inference.h"

namespace memfit {
namespace {

uint64_t CeilDiv(uint64_t a, uint64_t b) { return b == 0 ? a : a / b + (a % b != 0); }

// Bytes for `elements` of `bits` each, rounded up; nullopt on overflow.
std::optional<uint64_t> BitsToBytes(uint64_t elements, uint32_t bits) {
  auto b = CheckedMul(elements, bits);
  if (!b) return std::nullopt;
  return CeilDiv(*b, 8);
}

}  // namespace

std::string_view KvDtypeName(KvDtype dtype) {
  switch (dtype) {
    case KvDtype::kModel: return "model";
    case KvDtype::kF32: return "float32";
    case KvDtype::kF16: return "float16";
    case KvDtype::kBF16: return "bfloat16";
    case KvDtype::kFp8: return "fp8";
    case KvDtype::kInt8: return "int8";
    case KvDtype::kInt4: return "int4";
  }
  return "?";
}

Result<KvDtype> ParseKvDtype(std::string_view s) {
  if (s == "model" || s == "auto") return KvDtype::kModel;
  if (s == "float32" || s == "fp32") return KvDtype::kF32;
  if (s == "float16" || s == "fp16" || s == "f16") return KvDtype::kF16;
  if (s == "bfloat16" || s == "bf16") return KvDtype::kBF16;
  if (s == "fp8" || s == "fp8_e4m3" || s == "fp8_e5m2" || s == "fp8-e4m3") return KvDtype::kFp8;
  if (s == "int8" || s == "q8_0") return KvDtype::kInt8;
  if (s == "int4" || s == "q4_0") return KvDtype::kInt4;
  return MakeError("--kv-dtype {}: expected model, float16, bfloat16, float32, fp8, int8 or int4", s);
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

Result<KvCacheEstimate> EstimateKvCache(const Model& model, const KvCacheOptions& o) {
  const Hyperparameters& hp = model.hp;
  KvCacheEstimate e;
  if (o.tp == 0 || o.batch == 0) return MakeError("kv cache: --tp and --batch must be at least 1");
  std::vector<LayerInfo> layers = hp.layers;
  if (layers.empty()) {
    if (hp.num_layers == 0 || hp.num_attention_heads == 0) {
      return MakeError("{}: kv cache needs the number of layers and attention heads (not in the "
                       "model description)", model.name);
    }
    uint64_t hd = hp.head_dim ? hp.head_dim : hp.hidden_size / hp.num_attention_heads;
    uint64_t kv = hp.num_kv_heads ? hp.num_kv_heads : hp.num_attention_heads;
    layers.assign(hp.num_layers, LayerInfo{.num_heads = hp.num_attention_heads, .num_kv_heads = kv,
                                           .head_dim_k = hd, .head_dim_v = hd});
    e.assumptions.push_back("no per-layer attention description: every layer assumed full "
                            "attention with " + std::to_string(kv) + " KV heads of " +
                            std::to_string(hd));
  }
  const uint32_t bits = KvBits(o.dtype, o.model_dtype);
  auto round_tokens = [&](uint64_t t) { return o.block_size ? CeilDiv(t, o.block_size) * o.block_size : t; };
  bool replicated = false;
  ByteSum total, per_token;
  auto add_layer = [&](uint64_t i, std::string kind, uint64_t tokens, uint64_t elems_per_token) -> Status {
    auto per_tok = BitsToBytes(elems_per_token, bits);
    auto elems = CheckedMul(elems_per_token, tokens);
    auto all = elems ? CheckedMul(*elems, o.batch) : std::nullopt;
    auto bytes = all ? BitsToBytes(*all, bits) : std::nullopt;
    if (!per_tok || !bytes) return MakeError("{}: kv cache size overflows", model.name);
    e.layers.push_back({i, std::move(kind), tokens, *per_tok, *bytes});
    total.Add(*bytes);
    return Ok{};
  };
  for (uint64_t i = 0; i < layers.size(); ++i) {
    const LayerInfo& L = layers[i];
    const uint64_t ctx = round_tokens(o.context_tokens);
    switch (L.attention) {
      case AttentionKind::kNone:
        e.layers.push_back({i, "none", 0, 0, 0});
        continue;
      case AttentionKind::kMla: {
        uint64_t elems;
        if (o.mla_latent) {
          if (hp.kv_lora_rank == 0) {
            return MakeError("{}: MLA layer {} without kv_lora_rank in the model description",
                             model.name, i);
          }
          elems = hp.kv_lora_rank + hp.qk_rope_head_dim;  // one latent per token, all heads
        } else {
          elems = CeilDiv(L.num_heads, o.tp) * (L.head_dim_k + L.head_dim_v);
        }
        per_token.Add(*BitsToBytes(elems, bits));
        MEMFIT_RETURN_IF_ERROR(add_layer(i, "mla", ctx, elems));
        break;
      }
      case AttentionKind::kFull:
      case AttentionKind::kSliding:
      case AttentionKind::kChunked: {
        uint64_t kv = L.num_kv_heads ? L.num_kv_heads : L.num_heads;
        if (kv < o.tp) replicated = true;
        uint64_t heads = std::max<uint64_t>(CeilDiv(kv, o.tp), 1);
        uint64_t elems = heads * (L.head_dim_k + L.head_dim_v);
        per_token.Add(*BitsToBytes(elems, bits));
        uint64_t tokens = ctx;
        std::string kind = "full";
        if (L.attention != AttentionKind::kFull && L.window_tokens > 0) {
          tokens = std::min(ctx, round_tokens(L.window_tokens));
          kind = L.attention == AttentionKind::kSliding ? "sliding" : "chunked";
        }
        MEMFIT_RETURN_IF_ERROR(add_layer(i, kind, tokens, elems));
        break;
      }
    }
    if (hp.is_encoder_decoder) {
      uint64_t enc = o.encoder_tokens ? o.encoder_tokens : hp.encoder_max_positions;
      if (enc == 0) {
        return MakeError("{}: encoder-decoder cross-attention cache needs the encoder length "
                         "(--encoder-tokens)", model.name);
      }
      uint64_t kv = L.num_kv_heads ? L.num_kv_heads : L.num_heads;
      uint64_t elems = std::max<uint64_t>(CeilDiv(kv, o.tp), 1) * (L.head_dim_k + L.head_dim_v);
      MEMFIT_RETURN_IF_ERROR(add_layer(i, "cross", round_tokens(enc), elems));
    }
  }
  if (total.overflowed()) return MakeError("{}: kv cache size overflows", model.name);
  if (hp.is_encoder_decoder) {
    e.assumptions.push_back("every decoder layer has cross-attention over the encoder output with "
                            "its self-attention head layout");
  }
  if (replicated) {
    e.assumptions.push_back(fmt::format("KV heads fewer than --tp {}: each GPU keeps a replica of "
                                        "one KV head (vLLM, llm-analysis)", o.tp));
  }
  e.bytes = total.total();
  e.bytes_per_token = per_token.total();
  return e;
}

}  // namespace memfit
