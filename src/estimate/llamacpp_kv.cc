// KV cache and recurrent state, exactly as llama.cpp allocates them:
//  - n_ctx padded to 256 (src/llama-context.cpp); non-unified KV: n_ctx_seq = pad(n_ctx/n_seq, 256),
//    n_ctx = n_ctx_seq * n_seq, one stream per sequence;
//  - per attention layer K = row_size(type_k, key_length * head_count_kv(il)) * cells, V likewise
//    (src/llama-kv-cache.cpp);
//  - sliding-window layers: cells = pad(min(base, n_swa * (unified ? n_seq : 1) + n_ubatch), 256)
//    per stream (src/llama-kv-cache-iswa.cpp), unless --swa-full;
//  - recurrent layers: F32 r and s states of n_embd_r / n_embd_s floats per sequence
//    (src/llama-hparams.cpp, src/llama-memory-recurrent.cpp);
//  - non-causal (embedding) models such as BERT keep no KV cache;
//  - a quantized V cache needs flash attention (V is stored transposed without it).

#include "estimate/llamacpp_internal.h"
#include "memfit/checked_math.h"
#include "memfit/recurrent_state.h"

namespace memfit::llamacpp {
namespace {

// Floats of recurrent state per sequence and layer (n_embd_r, n_embd_s); overflowed for absurd
// sizes. RWKV's token-shift and wkv states are llama.cpp's own; Mamba and short-conv states use
// the formula shared with the other engines (memfit/recurrent_state.h), keeping d_conv - 1 steps.
CheckedU64 EmbdR(const Hyperparameters& hp) {
  if (hp.wkv_head_size) return CheckedU64(hp.token_shift_count) * hp.hidden_size;
  RecurrentState s = RecurrentStateFromGguf(hp);
  return RecurrentStateElements(s, s.conv_kernel ? s.conv_kernel - 1 : 0).conv;
}

CheckedU64 EmbdS(const Hyperparameters& hp) {
  if (hp.wkv_head_size) return CheckedU64(hp.hidden_size) * hp.wkv_head_size;
  RecurrentState s = RecurrentStateFromGguf(hp);
  return RecurrentStateElements(s, 0).recurrent;
}

}  // namespace

Result<KvLayout> ComputeKv(const Model& model, const LlamaCppOptions& o, uint32_t n_seq,
                           uint64_t n_ctx_requested, uint64_t n_ubatch, bool flash_attn) {
  const Hyperparameters& hp = model.hp;
  const GgmlTypeInfo* tk = FindGgmlTypeByName(o.cache_type_k);
  const GgmlTypeInfo* tv = FindGgmlTypeByName(o.cache_type_v);
  if (!tk) return MakeError("--cache-type-k {}: unknown ggml type", o.cache_type_k);
  if (!tv) return MakeError("--cache-type-v {}: unknown ggml type", o.cache_type_v);
  if (tv->quantized && !flash_attn) {
    return MakeError("--cache-type-v {}: a quantized V cache requires flash attention (-fa on)", o.cache_type_v);
  }
  KvLayout kv;
  const bool unified = o.kv_unified || n_seq == 1;
  uint64_t n_ctx = Pad(n_ctx_requested, 256);
  if (!unified) {
    kv.n_ctx_seq = Pad(n_ctx / n_seq, 256);
    n_ctx = kv.n_ctx_seq * n_seq;
    kv.streams = n_seq;
  } else {
    kv.n_ctx_seq = n_ctx;
  }
  kv.n_ctx = n_ctx;
  const uint64_t base = unified ? n_ctx : kv.n_ctx_seq;  // cells per stream
  uint64_t swa = 0;
  if (hp.sliding_window) {
    const CheckedU64 window = CheckedU64(hp.sliding_window) * (unified ? n_seq : 1) + n_ubatch;
    swa = o.swa_full || window.overflowed() ? base : Pad(std::min(base, window.value()), 256);
  }
  const size_t L = hp.layers.size();
  kv.k_bytes.assign(L, 0);
  kv.v_bytes.assign(L, 0);
  kv.rs_bytes.assign(L, 0);
  bool any_swa = false;
  CheckedU64 k_total, v_total, rs_total;  // all layers: per-device sums cannot overflow either
  for (size_t il = 0; il < L; ++il) {
    const LayerInfo& li = hp.layers[il];
    if (li.recurrent) {
      const CheckedU64 bytes = (EmbdR(hp) + EmbdS(hp)) * n_seq * 4;
      rs_total += bytes;
      if (rs_total.overflowed()) return MakeError("recurrent state size of layer {} overflows 64 bits", il);
      kv.rs_bytes[il] = bytes.value();
      continue;
    }
    // Non-causal (embedding) models have no KV cache in llama.cpp (create_memory returns none).
    if (li.attention == AttentionKind::kNone || !hp.causal) continue;
    const bool is_swa = li.attention == AttentionKind::kSliding;
    any_swa |= is_swa;
    const CheckedU64 cells = CheckedU64(is_swa ? swa : base) * kv.streams;
    const CheckedU64 k_elements = CheckedU64(li.head_dim_k) * li.num_kv_heads;
    const CheckedU64 v_elements = CheckedU64(li.head_dim_v) * li.num_kv_heads;
    if (k_elements.overflowed() || v_elements.overflowed() || cells.overflowed()) {
      return MakeError("KV cache size of layer {} overflows 64 bits", il);
    }
    auto k_row = GgmlRowBytes(*tk, k_elements.value());
    auto v_row = GgmlRowBytes(*tv, v_elements.value());
    if (!k_row) return Wrap(k_row.error(), fmt::format("K cache of layer {} ({})", il, tk->name));
    if (!v_row) return Wrap(v_row.error(), fmt::format("V cache of layer {} ({})", il, tv->name));
    const CheckedU64 k = CheckedU64(*k_row) * cells, v = CheckedU64(*v_row) * cells;
    k_total += k;
    v_total += v;
    if ((k_total + v_total).overflowed()) {
      return MakeError("KV cache size of layer {} overflows 64 bits", il);
    }
    kv.k_bytes[il] = k.value();
    kv.v_bytes[il] = v.value();
  }
  kv.cells_full = base * kv.streams;
  kv.cells_swa = any_swa ? swa * kv.streams : 0;
  return kv;
}

}  // namespace memfit::llamacpp
