// Saved-for-backward bytes of one transformer layer, tensor by tensor, for the implementation
// transformers runs (eager / SDPA / FlashAttention-2, RMSNorm with its fp32 upcast or LayerNorm,
// gated or plain MLP, dropout masks, LoRA inputs). Sources and derivation: docs/estimates.md.

#include "estimate/activations.h"
#include "estimate/mamba2_scan.h"
#include "estimate/prefill_terms.h"

#include <algorithm>
#include <string_view>

#include "memfit/checked_math.h"

namespace memfit::estimate {
namespace {


}  // namespace

namespace {

// The T5 family's modeling code (modeling_t5.py, modeling_mt5.py, modeling_umt5.py).
bool IsT5Family(const Model& model) {
  static constexpr std::string_view kT5[] = {"t5", "mt5", "umt5"};
  for (std::string_view type : kT5) {
    if (model.model_type == type) return true;
  }
  return false;
}

}  // namespace

double MlpActivationDropout(const Model& model) {
  // T5DenseActDense / T5DenseGatedActDense apply `self.dropout` ("dropout_rate", which the T5
  // builders read into hidden_dropout) between the activation and wo.
  return IsT5Family(model) ? model.hp.hidden_dropout : 0.0;
}

bool PassesPositionBiasToLayers(const Model& model) {
  // T5Stack.forward hands each block the (batch, heads, q, k) position bias plus mask computed
  // by the first; under gradient checkpointing it is an input of every checkpointed block.
  return IsT5Family(model);
}

namespace {

// A dropout mask's bytes per element for an input of `bytes` per element: CUDA's bool mask, or
// the input's dtype on CPU (FINDINGS.md 2i).
uint64_t MaskBytes(const ActivationParams& p, uint64_t bytes) {
  return p.dropout_mask_in_input_dtype ? bytes : 1;
}

// Input of `n` linears reading the same tensor of width `width`: under autocast each casts its
// own copy; otherwise they share it.
uint64_t LinearInputBytes(const ActivationParams& p, uint64_t n, uint64_t width) {
  if (n == 0) return 0;
  return p.autocast ? n * p.compute_bytes * width : p.stream_bytes * width;
}

// The MLP block's saved bytes per token (after its norm): gated or plain, the experts a token
// reaches, dropout masks, the router.
uint64_t MlpSavedPerToken(const Hyperparameters& hp, const LayerInfo& info,
                          const ActivationParams& p, bool full_linear) {
  const uint64_t h = hp.hidden_size;
  const uint64_t c = p.compute_bytes;
  uint64_t f = info.moe
                   ? (hp.moe_intermediate_size ? hp.moe_intermediate_size : hp.intermediate_size)
                   : (info.intermediate_size ? info.intermediate_size : hp.intermediate_size);
  f = CeilDiv(f, p.tp);
  const uint64_t k = info.moe ? std::max<uint64_t>(hp.experts_per_token, 1) : 1;
  uint64_t mlp = 0;
  if (hp.gated_mlp) {
    if (full_linear) mlp += LinearInputBytes(p, 2, h);  // gate, up
    mlp += k * 3 * c * f;                               // gate out, act out, up out
    if (full_linear) mlp += k * c * f;                  // product (down_proj input)
  } else {
    if (full_linear) mlp += LinearInputBytes(p, 1, h);
    mlp += k * c * f;                   // fc1 output (GELU input)
    if (full_linear) mlp += k * c * f;  // GELU output (fc2 input)
    if (hp.activation == "gelu_new") {
      // NewGELUActivation (transformers activations.py:57 at v4.48.3) is the tanh formula in
      // Python, `0.5 * input * (1.0 + torch.tanh(...))`: autograd also keeps tanh's output and
      // both factors of the last product, three more f-wide tensors (GPT-2's and Phi's
      // default; c-g2-tr-fp32: 12 x 3 x 512 x 3072 x 4 = 226 MB of the 1162 MB of forward
      // blocks at its peak, FINDINGS.md 2k).
      mlp += k * 3 * c * f;
    }
  }
  // A dropout on the activation's output (T5): its mask; its output is the down projection's
  // input, counted above.
  if (p.activation_dropout > 0) mlp += k * MaskBytes(p, c) * f;
  if (info.moe) {
    mlp += 2 * 4 * std::max<uint64_t>(hp.num_experts, 1) + k * c * h;  // router, combine
    // The expert loop adds each expert's weighted output into the layer's output with
    // `final_hidden_states.index_add_(0, top_x, current_hidden_states.to(hidden_states.dtype))`
    // (modeling_qwen2_moe.py, modeling_mixtral.py at v4.48.3), and IndexAddBackward0 keeps its
    // source (derivatives.yaml: `grad.index_select(dim, index).expand_as(source)`; torch 1.13's
    // node has `_saved_source`): k rows of h per token in the stream's dtype (measured:
    // s-q2m-tr-fp32-1x1024, 8 `aten::mul` blocks of k x T x h x 4 per layer).
    mlp += k * p.stream_bytes * h;
    // transformers' expert loop (modeling_qwen2_moe.py Qwen2MoeSparseMoeBlock at v4.48.3):
    // each expert gathers its tokens into a copy, `hidden_states[None, top_x]`, the input its
    // gate and up projections save: k copies per token.
    if (full_linear) mlp += k * c * h;
    // A shared expert beside the routed ones (Qwen2-MoE `shared_expert` and its sigmoid
    // `shared_expert_gate`, DeepSeek `shared_experts`): a dense gated MLP of its own width, and
    // its output, which the gate's product saves (measured: s-q2m-tr-fp32-1x1024).
    const uint64_t shared_f =
        CeilDiv(hp.shared_expert_intermediate_size
                    ? hp.shared_expert_intermediate_size
                    : hp.num_shared_experts * (hp.moe_intermediate_size ? hp.moe_intermediate_size
                                                                        : hp.intermediate_size),
                p.tp);
    if (shared_f && hp.gated_mlp) {
      mlp += 3 * c * shared_f + (full_linear ? c * shared_f : 0) + c * h;
    }
  }
  if (p.hidden_dropout > 0) mlp += MaskBytes(p, c) * h;
  return mlp;
}

// LoRA's saved bytes per token: each adapter's input and its rank-wide output.
uint64_t LoraSavedPerToken(const LayerTraining& lt, const ActivationParams& p) {
  const uint64_t c = p.compute_bytes;
  // x for lora_A (a cast copy under autocast / a dropout copy + mask), A's r outputs.
  // Without autocast PEFT casts x to the adapters' dtype, fp32 (peft 0.14 lora/layer.py:618
  // `x = x.to(lora_A.weight.dtype)`, bnb.py:204-207 likewise): A saves that fp32 copy and B
  // A's fp32 output, whatever the base's dtype (measured: c-be-lora-bf16, `aten::to` blocks of
  // b x T x in x 4 per adapter). Under autocast lora_A's input is cast to c.
  const uint64_t lora_b = p.autocast ? c : 4;
  uint64_t lora = 0;
  for (uint64_t in : lt.lora_in_dims) {
    lora += lora_b * in + lora_b * p.lora_rank;
    if (p.lora_dropout > 0)
      lora += MaskBytes(p, lora_b) * in;  // the mask (its output replaces the copy)
  }
  return lora;
}

}  // namespace

LayerActivation LayerSavedBytes(const Model& model, const LayerInfo& info, const LayerTraining& lt,
                                const ActivationParams& p) {
  const Hyperparameters& hp = model.hp;
  const uint64_t h = hp.hidden_size;
  const uint64_t c = p.compute_bytes, sb = p.stream_bytes;
  const uint64_t nh = CeilDiv(info.num_heads, p.tp);
  const uint64_t nkv = std::max<uint64_t>(CeilDiv(info.num_kv_heads ? info.num_kv_heads : info.num_heads, p.tp), 1);
  const uint64_t dk = info.head_dim_k, dv = info.head_dim_v;
  const bool rms = hp.norm != "layernorm";
  // The softmax runs in float32 and is cast back: RMSNorm-era classes and every class on Llama's
  // eager_attention_forward (`softmax(attn_weights, dim=-1, dtype=torch.float32).to(
  // query.dtype)` at v4.48.3), LayerNorm ones included (StableLM, StarCoder2, Cohere, Phi;
  // measured: s-slm-lora64-bf16-2x1024, two float32 [b, heads, T, T] blocks saved). Decoder-only
  // causal LMs only: encoders and encoder-decoders keep their own attention modules.
  const bool causal_decoder =
      !hp.is_encoder_decoder && model.architecture.ends_with("ForCausalLM");
  // GPT-J and CodeGen upcast q and k to float32 before the scores: the matmul saves the float32
  // copies, the softmax is float32 and its `.to(value.dtype)` is saved for the value matmul
  // (measured: s-gj-lora64-bf16-1x2048, -17.2% before).
  const bool fp32_qk = UpcastsQueryKey(model.model_type);
  const bool fp32_softmax =
      rms || fp32_qk || (causal_decoder && LlamaStyleAttention(model.model_type));
  const bool full_linear = lt.trainable && lt.save_all_linear_inputs;
  auto mask = [&](uint64_t bytes) { return MaskBytes(p, bytes); };
  // Per token (elements already multiplied by bytes); the s^2 terms per token are x seq.
  uint64_t per_tok = 0, scores_per_tok = 0, core_per_tok = 0;
  // A norm's saved tensors: RMSNorm keeps its fp32 view of the input and the normalized value
  // cast back (weight * x.to(dtype)); LayerNorm keeps its input (fp32 under autocast).
  auto norm_saved = [&]() -> uint64_t { return rms ? 4 * h + sb * h : (p.autocast ? 4 : sb) * h; };
  auto linear_inputs = [&](uint64_t n, uint64_t width) { return LinearInputBytes(p, n, width); };
  // One attention block's saved tensors: per query token, per key/value token and per (query,
  // key) pair (eager's scores); `core` is what selective recomputation drops. Self-attention
  // reads one tensor for q, k and v; cross-attention's k and v read the encoder output, which
  // every decoder layer shares (the caller counts it once), except under autocast, where each
  // linear casts its own copy.
  struct AttentionSaved {
    uint64_t per_q_tok = 0, per_kv_tok = 0, scores_per_pair = 0;
    uint64_t core_per_q_tok = 0, core_per_kv_tok = 0;
  };
  auto attention_block = [&](bool is_cross) {
    AttentionSaved a;
    a.per_q_tok += norm_saved();
    if (full_linear) {
      if (!is_cross) {
        a.per_q_tok += linear_inputs(3, h);  // q, k, v (one fused qkv saves one copy)
      } else {
        a.per_q_tok += linear_inputs(1, h);              // q reads the decoder stream
        if (p.autocast) a.per_kv_tok += 2 * c * h;       // k, v: their casts of the encoder output
      }
    }
    if (p.attn == AttnImpl::kFlash) {
      a.core_per_q_tok = c * nh * dk + c * nh * dv + 4 * nh;  // q, out, lse
      a.core_per_kv_tok = c * nkv * (dk + dv);
    } else if (p.attn == AttnImpl::kSdpa) {
      a.core_per_q_tok = c * nh * dk + c * nh * dv + 4 * nh;  // q, out, lse
      a.core_per_kv_tok = c * nh * (dk + dv);                  // k, v repeated to nh heads
    } else {
      const uint64_t qk = fp32_qk ? 4 : c;      // GPT-J: the float32 copies the matmul saves
      a.core_per_q_tok = qk * nh * dk;          // q
      a.core_per_kv_tok = qk * nh * dk + c * nh * dv;  // k and v after repeat_kv
      // Scores: softmax output (fp32 under autocast, fp32 upcast in RMSNorm-era models), its
      // cast back, dropout mask and output, the matmul's half copy. Per (query, key) pair.
      const uint64_t sm = (p.autocast || c == 4 || fp32_softmax) ? 4 : c;
      uint64_t s = sm, cur = sm;
      bool cast_saved = false;
      if (fp32_softmax && sm != c) {  // softmax(fp32).to(q.dtype)
        s += c;
        cur = c;
        cast_saved = true;
      }
      // The dropout's mask and output; its output replaces the cast as the matmul's saved input
      // (T5 under autocast: softmax(scores.float()).type_as(scores), then dropout; measured
      // c-t5-tr-bf16m: 4 + 2 + 2 B per score).
      if (p.attention_dropout > 0) s += mask(cur) + (cast_saved ? 0 : cur);
      if (cur != c) s += c;  // matmul(probs, v) under autocast casts the probabilities
      if (p.attn_softcap) s += c;  // tanh's saved output (measured: FINDINGS.md 2o)
      a.scores_per_pair = nh * s;
    }
    a.per_q_tok += a.core_per_q_tok;
    a.per_kv_tok += a.core_per_kv_tok;
    if (full_linear && p.attn != AttnImpl::kFlash) a.per_q_tok += linear_inputs(1, nh * dv);  // o
    if (p.hidden_dropout > 0) a.per_q_tok += mask(c) * h;  // dropout mask after the output
    return a;
  };
  // --- recurrent mixers (Mamba, gated delta-net, short conv, ...): approximated as three
  // conv-channel-wide tensors per token (the input projection's output, the conv output and the
  // scan output) plus the norm; layers without a mixer (a hybrid pattern's MLP-only layers) save
  // nothing here.
  // An encoder's layers (BERT, DistilBERT, DeBERTa, CLIP text) keep no KV cache (kNone) but mix
  // with attention (LayerMixer::kAttention): their attention block is counted below.
  if (info.attention == AttentionKind::kNone && info.mixer != LayerMixer::kAttention) {
    if (info.mixer != LayerMixer::kNone) {
      per_tok += norm_saved();
      uint64_t width = info.state.conv_channels ? info.state.conv_channels : h;
      per_tok += 3 * c * CeilDiv(width, p.tp);
    }
    if (p.hidden_dropout > 0) per_tok += mask(c) * h;
  } else {
  // --- self-attention block: queries, keys and values over the same tokens
  const AttentionSaved self = attention_block(false);
  per_tok += self.per_q_tok + self.per_kv_tok;
  scores_per_tok = self.scores_per_pair;
  core_per_tok = self.core_per_q_tok + self.core_per_kv_tok;
  }
  // --- cross-attention block (encoder-decoder decoder layers: T5 layer.1.EncDecAttention, BART
  // encoder_attn): queries over the decoder tokens, keys and values over the encoder's
  // p.cross_seq tokens, scores decoder x encoder.
  AttentionSaved cross;
  if (info.cross_attention && p.cross_seq > 0) cross = attention_block(true);
  // --- MLP block
  per_tok += norm_saved();
  for (uint32_t i = 0; i < p.extra_norms; ++i) per_tok += norm_saved();  // FINDINGS.md 2o
  per_tok += MlpSavedPerToken(hp, info, p, full_linear);
  // --- LoRA
  per_tok += LoraSavedPerToken(lt, p);

  const uint64_t tokens = p.batch * p.seq;
  const uint64_t kv_tokens = p.batch * p.cross_seq;
  LayerActivation a;
  auto mul = [](uint64_t x, uint64_t y) { return CheckedMul(x, y).value_or(UINT64_MAX); };
  auto add = [](uint64_t x, uint64_t y) { return CheckedAdd(x, y).value_or(UINT64_MAX); };
  const uint64_t cross_scores = mul(mul(cross.scores_per_pair, p.cross_seq), tokens);
  a.eager_scores_bytes = add(mul(mul(scores_per_tok, p.seq), tokens), cross_scores);
  const uint64_t cross_bytes =
      add(mul(cross.per_q_tok, tokens), mul(cross.per_kv_tok, kv_tokens));
  a.saved_bytes = add(add(mul(per_tok, tokens), a.eager_scores_bytes), cross_bytes);
  // Selective recomputation (Korthikanti et al.): the attention cores are recomputed.
  a.selective_bytes =
      add(mul(per_tok - core_per_tok, tokens),
          add(mul(cross.per_q_tok - cross.core_per_q_tok, tokens),
              mul(cross.per_kv_tok - cross.core_per_kv_tok, kv_tokens)));
  a.input_bytes = mul(sb * h, tokens);
  if (p.mamba2_torch_scan) {
    // The torch-path scan's float32 tensors kept for backward (selective recomputation does not
    // recompute them: they are not the attention core).
    if (auto shape = Mamba2ScanShapeFor(model, info, p.batch, p.seq, p.tp)) {
      const uint64_t scan = Mamba2TorchScanBytes(*shape).saved;
      a.saved_bytes = add(a.saved_bytes, scan);
      a.selective_bytes = add(a.selective_bytes, scan);
    }
  }
  return a;
}

}  // namespace memfit::estimate
