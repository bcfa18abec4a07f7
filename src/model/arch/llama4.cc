// Llama 4: llama4 (Llama4ForConditionalGeneration: language_model, vision_model,
// multi_modal_projector) and llama4_text (Llama4ForCausalLM), with the checkpoints' names.
// Text layers: q/k/v/o (qk_norm is a parameter-free L2 norm), feed_forward either an MoE (router,
// fused experts, shared_expert) or a dense SwiGLU of "intermediate_size_mlp"; RoPE layers chunked,
// NoPE layers full. The vision model is an unfold-linear patch embedding, class and positional
// embeddings, a biased encoder and a pixel-shuffle adapter MLP; without "vision_config" it takes
// Llama4VisionConfig's defaults (an assumption). Source: transformers
// models/llama4/{modeling,configuration}_llama4.py.

#include <fmt/format.h>

#include <algorithm>

#include "formats/hf_config_json.h"
#include "model/arch/decoder_kit.h"
#include "model/arch/families.h"
#include "model/arch/quantization.h"

namespace memfit::arch {
namespace {

// The vision model and projector; their nn.Linear modules under `q` (unquantized where its list
// excludes them, as the FP8 releases' "re:.*vision_model.*" and "re:.*multi_modal_projector.*" do).
void VisionModel(ModelBuilder& b, const Quantization& q, const HfConfig& v, uint64_t text_hidden) {
  const uint64_t h = Get(b, v.UintOr("hidden_size", 768));
  const uint64_t layers = Get(b, v.UintOr("num_hidden_layers", 34));
  const uint64_t inter = Get(b, v.UintOr("intermediate_size", 5632));
  const uint64_t channels = Get(b, v.UintOr("num_channels", 3));
  const uint64_t image = Get(b, v.UintOr("image_size", 448));
  const uint64_t patch = Get(b, v.UintOr("patch_size", 14));
  const uint64_t output = Get(b, v.UintOr("vision_output_dim", 7680));
  const uint64_t proj_in = Get(b, v.UintOr("projector_input_dim", 4096));
  const uint64_t proj_out = Get(b, v.UintOr("projector_output_dim", 4096));
  const bool proj_bias = Get(b, v.BoolOr("multi_modal_projector_bias", false));
  if (!b.failed() && (patch == 0 || image < patch)) {
    b.Fail(MakeError("{}: \"patch_size\" must be positive and at most \"image_size\"", v.where()));
  }
  if (b.failed()) return;
  const uint64_t side = image / patch;
  const uint64_t patches = MulDims(b, side, side, "(image_size / patch_size)^2") + 1;
  b.SetComponent("vision_model");
  const std::string t = "vision_model";
  QLinear(b, q, t + ".patch_embedding.linear",
          MulDims(b, channels, MulDims(b, patch, patch, "patch_size^2"), "channels x patch^2"), h,
          false);
  b.Param(t + ".class_embedding", {h});
  b.Param(t + ".positional_embedding_vlm", {patches, h});
  b.LayerNorm(t + ".layernorm_pre", h);
  b.LayerNorm(t + ".layernorm_post", h);
  for (uint64_t i = 0; i < layers && !b.failed(); ++i) {
    const std::string l = Layer(t + ".model.layers", i);
    for (const char* p : {"q_proj", "k_proj", "v_proj", "o_proj"}) {
      QLinear(b, q, l + ".self_attn." + p, h, h, true);
    }
    QLinear(b, q, l + ".mlp.fc1", h, inter, true);
    QLinear(b, q, l + ".mlp.fc2", inter, h, true);
    b.LayerNorm(l + ".input_layernorm", h);
    b.LayerNorm(l + ".post_attention_layernorm", h);
  }
  QLinear(b, q, t + ".vision_adapter.mlp.fc1", inter, proj_in, false);
  QLinear(b, q, t + ".vision_adapter.mlp.fc2", proj_out, proj_out, false);
  b.SetComponent("multi_modal_projector");
  QLinear(b, q, "multi_modal_projector.linear_1", output, text_hidden, proj_bias);
}

}  // namespace

Result<Model> BuildLlama4(const HfConfig& top, const BuildOptions& o, bool multimodal) {
  MEMFIT_ASSIGN_OR_RETURN(const HfConfig c, TextConfigOf(top, multimodal));
  ModelBuilder b(top);
  Model& m = b.model();
  auto& hp = m.hp;
  ReadDecoderBasics(b, c, {.rms_gated = true});
  const bool bias = Get(b, c.BoolOr("attention_bias", false));
  const uint64_t dense_inter = Get(b, c.UintOr("intermediate_size_mlp", 16384));
  hp.num_experts = Get(b, c.UintOr("num_local_experts", 16));
  hp.experts_per_token = Get(b, c.UintOr("num_experts_per_tok", 1));
  hp.moe_intermediate_size = hp.intermediate_size;
  hp.num_shared_experts = 1;
  hp.shared_expert_intermediate_size = hp.intermediate_size;
  const uint64_t step = Get(b, c.UintOr("interleave_moe_layer_step", 1));
  const uint64_t interval = Get(b, c.UintOr("no_rope_layer_interval", 4));
  const uint64_t chunk = Get(b, c.UintOr("attention_chunk_size", 8192));  // null: full attention
  Quantization q = ReadQuantization(b, top, o);
  if (b.failed()) return b.Finish();
  if (step == 0 || interval == 0) {
    return MakeError(
        "{}: \"interleave_moe_layer_step\" and \"no_rope_layer_interval\" must be "
        "positive",
        c.where());
  }
  const auto list = [&](const char* key) -> const nlohmann::json* {
    const auto it = c.raw().find(key);
    return it != c.raw().end() && it->is_array() && !it->empty() ? &*it : nullptr;
  };
  const nlohmann::json* moe_layers = list("moe_layers");
  const nlohmann::json* no_rope = list("no_rope_layers");
  if (no_rope && no_rope->size() < hp.num_layers) {
    return MakeError("{}: \"no_rope_layers\" must list one 0/1 per layer ({} layers)", c.where(),
                     hp.num_layers);
  }
  auto is_moe = [&](uint64_t i) {
    if (!moe_layers) return i % step == step - 1;
    return std::find(moe_layers->begin(), moe_layers->end(), i) != moe_layers->end();
  };

  const std::string p = multimodal ? "language_model." : "";
  uint64_t unquantized_expert_layers = 0;
  const uint64_t h = hp.hidden_size, hd = hp.head_dim, nh = hp.num_attention_heads,
                 nkv = hp.num_kv_heads, e = hp.num_experts, inter = hp.intermediate_size;
  const uint64_t q_width = MulDims(b, nh, hd, "num_attention_heads x head_dim");
  const uint64_t kv_width = MulDims(b, nkv, hd, "num_key_value_heads x head_dim");
  if (multimodal) b.SetComponent("language_model");
  b.Embedding(p + "model.embed_tokens", hp.vocab_size, h);
  for (uint64_t i = 0; i < hp.num_layers && !b.failed(); ++i) {
    const std::string l = Layer(p + "model.layers", i);
    QLinear(b, q, l + ".self_attn.q_proj", h, q_width, bias);
    QLinear(b, q, l + ".self_attn.k_proj", h, kv_width, bias);
    QLinear(b, q, l + ".self_attn.v_proj", h, kv_width, bias);
    QLinear(b, q, l + ".self_attn.o_proj", q_width, h, bias);
    const std::string f = l + ".feed_forward";
    LayerInfo info = AttentionInfo(hp, false, 0);
    const bool rope = no_rope ? (*no_rope)[i] != 0 : (i + 1) % interval != 0;
    if (rope && chunk > 0) {
      info.attention = AttentionKind::kChunked;
      info.window_tokens = chunk;
    }
    if (is_moe(i)) {
      b.Linear(f + ".router", h, e, false);
      const uint64_t inter2 = MulDims(b, 2, inter, "2 x intermediate_size");
      // Under MLX, mlx-lm's llama4.py SwitchGLU (experts.gate_proj / up_proj / down_proj).
      b.StackedLinear(f + ".experts.gate_up_proj", {e, h, inter2}, e, h, inter2,
                      f + ".experts.gate_proj");
      b.StackedLinear(f + ".experts.down_proj", {e, inter, h}, e, inter, h,
                      f + ".experts.down_proj");
      if (q.method != QuantMethod::kNone && q.method != QuantMethod::kMlx &&
          !SkipsModule(q, f + ".experts.gate_up_proj")) {
        ++unquantized_expert_layers;
      }
      QGatedMlp(b, q, f + ".shared_expert", h, inter);
      info.moe = true;
    } else {
      QGatedMlp(b, q, f, h, dense_inter);
      info.intermediate_size = dense_inter;
    }
    b.RmsNorm(l + ".input_layernorm", h);
    b.RmsNorm(l + ".post_attention_layernorm", h);
    hp.layers.push_back(info);
  }
  b.RmsNorm(p + "model.norm", h);
  b.Buffer(p + "model.rotary_emb.inv_freq", {hd / 2}, Dtype::kF32, false);
  LmHead(b, p + "model.embed_tokens", false, p + "lm_head");
  if (multimodal) {
    const bool absent = !top.Has("vision_config");
    if (absent) {
      m.assumptions.push_back(
          "no \"vision_config\": Llama4VisionConfig's defaults (hidden 768, "
          "image 448, vision_output_dim 7680), as transformers builds it");
    }
    auto vision =
        absent ? HfConfig::FromJson(nlohmann::json::object(), top.where() + ": vision_config")
               : top.Sub("vision_config");
    if (!vision) return vision.error();
    VisionModel(b, q, *vision, h);
  }
  NoteQuantization(b, q);
  if (unquantized_expert_layers > 0) {
    // transformers' Llama4TextExperts are fused parameters, not nn.Linear modules; how a
    // quantized release stores them (per expert, fused, scales) is not in config.json.
    m.assumptions.push_back(fmt::format(
        "quantization_config: the fused experts of {} MoE layer(s) are counted unquantized "
        "(feed_forward.experts.gate_up_proj/down_proj in the model dtype); the safetensors "
        "headers give the release's own layout",
        unquantized_expert_layers));
  }
  m.no_split_patterns = {p + "model.layers.*", "vision_model.model.layers.*"};
  m.base_model_prefix = multimodal ? "" : "model.";
  return b.Finish();
}

}  // namespace memfit::arch
