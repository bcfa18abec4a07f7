// ERNIE 4.5 MoE (ernie4_5_moe: ERNIE-4.5-21B-A3B-PT, ERNIE-4.5-300B-A47B-PT), as transformers'
// Ernie4_5_MoeForCausalLM builds it and Baidu's -PT checkpoints store it:
// - model.embed_tokens [V, H]; per layer input_layernorm, self_attn.{q,k,v,o}_proj (llama GQA,
//   biases with "use_bias"), post_attention_layernorm [H];
// - the MLP of layer i is sparse when (i + 1) % moe_layer_interval == 0 and
//   moe_layer_start_index <= i <= moe_layer_end_index (-1: the last layer), else a dense SwiGLU
//   mlp.{gate,up,down}_proj of intermediate_size (biases with use_bias);
// - a sparse MLP: router mlp.gate [E, H] created in float32 (and kept there:
//   _keep_in_fp32_modules_strict = ["gate", "moe_statics"]), the aux-free routing bias
//   mlp.moe_statics.e_score_correction_bias [1, E], an nn.Parameter in float32 (requires_grad
//   False), E experts mlp.experts.N.{gate,up,down}_proj of moe_intermediate_size, and with
//   moe_num_shared_experts > 0 one mlp.shared_experts MLP of moe_intermediate_size x that count;
// - model.norm, one model.rotary_emb.inv_freq [head_dim / 2], lm_head (bias with use_bias), tied
//   by default;
// - "num_nextn_predict_layers" multi-token-prediction modules: model.mtp_emb_norm.K,
//   model.mtp_hidden_norm.K [H], model.mtp_linear_proj.K [H, 2H] and model.mtp_block.K (one dense
//   decoder layer). Stored in the checkpoint, never loaded by transformers
//   (_keys_to_ignore_on_load_unexpected = ["mtp"]; vLLM ernie45_moe.py skips "mtp" too).
// Absent keys take Ernie4_5_MoeConfig's defaults, printed as assumptions.
// Source: transformers models/ernie4_5_moe/{modular,configuration}_ernie4_5_moe.py (commits
// 01187e21 and 001f85b3); vLLM model_executor/models/ernie45_moe.py (moe_statics stored as [1, E]).

#include <fmt/format.h>

#include "model/arch/config_defaults.h"
#include "model/arch/decoder_kit.h"
#include "model/arch/moe_hybrid_families.h"
#include "model/arch/quantization.h"
#include "model/arch/repeated_modules.h"

namespace memfit::arch {
namespace {

constexpr std::string_view kClass = "Ernie4_5_MoeConfig";

// A layer index that may be written as -1 ("moe_layer_end_index": the last layer).
int64_t SignedIndex(ModelBuilder& b, const HfConfig& c, std::string_view key, int64_t fallback) {
  if (Absent(c, key)) {
    b.model().assumptions.push_back(
        fmt::format("\"{}\" absent from config.json: {}'s default {}", key, kClass, fallback));
    return fallback;
  }
  const auto& v = c.raw()[std::string(key)];
  if (!v.is_number_integer() || v.get<int64_t>() < -1) {
    b.Fail(MakeError("{}: \"{}\" must be a layer index (or -1)", c.where(), key));
    return 0;
  }
  return v.get<int64_t>();
}

}  // namespace

Result<Model> BuildErnie45Moe(const HfConfig& c, const BuildOptions& o) {
  ModelBuilder b(c);
  Model& m = b.model();
  ReadDecoderBasics(b, c, {.tie = true});
  auto& hp = m.hp;
  NoteTieDefault(b, c, hp.tie_word_embeddings, kClass);
  hp.norm = "rmsnorm";
  hp.gated_mlp = true;
  const bool bias = BoolDefault(b, c, "use_bias", false, kClass);
  hp.num_experts = UintDefault(b, c, "moe_num_experts", 64, kClass);
  hp.experts_per_token = UintDefault(b, c, "moe_k", 6, kClass);
  hp.moe_intermediate_size = UintDefault(b, c, "moe_intermediate_size", 1536, kClass);
  const uint64_t shared = UintDefault(b, c, "moe_num_shared_experts", 2, kClass);
  const uint64_t interval = UintDefault(b, c, "moe_layer_interval", 1, kClass);
  const int64_t start = SignedIndex(b, c, "moe_layer_start_index", 1);
  int64_t end = SignedIndex(b, c, "moe_layer_end_index", -1);
  const uint64_t mtp = Get(b, c.UintOr("num_nextn_predict_layers", 0));
  Quantization q = ReadQuantization(b, c, o);
  if (b.failed()) return b.Finish();
  if (interval == 0) {
    return MakeError("{}: field \"moe_layer_interval\" must not be zero", c.where());
  }
  if (mtp > hp.num_layers) {
    return MakeError("{}: \"num_nextn_predict_layers\" = {} exceeds \"num_hidden_layers\" = {}",
                     c.where(), mtp, hp.num_layers);
  }
  if (end == -1) end = static_cast<int64_t>(hp.num_layers) - 1;
  hp.num_shared_experts = shared;
  hp.shared_expert_intermediate_size =
      MulDims(b, hp.moe_intermediate_size, shared, "moe_intermediate_size x moe_num_shared_experts");
  hp.num_mtp_layers = mtp;
  const uint64_t h = hp.hidden_size, hd = hp.head_dim;
  const uint64_t q_width = MulDims(b, hp.num_attention_heads, hd, "num_attention_heads x head_dim");
  const uint64_t kv_width = MulDims(b, hp.num_kv_heads, hd, "num_key_value_heads x head_dim");
  const auto attention = [&](const std::string& l) {
    b.RmsNorm(l + ".input_layernorm", h);
    QLinear(b, q, l + ".self_attn.q_proj", h, q_width, bias);
    QLinear(b, q, l + ".self_attn.k_proj", h, kv_width, bias);
    QLinear(b, q, l + ".self_attn.v_proj", h, kv_width, bias);
    QLinear(b, q, l + ".self_attn.o_proj", q_width, h, bias);
    b.RmsNorm(l + ".post_attention_layernorm", h);
  };
  b.Embedding("model.embed_tokens", hp.vocab_size, h);
  for (uint64_t i = 0; i < hp.num_layers && !b.failed(); ++i) {
    const std::string l = Layer("model.layers", i);
    attention(l);
    LayerInfo info = AttentionInfo(hp, false, 0);
    const auto signed_i = static_cast<int64_t>(i);
    const bool sparse = hp.num_experts > 0 && (i + 1) % interval == 0 && signed_i >= start &&
                        signed_i <= end;
    if (sparse) {
      b.ParamAs(l + ".mlp.gate.weight", {hp.num_experts, h}, Dtype::kF32);
      b.ParamAs(l + ".mlp.moe_statics.e_score_correction_bias", {1, hp.num_experts}, Dtype::kF32);
      RepeatedModules(b, q, l + ".mlp.experts", hp.num_experts, [&](const std::string& x) {
        QGatedMlp(b, q, x, h, hp.moe_intermediate_size, bias);
      });
      if (shared > 0) {
        QGatedMlp(b, q, l + ".mlp.shared_experts", h, hp.shared_expert_intermediate_size, bias);
      }
      info.moe = true;
    } else {
      QGatedMlp(b, q, l + ".mlp", h, hp.intermediate_size, bias);
      info.intermediate_size = hp.intermediate_size;
    }
    hp.layers.push_back(info);
  }
  b.RmsNorm("model.norm", h);
  b.Buffer("model.rotary_emb.inv_freq", {hd / 2}, Dtype::kF32, false);
  TaskHead(b, c, o, "model.embed_tokens", bias);
  // Multi-token prediction (Baidu's layout): stored, not loaded by transformers.
  const uint64_t mtp_begin = m.tensors.size();
  for (uint64_t k = 0; k < mtp && !b.failed(); ++k) {
    b.RmsNorm(Layer("model.mtp_emb_norm", k), h);
    b.RmsNorm(Layer("model.mtp_hidden_norm", k), h);
    QLinear(b, q, Layer("model.mtp_linear_proj", k), MulDims(b, 2, h, "2 x hidden_size"), h, bias);
    const std::string l = Layer("model.mtp_block", k);
    attention(l);
    QGatedMlp(b, q, l + ".mlp", h, hp.intermediate_size, bias);
  }
  if (mtp > 0 && !b.failed()) {
    const uint64_t bytes = MarkStoredOnly(m, mtp_begin);
    m.notes.push_back(fmt::format(
        "{} multi-token-prediction module(s) (model.mtp_*, {} bytes) are stored in the checkpoint "
        "but not loaded by transformers", mtp, bytes));
  }
  NoteQuantization(b, q);
  m.no_split_patterns = {"model.layers.*"};
  m.base_model_prefix = "model.";
  return b.Finish();
}

}  // namespace memfit::arch
