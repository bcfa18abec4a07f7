// The prefill's activation peak per GPU (estimate/inference_peaks.h): one forward pass walked
// layer by layer, each step's transient with what stays alive through the whole pass on top,
// then the logits. docs/estimates.md, "Inference" and "Prefill peak".

#include "estimate/inference_peaks.h"

#include <algorithm>
#include <iterator>

#include "estimate/mamba1_scan.h"
#include "estimate/mamba2_scan.h"
#include "estimate/prefill_terms.h"
#include "estimate/saturating_math.h"
#include "estimate/vllm_profile_run.h"
#include "memfit/checked_math.h"

namespace memfit::estimate {
namespace {

// Saturating: activation terms are bounded by the overflow check on the total.
using saturating::Add;
using saturating::Mul;

// Eager attention in transformers 4.48's refactored decoder layers returns the softmax
// probabilities (eager_attention_forward returns attn_weights; modeling_llama.py:335 at v4.48.3,
// `hidden_states, self_attn_weights = self.self_attn(...)`), which the layer holds in a local
// through its MLP; before 4.48 the attention module returned None unless output_attentions, and
// the older classes below drop them inside the attention module in every release.
bool KeepsAttentionWeights(std::string_view model_type, const RuntimeVersions& v) {
  return v.transformers >= LibraryVersion{4, 48} && LlamaStyleAttention(model_type);
}

// The logits' part of PrefillPeak: the hidden states the head reads and the logits of
// `p.logit_tokens` rows as transformers' forward, a serving engine's sampler or a vLLM release's
// profile run holds them (`p.engine`). `tokens`: batch x seq.
ActivationPeak LogitsPeak(const Model& model, const PrefillPass& p, uint64_t tokens) {
  const Hyperparameters& hp = model.hp;
  const uint64_t batch = p.batch, logit_tokens = p.logit_tokens;
  const uint32_t c = p.elem_bytes;
  const uint64_t h = hp.hidden_size;
  const uint64_t v = CeilDiv(hp.vocab_size, p.tp);
  if (p.engine.release_rules) {
    // vLLM's profile run: the forward's hidden states stay referenced by profile_run, the
    // sampled rows are gathered from them (`hidden_states[logit_indices]`), and their logits
    // are gathered over the whole vocabulary on every rank (LogitsProcessor's all-gather)
    // before the dummy sampler run's working set (estimate/vllm_profile_run.h).
    const uint64_t sampled =
        Mul({logit_tokens, hp.vocab_size, VllmSamplerBytesPerLogit(p.engine.sampler, c)});
    return {Add({Mul({Add({tokens, logit_tokens}), h, c}), sampled}), "sampler"};
  }
  if (logit_tokens < tokens || !p.transformers) {
    // The last token's logits (or the sampled rows of a serving engine's profile run) in the
    // model dtype plus their float32 upcast.
    return {Add({Mul({tokens, h, c}), Mul({logit_tokens, v, c + 4})}), "logits"};
  }
  // Logits for every token stay in the model dtype (no float32 upcast of all of them,
  // measured: validation/FINDINGS.md 1a); generate() upcasts the last row of each sequence.
  if (model.architecture.ends_with("ForMaskedLM")) {
    // A masked LM's forward: the head's transform (dense + LayerNorm outputs) and the logits
    // of every position, in the model dtype (FINDINGS.md, "Masked LM").
    return {Add({Mul({2, tokens, h, c}), Mul({tokens, v, c})}), "logits"};
  }
  if (RunsRemoteCode(model.model_type, p.versions) || UpcastsEveryLogit(model.model_type)) {
    // The Hub's modeling code upcasts every token's logits (`logits.float()`), and so do
    // GPT-J and CodeGen (`self.lm_head(hidden_states).to(torch.float32)`): both copies are
    // alive at the upcast; in float32 it is a no-op, and generate()'s clone of the last row
    // comes on top.
    const uint64_t logits = c >= 4 ? Add({Mul({tokens, v, c}), Mul({batch, v, 4})})
                                   : Mul({tokens, v, c + 4});
    return {Add({Mul({tokens, h, c}), logits}), "logits"};
  }
  return {Add({Mul({tokens, h, c}), Mul({tokens, v, c}), Mul({batch, v, 4})}), "logits"};
}

// The one layer used for a model described without per-layer facts: full attention with the
// global head counts and MLP width.
LayerInfo GenericPrefillLayer(const Hyperparameters& hp) {
  const uint64_t heads = hp.num_attention_heads;
  const uint64_t hd = hp.head_dim ? hp.head_dim : (heads ? hp.hidden_size / heads : 0);
  return LayerInfo{.num_heads = hp.num_attention_heads,
                   .num_kv_heads = hp.num_kv_heads ? hp.num_kv_heads : hp.num_attention_heads,
                   .head_dim_k = hd, .head_dim_v = hd, .intermediate_size = hp.intermediate_size};
}

// PrefillPeak's walk over one forward pass: every step's transient is a candidate for the peak,
// with what stays alive through the rest of the pass on top (MLA value views, the scaled
// embeddings, the projections the earlier layers' caches pin). The first of equal candidates
// names the peak.
class PrefillPeakWalk {
 public:
  PrefillPeakWalk(const Model& model, const PrefillPass& pass);
  void Layer(const LayerInfo& L);
  void Logits();
  ActivationPeak Peak() && { return std::move(best_); }

 private:
  void Consider(uint64_t bytes, std::string where);
  // Attention's working set beyond its input and projections: the scores (eager), or the
  // output and its float32 logsumexp; Gemma-2's window mask included.
  uint64_t AttentionCore(const LayerInfo& L, uint64_t nh, uint64_t kv_len,
                         uint64_t window_mask) const;
  void TorchScans(const LayerInfo& L);
  uint64_t MlpBytes(const LayerInfo& L, uint64_t nh, uint64_t kv_len) const;

  const Model& model_;
  const Hyperparameters& hp_;
  const PrefillPass p_;
  uint64_t tokens_ = 0;       // batch x seq
  uint64_t stream_ = 0;       // residual + normed input
  uint64_t mla_views_ = 0;
  uint64_t embeds_kept_ = 0;
  uint64_t pinned_ = 0;       // grows layer by layer
  uint64_t cache_before_ = 0; // the earlier layers' cache entries (PrefillPass::layer_cache)
  bool keeps_embeds_ = false; // inputs_embeds stays referenced once layer 0 has replaced it
  size_t layer_index_ = 0;
  ActivationPeak best_;
};

PrefillPeakWalk::PrefillPeakWalk(const Model& model, const PrefillPass& pass)
    : model_(model), hp_(model.hp), p_(pass) {
  const uint32_t c = p_.elem_bytes;
  const uint64_t h = hp_.hidden_size;
  tokens_ = Mul({p_.batch, p_.seq});
  // The residual and the normed input the attention and MLP read; OLMo-2 norms their outputs
  // instead and reads the residual itself (modeling_olmo2.py Olmo2DecoderLayer at v4.48.3).
  const bool post_norm = p_.transformers && PostNormOnly(model.model_type);
  stream_ = Mul({post_norm ? uint64_t{1} : uint64_t{2}, tokens_, h, c});
  // MLA in transformers (the Hub's DeepSeek code and the native class alike): the prefill's
  // value cache entries are views of kv_b_proj's output (`k_nope, value_states = torch.split(
  // kv, ...)`), so each MLA layer's cache holds heads x (qk_nope + v) per token, qk_nope more
  // than the compact cache, until the first decode step's torch.cat copies them (measured on
  // CPU: validation/FINDINGS.md 1i). Alive through the later layers and the logits.
  if (p_.transformers) {
    for (const auto& L : hp_.layers) {
      if (L.attention == AttentionKind::kMla) {
        mla_views_ = Add({mla_views_,
                          Mul({tokens_, CeilDiv(L.num_heads, p_.tp), hp_.qk_nope_head_dim, c})});
      }
    }
  }
  // Gemma and Gemma-2 scale the embedding by sqrt(hidden) into a new tensor (`hidden_states =
  // hidden_states * normalizer`, modeling_gemma2.py:641 at v4.48.3); `inputs_embeds` stays
  // referenced through every layer (measured: validation/FINDINGS.md 1l).
  const bool scaled_embeds = p_.transformers && (model.model_type == "gemma" ||
                                                 model.model_type == "gemma2");
  embeds_kept_ = scaled_embeds ? Mul({tokens_, h, c}) : 0;
  // The other classes whose first hidden state is inputs_embeds (prefill_terms.h) keep it too
  // once layer 0's output replaces the residual (measured: the s- rows of
  // cpu-torch1.13-tf4.48-slopes.csv).
  keeps_embeds_ = p_.transformers && !scaled_embeds && KeepsInputEmbeds(model.model_type);
}

void PrefillPeakWalk::Consider(uint64_t bytes, std::string where) {
  bytes = Add({bytes, mla_views_, embeds_kept_, pinned_, cache_before_});
  if (bytes > best_.bytes) best_ = {bytes, std::move(where)};
}

void PrefillPeakWalk::Layer(const LayerInfo& L) {
  const uint32_t c = p_.elem_bytes;
  if (keeps_embeds_ && layer_index_ == 1) embeds_kept_ = Mul({tokens_, hp_.hidden_size, c});
  const uint64_t nh = CeilDiv(L.num_heads, p_.tp);
  const uint64_t nkv = std::max<uint64_t>(CeilDiv(L.num_kv_heads, p_.tp), 1);
  const uint64_t qkv =
      Mul({tokens_, nh * L.head_dim_k + nkv * (L.head_dim_k + L.head_dim_v), c});
  uint64_t kv_len = p_.seq;
  if (L.attention == AttentionKind::kSliding && L.window_tokens && p_.attn == AttnImpl::kFlash) {
    kv_len = std::min(p_.seq, L.window_tokens);
  }
  // Gemma-2's sliding layers (every implementation but flash, modeling_gemma2.py:292-306 at
  // v4.48.3) rebuild the 4-D mask for the window: a bool `torch.tril(ones_like(mask))` and a
  // `torch.where` copy in the model dtype, both alive through the layer (FINDINGS.md 1l).
  uint64_t window_mask = 0;
  if (p_.transformers && p_.attn != AttnImpl::kFlash && L.attention == AttentionKind::kSliding &&
      model_.model_type == "gemma2") {
    window_mask = Mul({p_.batch, p_.seq, p_.seq, c + 1});
  }
  // eager_attention_forward's `repeat_kv(key_states, module.num_key_value_groups)` and the
  // same for the values (modeling_llama.py at v4.48.3): expand + reshape, a copy of both at the
  // query heads' count whenever the groups are more than one, alive through the scores
  // (measured: s-sc2-*, s-gr-* at 4 x 512 in validation/results/cpu-torch1.13-tf4.48-slopes.csv).
  uint64_t repeated_kv = 0;
  // The rotated q and k beside the projection outputs they were cut from (prefill_terms.h).
  const uint64_t rotated =
      p_.transformers && KeepsPreRotaryProjections(model_.model_type)
          ? Mul({tokens_, nh * L.head_dim_k + nkv * L.head_dim_k, c})
          : 0;
  if (p_.transformers && p_.attn == AttnImpl::kEager && nkv < nh &&
      LlamaStyleAttention(model_.model_type)) {
    repeated_kv = Mul({tokens_, nh, L.head_dim_k + L.head_dim_v, c});
  }
  if (L.attention != AttentionKind::kNone) {
    Consider(Add({stream_, qkv, rotated, repeated_kv, AttentionCore(L, nh, kv_len, window_mask)}),
             p_.attn == AttnImpl::kEager ? "attention scores" : "attention");
  }
  // From here this layer's cache entries are stored (its projection output is in `qkv` above).
  if (layer_index_ < p_.layer_cache.size()) {
    cache_before_ = Add({cache_before_, p_.layer_cache[layer_index_]});
  }
  if (p_.transformers) {
    pinned_ = Add({pinned_,
                   Mul({tokens_, PinnedProjectionElements(model_.model_type, L, p_.tp), c})});
  }
  if (p_.transformers && p_.scan == Mamba2Scan::kTorch) TorchScans(L);
  // The 4-D causal mask is the model forward's (`causal_mask = self._update_causal_mask(...)`),
  // handed to every layer: alive through the MLPs too (measured: s-p3-inf-fp32-4x512).
  uint64_t model_mask = 0;
  if (p_.transformers && p_.attn == AttnImpl::kEager && L.attention != AttentionKind::kNone) {
    const EagerScores scores = EagerScoresFor(model_.model_type, c, p_.fp16);
    if (scores.float_mask) model_mask = Mul({p_.batch, p_.seq, kv_len, c});
    // T5's position bias per head (measured: s-t5-inf-fp32-1x2048, -20% without it).
    if (scores.head_bias) model_mask = Add({model_mask, Mul({p_.batch, nh, p_.seq, kv_len, c})});
  }
  Consider(Add({stream_, MlpBytes(L, nh, kv_len), window_mask, model_mask}), "mlp");
  ++layer_index_;
}

uint64_t PrefillPeakWalk::AttentionCore(const LayerInfo& L, uint64_t nh, uint64_t kv_len,
                                        uint64_t window_mask) const {
  const uint32_t c = p_.elem_bytes;
  if (p_.attn == AttnImpl::kEager) {
    // The scores alive together at eager attention's peak, per family (prefill_terms.cc):
    // Llama-style classes softmax in float32 (c + 8 B per score in 16-bit, 8 in float32);
    // GPT-NeoX, GPT-2 and Falcon in the model dtype; BLOOM keeps a masked copy; GPT-J scores
    // in float32. Plus the 4-D causal mask (c) where the class builds one.
    const EagerScores scores =
        EagerScoresFor(p_.transformers ? model_.model_type : std::string_view(), c, p_.fp16);
    uint64_t core =
        Add({window_mask, Mul({p_.batch, nh, p_.seq, kv_len, scores.bytes_per_score})});
    if (scores.float_mask) core = Add({core, Mul({p_.batch, p_.seq, kv_len, c})});
    if (scores.head_bias) core = Add({core, Mul({p_.batch, nh, p_.seq, kv_len, c})});
    return Add({core, Mul({scores.outputs, tokens_, nh, L.head_dim_v, c})});
  }
  const uint64_t out = Mul({tokens_, nh * L.head_dim_v, c});
  return Add({window_mask, out, Mul({tokens_, nh, 4})});  // output + fp32 logsumexp per row
}

void PrefillPeakWalk::TorchScans(const LayerInfo& L) {
  const uint32_t c = p_.elem_bytes;
  if (auto shape = Mamba2ScanShapeFor(model_, L, p_.batch, p_.seq, p_.tp)) {
    // torch_forward: in_proj's output (gate | x B C | dt; gate is a view of it until the
    // gated norm) and the conv's activated output stay alive through the scan, whose float32
    // products come on top (estimate/mamba2_scan.h).
    const uint64_t d_inner = Mul({L.state.heads, shape->head_dim});
    const uint64_t proj =
        Mul({tokens_, CeilDiv(d_inner + L.state.conv_channels + L.state.heads, p_.tp), c});
    const uint64_t conv = Mul({tokens_, CeilDiv(L.state.conv_channels, p_.tp), c});
    Consider(Add({stream_, proj, conv, Mamba2TorchScanBytes(*shape).forward_peak}),
             "Mamba-2 scan (torch path)");
  }
  if (auto shape = Mamba1ScanShapeFor(model_, L, p_.batch, p_.seq, p_.tp)) {
    // slow_forward (modeling_jamba.py, modeling_mamba.py, modeling_falcon_mamba.py): in_proj's
    // output (hidden | gate, 2 d: the gate is a view of it to the end) and the conv's
    // activated output (d) stay alive through the scan, whose float32 discretization and
    // model-dtype locals come on top (estimate/mamba1_scan.h).
    const uint64_t proj = Mul({tokens_, 2 * shape->channels, c});
    const uint64_t conv = Mul({tokens_, shape->channels, c});
    Consider(Add({stream_, proj, conv, Mamba1TorchScanBytes(*shape, c).forward_peak}),
             "Mamba-1 scan (torch path)");
  }
}

uint64_t PrefillPeakWalk::MlpBytes(const LayerInfo& L, uint64_t nh, uint64_t kv_len) const {
  const uint32_t c = p_.elem_bytes;
  const uint64_t f_dense = hp_.intermediate_size;
  const uint64_t f_moe =
      hp_.moe_intermediate_size ? hp_.moe_intermediate_size : hp_.intermediate_size;
  uint64_t f = L.moe ? f_moe : (L.intermediate_size ? L.intermediate_size : f_dense);
  f = CeilDiv(f, p_.tp);
  // Gated: act(gate), up and their product alive together; a fused gate_up projection's [T, 2f]
  // output stays referenced by its chunk() views until the product is made: 4 f.
  const uint64_t gated = p_.transformers && FusedGateUpMlp(model_.model_type) ? 4 : 3;
  const uint64_t plain = p_.transformers ? ActivationWorkingSet(hp_.activation) : 2;
  uint64_t mlp = hp_.gated_mlp ? Mul({gated, tokens_, f, c}) : Mul({plain, tokens_, f, c});
  if (L.moe && hp_.num_experts) mlp = Add({mlp, Mul({tokens_, hp_.num_experts, 4})});
  if (L.moe && p_.engine.release_rules && hp_.num_experts && hp_.experts_per_token) {
    // vLLM's fused MoE: the routed tokens' workspace, top_k rows per token.
    mlp = VllmFusedMoeBytes(tokens_, hp_.num_experts, hp_.experts_per_token, f, hp_.hidden_size,
                            hp_.gated_mlp, c);
  }
  if (p_.attn == AttnImpl::kEager && L.attention != AttentionKind::kNone &&
      KeepsAttentionWeights(model_.model_type, p_.versions)) {
    // The decoder layer keeps the attention probabilities (self_attn_weights) until it
    // returns, through its MLP (measured on CPU: validation/FINDINGS.md).
    mlp = Add({mlp, Mul({p_.batch, nh, p_.seq, kv_len, c})});
  }
  return mlp;
}

void PrefillPeakWalk::Logits() {
  ActivationPeak logits = LogitsPeak(model_, p_, tokens_);
  Consider(logits.bytes, std::move(logits.where));
}

}  // namespace

// deepseek_v3: src/transformers/models/deepseek_v3 first in the v4.51.0 tag. Before it the
// Hub's CausalLM forward computes logits for every prompt token and upcasts all of them to
// float32 (`logits = self.lm_head(hidden_states); logits = logits.float()`: DeepSeek-V3's
// modeling_deepseek.py, validation/README.md names the file).
std::optional<LibraryVersion> NativeSince(std::string_view model_type) {
  if (model_type == "deepseek_v3") return LibraryVersion{4, 51};
  return std::nullopt;
}

bool RunsRemoteCode(std::string_view model_type, const RuntimeVersions& v) {
  auto since = NativeSince(model_type);
  return since && v.transformers < *since;
}

// generate() passes num_logits_to_keep=1 (logits_to_keep from 4.50) only to classes whose
// forward takes it: none before 4.45 (4.45 added it to the Llama family). From 4.45 the model
// types below still lack it (grep num_logits_to_keep in transformers/models/*/modeling_*.py at
// v4.48.3; validation/FINDINGS.md 1a); the list is kept for later releases until re-checked
// (GPT-2 gained logits_to_keep in transformers PR 39016, most older classes in PR 41335).
bool AllTokenLogitsInGenerate(std::string_view model_type, const RuntimeVersions& v) {
  if (v.transformers < LibraryVersion{4, 45} || RunsRemoteCode(model_type, v)) return true;
  static constexpr std::string_view kTypes[] = {
      "gpt2", "gpt_neo", "gpt_neox", "gptj", "gpt_bigcode", "codegen", "bloom", "opt", "mpt",
      "xglm", "biogpt", "mamba", "mamba2", "falcon_mamba", "recurrent_gemma", "granitemoe"};
  return std::find(std::begin(kTypes), std::end(kTypes), model_type) != std::end(kTypes);
}

ActivationPeak PrefillPeak(const Model& model, const PrefillPass& pass,
                           std::vector<std::string>& assumptions) {
  const Hyperparameters& hp = model.hp;
  PrefillPeakWalk walk(model, pass);
  if (!hp.layers.empty()) {
    for (const auto& L : hp.layers) walk.Layer(L);
  } else if (hp.num_layers > 0) {
    walk.Layer(GenericPrefillLayer(hp));
  }
  if (pass.logit_tokens && hp.vocab_size) walk.Logits();
  if (hp.layers.empty()) {
    assumptions.push_back("no per-layer description: one generic layer used for the activation "
                          "peak");
  }
  return std::move(walk).Peak();
}

}  // namespace memfit::estimate
