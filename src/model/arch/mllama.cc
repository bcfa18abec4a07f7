// Llama 3.2 Vision (model_type "mllama": MllamaForConditionalGeneration; transformers 4.45
// models/mllama/modeling_mllama.py, configuration_mllama.py; meta-llama/Llama-3.2-*-Vision*'s
// index). vision_model: the kMllamaVisionTower row below, then
// global_transformer.layers.N (kMllamaGlobalLayer: gated by gate_attn, gate_ffn [1]).
// language_model.model: embed_tokens [vocab + 8, H]; the "cross_attention_layers" are
// MllamaCrossAttentionDecoderLayer (cross_attn.{q,k,v,o}_proj, q_norm/k_norm [head_dim],
// cross_attn_attn_gate and cross_attn_mlp_gate [1], the MLP and norms), the others llama
// self-attention layers; norm; language_model.lm_head (untied by default). multi_modal_projector
// [H, vision_output_dim] with bias. Absent fields take MllamaTextConfig's / MllamaVisionConfig's
// defaults.

#include <fmt/format.h>

#include <algorithm>

#include "formats/hf_config_json.h"
#include "model/arch/builder_kit.h"
#include "model/arch/decoder_kit.h"
#include "model/arch/encoder_common.h"
#include "model/arch/multimodal_kit.h"
#include "model/arch/vision_tower.h"
#include "model/arch/vlm_families.h"

namespace memfit::arch {

namespace {

using enum VisionOp;

// MllamaVisionEncoderLayer: self_attn.{q,k,v,o}_proj without bias, mlp.fc1/fc2 with bias, two
// LayerNorms.
const std::vector<VisionItem> kMllamaLayer = {{kQ, "self_attn.q_proj"},
                                              {kK, "self_attn.k_proj"},
                                              {kV, "self_attn.v_proj"},
                                              {kOut, "self_attn.o_proj"},
                                              {kFc1, "mlp.fc1", VisionBias::kBias},
                                              {kFc2, "mlp.fc2", VisionBias::kBias},
                                              {kNorm, "input_layernorm"},
                                              {kNorm, "post_attention_layernorm"}};

// MllamaVisionModel's position tables, MllamaVisionConfig's defaults: gated_positional_embedding.
// {gate [1], embedding [N, H], tile_embedding [max_aspect_ratio_id + 1, max_num_tiles x N x H]},
// pre_/post_tile_positional_embedding.{gate [1], embedding [max_aspect_ratio_id + 1,
// max_num_tiles x H]} (max_aspect_ratio_id: len("supported_aspect_ratios"), by default every
// (w, h) with w x h <= max_num_tiles), then layernorm_pre and layernorm_post.
void MllamaTiles(ModelBuilder& b, const HfConfig& v, const VisionTowerSpec&, const VisionDims& d,
                 const std::string& p, const Quantization&) {
  const uint64_t tiles = Get(b, v.UintOr("max_num_tiles", 4));
  if (!b.failed() && (tiles == 0 || tiles > 64)) {
    b.Fail(MakeError("{}: \"max_num_tiles\" = {} must be in 1..64", v.where(), tiles));
  }
  if (b.failed()) return;
  uint64_t ratios = 0;
  if (v.Has("supported_aspect_ratios") && v.raw()["supported_aspect_ratios"].is_array()) {
    ratios = v.raw()["supported_aspect_ratios"].size();
  } else {
    for (uint64_t w = 1; w <= tiles; ++w) ratios += tiles / w;  // heights 1..tiles / w
  }
  const uint64_t h = d.hidden;
  b.Param(p + ".gated_positional_embedding.gate", {1});
  b.Param(p + ".gated_positional_embedding.embedding", {d.positions, h});
  b.Embedding(p + ".gated_positional_embedding.tile_embedding", ratios + 1,
              MulDims(b, MulDims(b, tiles, d.positions, "max_num_tiles x patches"), h,
                      "max_num_tiles x patches x hidden_size"));
  for (const char* tile : {"pre_tile_positional_embedding", "post_tile_positional_embedding"}) {
    b.Param(p + "." + tile + ".gate", {1});
    b.Embedding(p + "." + tile + ".embedding", ratios + 1,
                MulDims(b, tiles, h, "max_num_tiles x hidden_size"));
  }
  b.LayerNorm(p + ".layernorm_pre", h);
  b.LayerNorm(p + ".layernorm_post", h);
}

// MllamaVisionModel (models/mllama/modeling_mllama.py, transformers 4.45), MllamaVisionConfig's
// defaults: patch Conv2d without bias, class_embedding, the tile tables (MllamaTiles),
// transformer.layers.N; mllama.cc adds global_transformer.layers.N (kMllamaGlobalLayer).
const VisionTowerSpec kMllamaVisionTower = {
    .hidden = {"hidden_size", 1280},
    .depth = {"num_hidden_layers", 32},
    .heads = {"attention_heads", 16},
    .intermediate = {"intermediate_size", 5120},
    .patch = {"patch_size", 14},
    .image = {"image_size", 448},
    .positions = VisionPositions::kPatchesAndClass,
    .embeddings = {{kPatchConv, "patch_embedding"}, {kClassEmbedding, "class_embedding"}, {kExtra}},
    .layers = "transformer.layers",
    .layer = kMllamaLayer,
    .extra = MllamaTiles};
const std::vector<VisionItem> kMllamaGlobalLayer = [] {
  std::vector<VisionItem> layer = kMllamaLayer;
  layer.insert(layer.end(), {{kGate, "gate_attn"}, {kGate, "gate_ffn"}});
  return layer;
}();

}  // namespace

Result<Model> BuildMllama(const HfConfig& c, const BuildOptions& o) {
  MEMFIT_ASSIGN_OR_RETURN(HfConfig t, SubOrEmpty(c, "text_config"));
  MEMFIT_ASSIGN_OR_RETURN(HfConfig v, SubOrEmpty(c, "vision_config"));
  ModelBuilder b(c);
  Model& m = b.model();
  if (m.architecture.empty()) m.architecture = "MllamaForConditionalGeneration";
  auto& hp = m.hp;
  // MllamaTextConfig defaults.
  hp.vocab_size = Get(b, t.UintOr("vocab_size", 128256));
  hp.hidden_size = Get(b, t.UintOr("hidden_size", 4096));
  hp.num_layers = Get(b, t.UintOr("num_hidden_layers", 40));
  hp.num_attention_heads = Get(b, t.UintOr("num_attention_heads", 32));
  hp.num_kv_heads = Get(b, t.UintOr("num_key_value_heads", 8));
  hp.intermediate_size = Get(b, t.UintOr("intermediate_size", 14336));
  hp.max_position_embeddings = Get(b, t.UintOr("max_position_embeddings", 131072));
  hp.tie_word_embeddings = Get(b, t.BoolOr("tie_word_embeddings", false));
  hp.activation = Get(b, t.StringOr("hidden_act", "silu"));
  hp.norm = "rmsnorm";
  hp.gated_mlp = true;
  hp.text_config_key = "text_config";
  const uint64_t vision_output = Get(b, v.UintOr("vision_output_dim", 7680));
  if (b.failed()) return b.Finish();
  hp.head_dim = DivideExact(b, t, hp.hidden_size, "hidden_size", hp.num_attention_heads,
                            "num_attention_heads");
  if (b.failed()) return b.Finish();
  std::vector<uint64_t> cross = {3, 8, 13, 18, 23, 28, 33, 38};
  if (t.Has("cross_attention_layers")) {
    const auto& list = t.raw()["cross_attention_layers"];
    if (!list.is_array()) {
      return MakeError("{}: field \"cross_attention_layers\" must be a list of layer indices",
                       t.where());
    }
    cross.clear();
    for (const auto& x : list) {
      // Parsed text gives unsigned numbers; JSON built in code may hold signed ones.
      const bool index = x.is_number_unsigned() || (x.is_number_integer() && x.get<int64_t>() >= 0);
      if (!index || x.get<uint64_t>() >= hp.num_layers) {
        return MakeError(
            "{}: field \"cross_attention_layers\" holds {}, not a layer index "
            "below {}",
            t.where(), x.dump(), hp.num_layers);
      }
      cross.push_back(x.get<uint64_t>());
    }
  }
  if (hp.num_layers > o.max_tensors) {
    return MakeError(
        "{}: \"num_hidden_layers\" = {} exceeds memfit's limit of {} tensors for a "
        "model built from config.json",
        t.where(), hp.num_layers, o.max_tensors);
  }

  b.SetComponent("vision_model");
  const VisionDims vision = EmitVisionTower(b, v, kMllamaVisionTower, "vision_model");
  const uint64_t global_layers = Get(b, v.UintOr("num_global_layers", 8));
  for (uint64_t i = 0; i < global_layers && !b.failed(); ++i) {
    EmitVisionItems(b, v, kMllamaVisionTower, vision, kMllamaGlobalLayer,
                    Layer("vision_model.global_transformer.layers", i), Quantization{});
  }
  if (b.failed()) return b.Finish();

  const uint64_t h = hp.hidden_size, hd = hp.head_dim, inter = hp.intermediate_size;
  const uint64_t q_width = MulDims(b, hp.num_attention_heads, hd, "heads x head_dim");
  const uint64_t kv_width = MulDims(b, hp.num_kv_heads, hd, "num_key_value_heads x head_dim");
  const std::string p = "language_model.model";
  b.SetComponent("language_model");
  b.Embedding(p + ".embed_tokens", hp.vocab_size + 8, h);
  for (uint64_t i = 0; i < hp.num_layers && !b.failed(); ++i) {
    const std::string l = Layer(p + ".layers", i);
    const bool is_cross = std::find(cross.begin(), cross.end(), i) != cross.end();
    const std::string a = l + (is_cross ? ".cross_attn" : ".self_attn");
    b.Linear(a + ".q_proj", h, q_width, false);
    b.Linear(a + ".k_proj", h, kv_width, false);
    b.Linear(a + ".v_proj", h, kv_width, false);
    b.Linear(a + ".o_proj", q_width, h, false);
    if (is_cross) {
      b.RmsNorm(a + ".q_norm", hd);
      b.RmsNorm(a + ".k_norm", hd);
      b.Param(l + ".cross_attn_attn_gate", {1});
      b.Param(l + ".cross_attn_mlp_gate", {1});
    }
    b.RmsNorm(l + ".input_layernorm", h);
    GatedMlp(b, l + ".mlp", h, inter, h);
    b.RmsNorm(l + ".post_attention_layernorm", h);
    // Cross-attention layers attend to the image tokens' keys and values: none per text token.
    hp.layers.push_back(is_cross
                            ? DenseLayer(AttentionKind::kNone, hp.num_attention_heads, hd, inter)
                            : DenseAttentionInfo(hp, inter));
  }
  b.RmsNorm(p + ".norm", h);
  b.Buffer(p + ".rotary_emb.inv_freq", {hd / 2}, Dtype::kF32, false);
  LmHead(b, p + ".embed_tokens", false, "language_model.lm_head");
  b.SetComponent("multi_modal_projector");
  b.Linear("multi_modal_projector", vision_output, h, true);
  std::string cross_list;
  for (uint64_t i : cross) cross_list += (cross_list.empty() ? "" : ", ") + std::to_string(i);
  m.assumptions.push_back(
      fmt::format("{} cross-attention layers ({}) attend to the image tokens: their keys and "
                  "values (per image, not per text token) are not counted in the KV cache",
                  cross.size(), cross_list));
  NoteQuantizationNotApplied(c, m);
  // 4.45 _no_split_modules: MllamaVisionEncoderLayer, MllamaCrossAttentionDecoderLayer,
  // MllamaSelfAttentionDecoderLayer.
  m.no_split_patterns = {"vision_model.transformer.layers.*",
                         "vision_model.global_transformer.layers.*",
                         "language_model.model.layers.*"};
  return b.Finish();
}

}  // namespace memfit::arch
