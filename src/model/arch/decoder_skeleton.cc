// The one builder of every DecoderSpec family (decoder_spec.h): reads the hyperparameters from
// the keys the spec names (decoder_skeleton_read.cc), then emits embed_tokens, the layers,
// model.norm, the MTP layers, the rotary buffers and the task head, as transformers'
// modeling_<family>.py registers them.

#include <optional>

#include "formats/hf_config_json.h"
#include "memfit/checked_math.h"
#include "model/arch/builder_kit.h"
#include "model/arch/decoder_kit.h"
#include "model/arch/decoder_layer_kinds.h"
#include "model/arch/decoder_skeleton_read.h"
#include "model/arch/decoder_spec.h"
#include "model/arch/quantization.h"
#include "model/arch/repeated_modules.h"
#include "model/arch/routed_moe.h"

namespace memfit::arch {
namespace {

void RotaryBuffers(ModelBuilder& b, const std::string& module, uint64_t head_dim, bool cached) {
  b.Buffer(module + ".inv_freq", {head_dim / 2}, Dtype::kF32, false);
  if (!cached) return;
  const uint64_t positions = b.model().hp.max_position_embeddings;
  b.Buffer(module + ".cos_cached", {positions, head_dim}, Dtype::kF32, false);
  b.Buffer(module + ".sin_cached", {positions, head_dim}, Dtype::kF32, false);
}

// The model-level and the 4.42 after-the-layers rotary buffers.
void ModelRotary(ModelBuilder& b, const HfConfig& c, const BuildOptions& o, const DecoderSpec& s,
                 const SkeletonConfig& r) {
  const auto& hp = b.model().hp;
  const uint64_t hd = r.kinds.rotary_dim;  // head_dim unless the spec sets a rotary width
  if (s.rope == Rope::kNone) return;
  if (s.rope == Rope::kPerLayerType) return PerLayerTypeRotary(b, c, hp.head_dim);
  if (s.rope == Rope::kModelLevelIfTheta) {
    const auto rope = c.raw().find("rope_parameters");
    const bool theta = (rope != c.raw().end() && rope->is_object() &&
                        rope->contains("rope_theta") && !(*rope)["rope_theta"].is_null()) ||
                       c.Has("rope_theta");
    if (theta) b.Buffer("model.rotary_emb.inv_freq", {hd / 2}, Dtype::kF32, false);
    return;
  }
  if (o.buffers == BufferConvention::kCurrent || s.rope == Rope::kModelLevel) {
    b.Buffer("model.rotary_emb.inv_freq", {hd / 2}, Dtype::kF32, false);
    if (s.rope_local) b.Buffer("model.rotary_emb_local.inv_freq", {hd / 2}, Dtype::kF32, false);
    return;
  }
  if (s.rope != Rope::kLlama442) return;  // inside the layers
  for (uint64_t i = 0; i < hp.num_layers && !b.failed(); ++i) {
    if (r.kinds.IsLightning(i)) continue;  // no rotary in a lightning module
    RotaryBuffers(b, Layer("model.layers", i) + ".self_attn.rotary_emb", hd, s.rope_cached);
  }
  if (!s.rope_cached && c.Has("rope_scaling") && c.raw()["rope_scaling"].is_object()) {
    b.Buffer("model.rotary_emb.inv_freq", {hd / 2}, Dtype::kF32, false);
  }
}

// A norm of the hidden size: an RMSNorm, or a LayerNorm with bias under DecoderSpec::norm_bias.
void Norm(ModelBuilder& b, const DecoderSpec& s, const std::string& name) {
  const uint64_t h = b.model().hp.hidden_size;
  if (s.norm_bias) {
    b.LayerNorm(name, h);
  } else {
    b.RmsNorm(name, h);
  }
}

class Skeleton {
 public:
  Skeleton(ModelBuilder& b, const BuildOptions& o, const DecoderSpec& s, const SkeletonConfig& r,
           const Quantization& q)
      : b_(b), o_(o), s_(s), r_(r), q_(q), hp_(b.model().hp) {
    h_ = hp_.hidden_size;
    hd_ = hp_.head_dim;
    q_width_ = MulDims(b, hp_.num_attention_heads, hd_, "num_attention_heads x head_dim");
    kv_width_ = MulDims(b, hp_.num_kv_heads, hd_, "num_key_value_heads x head_dim");
  }

  // Self-attention with `heads` query heads (LayerKinds::Heads); `sliding` for the sinks; no
  // k/v projections when the layer reuses the previous one's KV cache (`kv` false).
  void Attention(const std::string& l, uint64_t heads, bool sliding = false, bool kv = true) {
    const uint64_t q_width =
        heads == hp_.num_attention_heads ? q_width_ : MulDims(b_, heads, hd_, "heads x head_dim");
    if (!s_.input_norm.empty()) Norm(b_, s_, l + "." + std::string(s_.input_norm));
    if (s_.fused_qkv) {
      const uint64_t kv2 = MulDims(b_, 2, kv_width_, "2 x kv width");
      QLinear(b_, q_, l + ".self_attn.qkv_proj", h_, q_width + kv2, r_.qkv_bias);
    } else {
      QLinear(b_, q_, l + ".self_attn.q_proj", h_, q_width, r_.qkv_bias);
      if (kv) {
        QLinear(b_, q_, l + ".self_attn.k_proj", h_, kv_width_, r_.qkv_bias);
        QLinear(b_, q_, l + ".self_attn.v_proj", h_, kv_width_, r_.qkv_bias);
      }
    }
    QLinear(b_, q_, l + ".self_attn.o_proj", q_width, h_, r_.o_bias);
    if (s_.sinks) b_.Param(l + ".self_attn.sinks", {heads});
    if (r_.qk_norm) {
      const std::string qn = l + ".self_attn." + std::string(s_.q_norm_name);
      const std::string kn = l + ".self_attn." + std::string(s_.k_norm_name);
      switch (s_.qk_norm) {
        case QkNorm::kPerHead:
          b_.RmsNorm(qn, hd_);
          b_.RmsNorm(kn, hd_);
          break;
        case QkNorm::kCohere:
          b_.Param(qn + ".weight", {hp_.num_attention_heads, hd_});
          b_.Param(kn + ".weight", {hp_.num_kv_heads, hd_});
          break;
        default:  // kWhole, kMiniMaxM2
          b_.RmsNorm(qn, r_.qk_per_head ? hd_ : q_width);
          b_.RmsNorm(kn, r_.qk_per_head ? hd_ : kv_width_);
          break;
      }
    }
    if (s_.attn_gate == AttnGate::kAfmoe) {
      QLinear(b_, q_, l + ".self_attn.gate_proj", h_, q_width, false);
    }
    if (r_.head_gate) QLinear(b_, q_, l + ".self_attn.g_proj", h_, heads, false);
    if (s_.attn_gate == AttnGate::kLaguna) {
      const uint64_t gates = r_.kinds.gate_per_head;
      if (gates > 0) {
        QLinear(b_, q_, l + ".self_attn.g_proj", h_, MulDims(b_, heads, gates, "gate width"),
                false);
      }
      if (sliding && r_.kinds.sinks) b_.Param(l + ".self_attn.sink", {heads});
    }
    if (s_.rope == Rope::kPerLayer442 && o_.buffers == BufferConvention::kTransformers442) {
      RotaryBuffers(b_, l + ".self_attn.rotary_emb", hd_, s_.rope_cached);
    }
  }

  uint64_t DenseWidth() const {
    return s_.moe == MoeLayout::kRouted ? r_.routed.dense_width : hp_.intermediate_size;
  }

  void DenseMlp(const std::string& l) {
    const uint64_t inter = DenseWidth();
    const std::string p = l + ".mlp.";
    if (s_.mlp == MlpForm::kFusedGateUp) {
      QLinear(b_, q_, p + "gate_up_proj", h_, MulDims(b_, 2, inter, "2 x intermediate_size"),
              r_.mlp_bias);
    } else {
      if (s_.mlp == MlpForm::kGated) QLinear(b_, q_, p + "gate_proj", h_, inter, r_.mlp_bias);
      QLinear(b_, q_, p + "up_proj", h_, inter, r_.mlp_bias);
    }
    QLinear(b_, q_, p + "down_proj", inter, h_, r_.mlp_bias);
    if (hp_.activation == "xielu") {
      // xIELU (apertus): learnable alpha_p/alpha_n [1] and persistent scalar buffers beta/eps,
      // in the config's dtype (transformers activations.py XIELUActivation).
      b_.Param(p + "act_fn.alpha_p", {1});
      b_.Param(p + "act_fn.alpha_n", {1});
      b_.Buffer(p + "act_fn.beta", {}, b_.dtype(), true);
      b_.Buffer(p + "act_fn.eps", {}, b_.dtype(), true);
    }
  }

  bool MoeLayer(uint64_t i) const {
    if (s_.moe == MoeLayout::kRouted) {
      return hp_.num_experts > 0 && RoutedSparseLayer(s_, r_.routed, i);
    }
    if (s_.moe == MoeLayout::kLaguna) return r_.kinds.Sparse(i);
    if (s_.moe == MoeLayout::kStep) {
      return r_.moe_layers.empty() ? i >= r_.routed.first_dense : r_.moe_layers.count(i) > 0;
    }
    if (s_.moe == MoeLayout::kErnie) {
      const auto signed_i = static_cast<int64_t>(i);
      return hp_.num_experts > 0 && (i + 1) % r_.sparse_step == 0 && signed_i >= r_.moe_first &&
             signed_i <= r_.moe_last;
    }
    if (s_.moe != MoeLayout::kQwen) return s_.moe != MoeLayout::kNone;
    return r_.mlp_only.count(i) == 0 && hp_.num_experts > 0 && r_.sparse_step > 0 &&
           (i + 1) % r_.sparse_step == 0;
  }

  void Moe(const std::string& l, uint64_t i) {
    const uint64_t e = hp_.num_experts;
    if (s_.moe == MoeLayout::kMixtral) {
      const uint64_t inter = hp_.intermediate_size;
      if (s_.router_f32) {
        b_.ParamAs(l + ".block_sparse_moe.gate.weight", {e, h_}, Dtype::kF32);
      } else {
        b_.Linear(l + ".block_sparse_moe.gate", h_, e, false);
      }
      if (r_.routing_bias) {
        b_.Buffer(l + ".block_sparse_moe.e_score_correction_bias", {e}, Dtype::kF32, true);
      }
      RepeatedModules(b_, q_, l + ".block_sparse_moe.experts", e, [&](const std::string& x) {
        QLinear(b_, q_, x + ".w1", h_, inter, false);
        QLinear(b_, q_, x + ".w2", inter, h_, false);
        QLinear(b_, q_, x + ".w3", h_, inter, false);
      });
    } else if (s_.moe == MoeLayout::kQwen || s_.moe == MoeLayout::kLaguna) {
      // Laguna's checkpoint names (vLLM models/laguna.py loads them as stored; transformers
      // renames them on load) add the routing bias and have no shared-expert gate.
      const bool laguna = s_.moe == MoeLayout::kLaguna;
      const uint64_t inter = hp_.moe_intermediate_size;
      b_.Linear(l + ".mlp.gate", h_, e, false);
      if (laguna) b_.Param(l + ".mlp.experts.e_score_correction_bias", {e});
      RepeatedModules(b_, q_, l + ".mlp.experts", e,
                      [&](const std::string& x) { QGatedMlp(b_, q_, x, h_, inter); });
      if (r_.shared > 0) QGatedMlp(b_, q_, l + ".mlp.shared_expert", h_, r_.shared);
      if (r_.shared > 0 && !laguna) b_.Linear(l + ".mlp.shared_expert_gate", h_, 1, false);
    } else if (s_.moe == MoeLayout::kGptOss) {
      FusedExperts(l);
    } else if (s_.moe == MoeLayout::kErnie) {
      b_.ParamAs(l + ".mlp.gate.weight", {e, h_}, Dtype::kF32);
      b_.ParamAs(l + ".mlp.moe_statics.e_score_correction_bias", {1, e}, Dtype::kF32);
      RepeatedModules(b_, q_, l + ".mlp.experts", e, [&](const std::string& x) {
        QGatedMlp(b_, q_, x, h_, hp_.moe_intermediate_size, r_.mlp_bias);
      });
      if (r_.shared > 0) QGatedMlp(b_, q_, l + ".mlp.shared_experts", h_, r_.shared, r_.mlp_bias);
    } else if (s_.moe == MoeLayout::kHunYuan) {
      HunYuanMoe(l, i);
    } else if (s_.moe == MoeLayout::kStep) {
      StepMoe(l);
    } else if (s_.moe == MoeLayout::kRouted) {
      EmitRoutedMoe(b_, q_, l, s_, r_.routed, e, r_.mlp_bias);
    } else {  // kGraniteFused: GraniteMoeParallelExperts keep all experts in one [E, out, in]
      const uint64_t inter = hp_.intermediate_size;
      b_.StackedLinear(l + ".block_sparse_moe.input_linear.weight", {e, 2 * inter, h_}, e, h_,
                       2 * inter);
      b_.StackedLinear(l + ".block_sparse_moe.output_linear.weight", {e, h_, inter}, e, inter, h_);
      b_.Linear(l + ".block_sparse_moe.router.layer", h_, e, false);
      if (r_.shared > 0) {
        b_.Linear(l + ".shared_mlp.input_linear", h_, 2 * r_.shared, false);
        b_.Linear(l + ".shared_mlp.output_linear", r_.shared, h_, false);
      }
    }
  }

  // MoeLayout::kGptOss (GptOssMLP): a biased router, fused experts, mxfp4 blocks when stored so.
  void FusedExperts(const std::string& l) {
    const uint64_t e = hp_.num_experts, inter = hp_.intermediate_size;
    const uint64_t inter2 = MulDims(b_, 2, inter, "2 x intermediate_size");
    b_.Linear(l + ".mlp.router", h_, e, true);
    const std::string x = l + ".mlp.experts";
    if (r_.mxfp4) {
      // Two fp4 values a byte: the blocks stand for e x out x in parameters, the scales for none.
      const uint64_t gate_up = CheckedProduct(std::vector<uint64_t>{e, inter2, h_}).value_or(0);
      const uint64_t down = CheckedProduct(std::vector<uint64_t>{e, h_, inter}).value_or(0);
      b_.Packed(x + ".gate_up_proj_blocks", {e, inter2, h_ / 32, 16}, Dtype::kU8, gate_up);
      b_.Packed(x + ".gate_up_proj_scales", {e, inter2, h_ / 32}, Dtype::kU8, 0);
      b_.Packed(x + ".down_proj_blocks", {e, h_, inter / 32, 16}, Dtype::kU8, down);
      b_.Packed(x + ".down_proj_scales", {e, h_, inter / 32}, Dtype::kU8, 0);
    } else {
      // mlx-lm's gpt_oss.py splits gate_up_proj into experts.gate_proj / up_proj (the same bytes).
      b_.StackedLinear(x + ".gate_up_proj", {e, h_, inter2}, e, h_, inter2, x + ".gate_proj");
      b_.StackedLinear(x + ".down_proj", {e, inter, h_}, e, inter, h_, x + ".down_proj");
    }
    b_.Param(x + ".gate_up_proj_bias", {e, inter2});
    b_.Param(x + ".down_proj_bias", {e, h_});
  }

  // MoeLayout::kHunYuan (HunYuanMoEV1Moe): layer i's experts, widths and shared MLP.
  void HunYuanMoe(const std::string& l, uint64_t i) {
    const uint64_t e = r_.experts[i], w = r_.widths[i];
    b_.ParamAs(l + ".mlp.gate.wg.weight", {e, h_}, Dtype::kF32);
    RepeatedModules(b_, q_, l + ".mlp.experts", e,
                    [&](const std::string& x) { QGatedMlp(b_, q_, x, h_, w); });
    const uint64_t shared = MulDims(b_, hp_.intermediate_size, r_.shared_count[i],
                                    "intermediate_size x num_shared_expert");
    QGatedMlp(b_, q_, l + ".mlp.shared_mlp", h_, shared);
  }

  // MoeLayout::kStep (vLLM step3p5.py's checkpoint names).
  void StepMoe(const std::string& l) {
    const uint64_t e = hp_.num_experts, w = hp_.moe_intermediate_size;
    const std::string moe = l + ".moe";
    b_.Linear(moe + ".gate", h_, e, false);
    b_.ParamAs(moe + ".router_bias", {e}, Dtype::kF32);
    if (q_.method != QuantMethod::kNone && !SkipsModule(q_, moe + ".experts")) {
      RepeatedModules(b_, q_, moe + ".experts", e,
                      [&](const std::string& x) { QGatedMlp(b_, q_, x, h_, w); });
    } else {
      b_.Param(moe + ".gate_proj.weight", {e, w, h_});
      b_.Param(moe + ".up_proj.weight", {e, w, h_});
      b_.Param(moe + ".down_proj.weight", {e, h_, w});
    }
    if (r_.shared > 0) QGatedMlp(b_, q_, l + ".share_expert", h_, r_.shared);
  }

  // The MLP (sparse or dense) and the norms after it (or before it: norms_before_mlp); a DeltaNet
  // layer is a LlamaDecoderLayer with post_attention_layernorm only. Returns the dense width.
  uint64_t Mlp(const std::string& l, bool moe, uint64_t i = 0, bool delta = false) {
    if (s_.norms_before_mlp) AfterNorms(l, delta);
    if (moe) {
      Moe(l, i);
    } else {
      DenseMlp(l);
    }
    if (!s_.norms_before_mlp) AfterNorms(l, delta);
    return moe ? 0 : DenseWidth();
  }

  void AfterNorms(const std::string& l, bool delta) {
    if (delta) return b_.RmsNorm(l + ".post_attention_layernorm", h_);
    for (std::string_view norm : s_.after_mlp_norms) {
      if (!norm.empty()) Norm(b_, s_, l + "." + std::string(norm));
    }
  }

  void Layers(const SlidingRule& sliding) {
    for (uint64_t i = 0; i < hp_.num_layers && !b_.failed(); ++i) {
      const std::string l = Layer("model.layers", i);
      LayerInfo info;
      const bool delta = r_.kinds.IsDeltaNet(i);
      if (r_.kinds.IsLightning(i)) {
        b_.RmsNorm(l + "." + std::string(s_.input_norm), h_);
        info = EmitLightning(b_, q_, l, s_.lightning, r_.kinds);
      } else if (delta) {
        b_.RmsNorm(l + ".input_layernorm", h_);  // a LlamaDecoderLayer
        info = EmitDeltaNet(b_, q_, l, r_.kinds);
      } else {
        info = AttentionInfo(hp_, sliding(i), sliding.window());
        info.num_heads = r_.kinds.Heads(i);
        if (r_.sliding_heads > 0 && info.attention == AttentionKind::kSliding) {
          info.num_heads = r_.sliding_heads;
        }
        info.kv_shared = r_.cla_factor > 0 && i % r_.cla_factor != 0;
        Attention(l, info.num_heads, info.attention == AttentionKind::kSliding, !info.kv_shared);
      }
      info.moe = MoeLayer(i);
      info.intermediate_size = Mlp(l, info.moe, i, delta);
      if (s_.rope == Rope::kPerLayerAfterNorms442 &&
          o_.buffers == BufferConvention::kTransformers442) {
        RotaryBuffers(b_, l + ".self_attn.rotary_emb", r_.kinds.rotary_dim, false);
      }
      // MiniMaxM1DecoderLayer: MiniMaxM1MLP(config) and its coefficient.
      if (r_.kinds.shared_m1 > 0) {
        QGatedMlp(b_, q_, l + ".shared_mlp", h_, hp_.intermediate_size);
        b_.Linear(l + ".coefficient", h_, 1, false);
      }
      hp_.layers.push_back(info);
    }
  }

  // A decoder layer of the MTP modules: attention, the MLP (sparse or dense), its norms.
  void Body(const std::string& l, bool moe) {
    Attention(l, hp_.num_attention_heads);
    Mlp(l, moe);
  }

  // MiMoMTPLayers (remote code modeling_mimo.py); the stored-only ones of the others.
  void MtpLayers() {
    if (s_.mtp == Mtp::kStep) return StepMtpLayers();
    if (s_.mtp != Mtp::kMiMo) return StoredMtpLayers();
    for (uint64_t i = 0; i < r_.mtp_layers && !b_.failed(); ++i) {
      const std::string l = Layer("model.mtp_layers", i);
      b_.RmsNorm(l + ".token_layernorm", h_);
      b_.RmsNorm(l + ".hidden_layernorm", h_);
      QLinear(b_, q_, l + ".input_proj", MulDims(b_, 2, h_, "2 x hidden_size"), h_, false);
      Attention(l, hp_.num_attention_heads);
      DenseMlp(l);
      b_.RmsNorm(l + ".post_attention_layernorm", h_);
      b_.RmsNorm(l + ".final_layernorm", h_);
    }
  }

  // Mtp::kStep (vLLM step3p5_mtp.py), then Step3p5's assumptions.
  void StepMtpLayers() {
    Model& m = b_.model();
    const size_t begin = m.tensors.size();
    for (uint64_t k = 0; k < r_.mtp_layers && !b_.failed(); ++k) {
      const std::string l = Layer("model.layers", hp_.num_layers + k);
      b_.RmsNorm(l + ".enorm", h_);
      b_.RmsNorm(l + ".hnorm", h_);
      b_.Linear(l + ".eh_proj", MulDims(b_, h_, 2, "2 x hidden_size"), h_, false);
      b_.RmsNorm(l + ".shared_head.norm", h_);
      b_.Linear(l + ".shared_head.output", h_, hp_.vocab_size, false);
      Body(l, false);
    }
    if (b_.failed()) return;
    const uint64_t bytes = MarkStoredOnly(m, begin);
    if (r_.mtp_layers > 0) {
      m.notes.push_back(fmt::format(
          "{} multi-token-prediction layer(s) (model.layers.{}+, {} bytes) are stored in the "
          "checkpoint but not loaded by the causal LM",
          r_.mtp_layers, hp_.num_layers, bytes));
      m.assumptions.push_back(
          "MTP layers: a dense decoder layer with full attention of \"num_attention_heads\" "
          "heads (Step3p5DecoderLayer outside \"moe_layers_enum\"), as vLLM step3p5_mtp.py "
          "builds them");
    }
    m.assumptions.push_back(
        "moe.gate stored in the checkpoint dtype and moe.router_bias in float32 (vLLM step3p5.py "
        "computes the router in float32; no published index to confirm the stored dtypes)");
    if (!r_.has_head_gate_key) {
      m.assumptions.push_back(
          "no \"use_head_wise_attn_gate\" in the config: no self_attn.g_proj counted (Step3p5's "
          "head-wise gate adds [heads, hidden] a layer when set)");
    }
    if (!r_.has_sliding_heads_key) {
      m.assumptions.push_back(
          "no \"swa_num_attention_heads\" / \"attention_other_setting\": sliding layers use "
          "\"num_attention_heads\" query heads");
    }
  }

  // vLLM exaone_moe_mtp.py (mtp.*), the model.layers.{L + k} NextN layers of Hy3 (as
  // DeepSeek-V3 stores them) and ERNIE's model.mtp_*: in the checkpoint, not loaded by
  // transformers.
  void StoredMtpLayers() {
    if (r_.mtp_layers == 0) return;
    Model& m = b_.model();
    const size_t begin = m.tensors.size();
    const uint64_t h2 = MulDims(b_, 2, h_, "2 x hidden_size");
    const bool exaone = s_.mtp == Mtp::kExaoneMoe;
    if (exaone) b_.Linear("mtp.fc", h2, h_, false);
    for (uint64_t k = 0; k < r_.mtp_layers && !b_.failed(); ++k) {
      if (exaone) {
        Body(Layer("mtp.layers", k), false);
        continue;
      }
      if (s_.mtp == Mtp::kErnie) {
        b_.RmsNorm(Layer("model.mtp_emb_norm", k), h_);
        b_.RmsNorm(Layer("model.mtp_hidden_norm", k), h_);
        QLinear(b_, q_, Layer("model.mtp_linear_proj", k), h2, h_, r_.mlp_bias);
        Body(Layer("model.mtp_block", k), false);
        continue;
      }
      const std::string l = Layer("model.layers", hp_.num_layers + k);
      Body(l, hp_.num_experts > 0);
      b_.RmsNorm(l + ".enorm", h_);
      b_.RmsNorm(l + ".hnorm", h_);
      b_.Linear(l + ".eh_proj", h2, h_, false);
      b_.RmsNorm(l + ".final_layernorm", h_);
    }
    if (exaone) {
      b_.RmsNorm("mtp.norm", h_);
      b_.RmsNorm("mtp.pre_fc_norm_hidden", h_);
      b_.RmsNorm("mtp.pre_fc_norm_embedding", h_);
    }
    if (b_.failed()) return;
    const uint64_t bytes = MarkStoredOnly(m, begin);
    const std::string what = s_.mtp == Mtp::kErnie
                                 ? fmt::format("module(s) (model.mtp_*, {} bytes)", bytes)
                                 : fmt::format("layer(s) ({} bytes)", bytes);
    m.notes.push_back(fmt::format(
        "{} multi-token-prediction {} are stored in the checkpoint but not loaded by transformers",
        r_.mtp_layers, what));
  }

 private:
  ModelBuilder& b_;
  const BuildOptions& o_;
  const DecoderSpec& s_;
  const SkeletonConfig& r_;
  const Quantization& q_;
  Hyperparameters& hp_;
  uint64_t h_ = 0, hd_ = 0, q_width_ = 0, kv_width_ = 0;
};

}  // namespace

Result<Model> BuildDecoder(const HfConfig& c, const BuildOptions& o, const DecoderSpec& s) {
  const bool bf16 = !s.bf16_without_dtype.empty() && !c.torch_dtype();
  ModelBuilder b = bf16 ? ModelBuilder(c, Dtype::kBF16) : ModelBuilder(c);
  Model& m = b.model();
  if (bf16) m.assumptions.emplace_back(s.bf16_without_dtype);
  auto& hp = m.hp;
  ReadDecoderBasics(b, c,
                    {.tie = s.tie_default,
                     .act_key = s.act_key,
                     .act_default = s.act_default,
                     .need_intermediate = s.intermediate_required,
                     .head_dim_default = s.head_dim_default});
  hp.norm = s.hp_norm;
  hp.gated_mlp = s.mlp != MlpForm::kPlain;
  if (b.failed()) return b.Finish();
  SkeletonConfig r;
  ReadSkeletonConfig(b, c, s, r);
  std::optional<SlidingRule> sliding;
  if (!b.failed()) sliding.emplace(b, c, s, hp.num_layers);
  Quantization q = ReadQuantization(b, c, o);
  ReadFusedExperts(b, c, s, q, r);
  if (b.failed()) return b.Finish();

  Skeleton skeleton(b, o, s, r, q);
  b.Embedding("model.embed_tokens", hp.vocab_size, hp.hidden_size);
  if (s.embed_scale) b.Buffer("model.embed_tokens.embed_scale", {}, Dtype::kF32, false);
  skeleton.Layers(*sliding);
  if (s.final_norm) Norm(b, s, "model.norm");
  const bool mtp_after_head = s.mtp == Mtp::kErnie || s.mtp == Mtp::kStep;
  if (!mtp_after_head) skeleton.MtpLayers();
  ModelRotary(b, c, o, s, r);
  if (!s.note.empty()) m.notes.emplace_back(s.note);
  TaskHead(b, c, o, "model.embed_tokens", r.lm_bias);
  if (mtp_after_head) skeleton.MtpLayers();
  return FinishDecoderAfterHead(b, q);
}

}  // namespace memfit::arch
