// Nemotron-NAS (model_type "nemotron-nas", DeciLMForCausalLM: Llama-3.x-Nemotron Super/Ultra,
// remote code modeling_decilm.py + block_config.py): a Llama decoder whose layers differ by
// "block_configs"[i]: attention no_op (no input_layernorm/self_attn, no KV cache),
// replace_with_linear (self_attn.linear_attn [H, H]) or GQA of heads / "n_heads_in_group" KV
// heads; ffn no_op, replace_with_linear (mlp.linear_mlp [H, H]) or a SwiGLU of
// int(2 x ffn_mult x H / 3) rounded up to 256. Untied by default, one model-level inv_freq.
// Sources: NeMo Automodel components/models/nemotron_nas (the checkpoint keys), vLLM
// models/nemotron_nas.py, TensorRT-LLM _torch/models/modeling_nemotron_nas.py.

#include <cmath>

#include "formats/hf_config_json.h"
#include "model/arch/decoder_kit.h"
#include "model/arch/families.h"
#include "model/arch/quantization.h"

namespace memfit::arch {
namespace {

struct BlockConfig {
  bool attention_no_op = false, attention_linear = false;
  uint64_t n_heads_in_group = 0;
  bool ffn_no_op = false, ffn_linear = false;
  uint64_t intermediate = 0;
};

// block_configs[i], read as block_config.py's AttentionConfig / FFNConfig.
BlockConfig ReadBlock(ModelBuilder& b, const HfConfig& block, uint64_t hidden) {
  BlockConfig out;
  auto attention = block.Sub("attention");
  auto ffn = block.Sub("ffn");
  if (!attention || !ffn) {
    b.Fail(!attention ? attention.error() : ffn.error());
    return out;
  }
  out.attention_no_op = Get(b, attention->BoolOr("no_op", false));
  out.attention_linear = Get(b, attention->BoolOr("replace_with_linear", false));
  if (!out.attention_no_op && !out.attention_linear) {
    out.n_heads_in_group = Get(b, attention->Uint("n_heads_in_group"));
  }
  out.ffn_no_op = Get(b, ffn->BoolOr("no_op", false));
  out.ffn_linear = Get(b, ffn->BoolOr("replace_with_linear", false));
  if (!out.ffn_no_op && !out.ffn_linear && !b.failed()) {
    if (!ffn->Has("ffn_mult")) {
      b.Fail(MakeError("{}: missing required field \"ffn_mult\"", ffn->where()));
      return out;
    }
    const double mult = Get(b, ffn->NumberOr("ffn_mult", 0.0));
    // int(2 * ffn_mult * n_embd / 3), evaluated left to right in doubles as Python does.
    const double width = 2.0 * mult * static_cast<double>(hidden) / 3.0;
    if (!(mult > 0.0) || !(width < 1e15)) {
      b.Fail(
          MakeError("{}: \"ffn_mult\" = {} gives no usable intermediate size", ffn->where(), mult));
      return out;
    }
    const auto size = static_cast<uint64_t>(width);
    out.intermediate = size % 256 == 0 ? size : size + 256 - size % 256;
  }
  return out;
}

}  // namespace

Result<Model> BuildNemotronNas(const HfConfig& c, const BuildOptions& o) {
  ModelBuilder b(c);
  Model& m = b.model();
  auto& hp = m.hp;
  ReadDecoderBasics(b, c, {.tie = false, .need_intermediate = false});
  const bool attention_bias = Get(b, c.BoolOr("attention_bias", false));
  const bool mlp_bias = Get(b, c.BoolOr("mlp_bias", false));
  Quantization q = ReadQuantization(b, c, o);
  if (b.failed()) return b.Finish();
  const auto blocks = c.raw().find("block_configs");
  if (blocks == c.raw().end() || !blocks->is_array()) {
    return MakeError("{}: field \"block_configs\" (one per layer) is missing", c.where());
  }
  if (blocks->size() != hp.num_layers) {
    return MakeError("{}: \"block_configs\" lists {} blocks for \"num_hidden_layers\" = {}",
                     c.where(), blocks->size(), hp.num_layers);
  }
  const uint64_t h = hp.hidden_size, nh = hp.num_attention_heads, hd = hp.head_dim;
  const uint64_t q_width = MulDims(b, nh, hd, "num_attention_heads x head_dim");
  hp.norm = "rmsnorm";
  hp.gated_mlp = true;
  hp.intermediate_size = 0;
  bool first_attention = true;
  b.Embedding("model.embed_tokens", hp.vocab_size, h);
  for (uint64_t i = 0; i < hp.num_layers && !b.failed(); ++i) {
    auto block =
        HfConfig::FromJson((*blocks)[i], fmt::format("{}: block_configs[{}]", c.where(), i));
    if (!block) return block.error();
    const BlockConfig bc = ReadBlock(b, *block, h);
    if (b.failed()) break;
    const std::string l = Layer("model.layers", i);
    LayerInfo info;
    info.attention = AttentionKind::kNone;
    info.mixer = LayerMixer::kNone;
    if (!bc.attention_no_op) {
      b.RmsNorm(l + ".input_layernorm", h);
      if (bc.attention_linear) {
        QLinear(b, q, l + ".self_attn.linear_attn", h, h, false);
      } else {
        if (bc.n_heads_in_group == 0 || nh % bc.n_heads_in_group != 0) {
          return MakeError(
              "{}: block_configs[{}]: \"n_heads_in_group\" = {} must divide "
              "\"num_attention_heads\" = {}",
              c.where(), i, bc.n_heads_in_group, nh);
        }
        const uint64_t nkv = nh / bc.n_heads_in_group;
        const uint64_t kv_width = MulDims(b, nkv, hd, "key_value_heads x head_dim");
        QLinear(b, q, l + ".self_attn.q_proj", h, q_width, attention_bias);
        QLinear(b, q, l + ".self_attn.k_proj", h, kv_width, attention_bias);
        QLinear(b, q, l + ".self_attn.v_proj", h, kv_width, attention_bias);
        QLinear(b, q, l + ".self_attn.o_proj", q_width, h, attention_bias);
        info.attention = AttentionKind::kFull;
        info.mixer = LayerMixer::kAttention;
        info.num_heads = nh;
        info.num_kv_heads = nkv;
        info.head_dim_k = info.head_dim_v = hd;
        if (first_attention) hp.num_kv_heads = nkv;
        first_attention = false;
      }
    }
    if (!bc.ffn_no_op) {
      b.RmsNorm(l + ".post_attention_layernorm", h);
      if (bc.ffn_linear) {
        QLinear(b, q, l + ".mlp.linear_mlp", h, h, false);
      } else {
        QGatedMlp(b, q, l + ".mlp", h, bc.intermediate, mlp_bias);
        info.intermediate_size = bc.intermediate;
        if (hp.intermediate_size == 0) hp.intermediate_size = bc.intermediate;
      }
    }
    hp.layers.push_back(info);
  }
  b.RmsNorm("model.norm", h);
  b.Buffer("model.rotary_emb.inv_freq", {hd / 2}, Dtype::kF32, false);
  return FinishDecoder(b, c, o, q);
}

}  // namespace memfit::arch
