// BuildClassic: any ClassicDecoderSpec (classic_decoder.h).

#include "model/arch/classic_decoder.h"

#include <vector>

#include "model/arch/decoder_kit.h"
#include "model/arch/encoder_common.h"

namespace memfit::arch {
namespace {

Result<uint64_t> AltUint(const HfConfig& c, std::string_view key, std::string_view alt) {
  return alt.empty() ? c.Uint(key) : c.UintAny({key, alt});
}

bool Read(ClassicBuild& x, const Flag& flag) {
  return flag.key.empty() ? flag.value : Get(x.b, x.c.BoolOr(flag.key, flag.value));
}

// The spec's keys (not kit_basics) and the sizes derived from them.
void ReadGptFields(ClassicBuild& x) {
  const ClassicDecoderSpec& s = x.s;
  ModelBuilder& b = x.b;
  const HfConfig& c = x.c;
  Hyperparameters& hp = x.hp();
  hp.hidden_size = Get(b, AltUint(c, s.hidden_key, s.hidden_alt));
  hp.num_layers = Get(b, AltUint(c, s.layers_key, s.layers_alt));
  hp.num_attention_heads = Get(b, AltUint(c, s.heads_key, s.heads_alt));
  hp.vocab_size = Get(b, c.Uint("vocab_size"));
  if (s.width == Width::kKey) hp.intermediate_size = Get(b, c.Uint(s.inter_key));
  if (s.width == Width::kKeyOr4H) {
    hp.intermediate_size = Get(b, c.UintOr(s.inter_key, 4 * hp.hidden_size));
  }
  if (s.width == Width::k4H) hp.intermediate_size = 4 * hp.hidden_size;
  if (s.width == Width::kRatio) {
    const uint64_t ratio = Get(b, c.UintOr(s.inter_key, 4));
    if (ratio == 0) b.Fail(MakeError("{}: \"{}\" must not be zero", c.where(), s.inter_key));
    hp.intermediate_size = MulDims(b, ratio, hp.hidden_size, s.inter_key);
  }
  if (!s.pos_key.empty()) {
    hp.max_position_embeddings = Get(b, s.pos_default == 0 ? AltUint(c, s.pos_key, s.pos_alt)
                                                           : c.UintOr(s.pos_key, s.pos_default));
  }
  hp.tie_word_embeddings = Get(b, c.BoolOr("tie_word_embeddings", s.tie_default));
  hp.activation = s.act_key.empty() ? std::string(s.act_default)
                                    : Get(b, c.StringOr(s.act_key, std::string(s.act_default)));
  if (s.dropout) {
    // Training keeps a dropout mask per dropout (validation/FINDINGS.md 2m).
    hp.hidden_dropout = Get(b, c.NumberOr("resid_pdrop", *s.dropout));
    hp.attention_dropout = Get(b, c.NumberOr("attn_pdrop", *s.dropout));
  }
  hp.head_dim = DivideExact(b, c, hp.hidden_size, s.hidden_key, hp.num_attention_heads,
                            s.heads_name.empty() ? s.heads_key : s.heads_name);
  const bool multi_query = !s.multi_query_key.empty() && Get(b, c.BoolOr(s.multi_query_key, true));
  hp.num_kv_heads = multi_query ? 1 : hp.num_attention_heads;
  if (s.rotary == RotaryWidth::kRotaryPct) {
    const double pct = Get(
        b, c.NumberOr("rotary_pct", Get(b, c.NumberOr("partial_rotary_factor", s.rotary_default))));
    if (!(pct >= 0.0 && pct <= 1.0)) {
      return b.Fail(MakeError("{}: \"rotary_pct\" = {} is not between 0 and 1", c.where(), pct));
    }
    // transformers: rotary_ndims = int(head_size * rotary_pct).
    x.rotary = static_cast<uint64_t>(static_cast<double>(hp.head_dim) * pct);
  }
}

// The head class: options.head_class (an AutoModel* class name, as accelerate takes it from
// auto_map) when set, else architectures[0]. A class no family has is an error naming it.
HeadKind ResolveHead(ClassicBuild& x) {
  if (x.o.head_class.empty() && x.c.architectures().empty()) {
    x.b.model().assumptions.push_back(fmt::format(
        "config.json names no \"architectures\": the {} causal language-model head assumed",
        x.s.family));
    return HeadKind::kCausalLm;
  }
  x.head_class = x.o.head_class.empty() ? x.c.architectures().front() : x.o.head_class;
  const std::string& cls = x.head_class;
  if (cls.ends_with("ForCausalLM") || cls.ends_with("LMHeadModel")) return HeadKind::kCausalLm;
  if (cls.ends_with("ForSequenceClassification")) return HeadKind::kSequenceClassification;
  if (cls.ends_with("ForTokenClassification")) return HeadKind::kTokenClassification;
  if (cls.ends_with("ForQuestionAnswering")) return HeadKind::kQuestionAnswering;
  if (cls.ends_with("DoubleHeadsModel")) return HeadKind::kDoubleHeads;
  if (cls == "AutoModel" || (cls.ends_with("Model") && cls.find("For") == std::string::npos)) {
    return HeadKind::kBase;
  }
  x.b.Fail(MakeError("{}: head class \"{}\" is not one the {} builder knows", x.c.where(), cls,
                     x.s.family));
  return HeadKind::kBase;
}

// Reads every hyperparameter; false (the error recorded) when the build cannot go on.
bool ReadHyperparameters(ClassicBuild& x) {
  const ClassicDecoderSpec& s = x.s;
  ModelBuilder& b = x.b;
  const HfConfig& c = x.c;
  Hyperparameters& hp = x.hp();
  if (s.kit_basics) {
    ReadDecoderBasics(b, c, {.tie = s.tie_default, .act_default = s.act_default});
  } else {
    ReadGptFields(x);
  }
  x.qkv_bias = Read(x, s.qkv_bias);
  x.o_bias = Read(x, s.o_bias);
  x.mlp_bias = Read(x, s.mlp_bias);
  x.alibi = Read(x, {s.alibi_key, false});
  x.norm_affine = Read(x, {s.norm_affine_key, true});
  x.qk_norm = s.qk_norm != QkNormForm::kNone && Get(b, c.BoolOr(s.qk_norm_key, false));
  if (Read(x, {s.parallel_key, false})) x.post_norm = "";
  if (!s.window_key.empty()) x.window = Get(b, c.UintOr(s.window_key, 0));
  if (s.rotary == RotaryWidth::kPartialFactor) {
    const double factor = s.rotary_default_key.empty()
                              ? s.rotary_default
                              : Get(b, c.NumberOr(s.rotary_default_key, s.rotary_default));
    x.rotary = RotaryDim(b, c, hp.head_dim, factor);
  }
  if (s.rotary == RotaryWidth::kHeadDim) x.rotary = hp.head_dim;
  x.embed_width = hp.hidden_size;
  if (s.read) s.read(x);
  if (!s.task_head) {
    x.head = ResolveHead(x);
    x.labels = NumLabels(b, c);
  }
  if (s.quantized) x.q = ReadQuantization(b, c, x.o);
  if (!b.failed() && s.setup) s.setup(x);
  return !b.failed();
}

void Attention(ClassicBuild& x, const std::string& a) {
  const ClassicDecoderSpec& s = x.s;
  const Hyperparameters& hp = x.hp();
  const uint64_t h = hp.hidden_size, hd = hp.head_dim, nh = hp.num_attention_heads,
                 nkv = hp.num_kv_heads;
  auto p = [&](size_t k) { return a + std::string(s.proj[k]); };
  if (s.attn_form == AttnForm::kFused) {
    x.Proj(p(0), h, (nh + 2 * nkv) * hd, x.qkv_bias);
  } else {
    if (s.attn_form == AttnForm::kSplit) x.Proj(p(0), h, nh * hd, x.qkv_bias);
    x.Proj(p(1), h, nkv * hd, x.qkv_bias);
    x.Proj(p(2), h, nkv * hd, x.qkv_bias);
    if (s.attn_form == AttnForm::kSplitKvFirst) x.Proj(p(0), h, nh * hd, x.qkv_bias);
  }
  x.Proj(p(s.attn_form == AttnForm::kFused ? 1 : 3), nh * hd, h, x.o_bias);
  if (!x.qk_norm) return;
  if (s.qk_norm == QkNormForm::kLayerNorm) {
    x.b.LayerNorm(a + "q_layernorm", hd);
    x.b.LayerNorm(a + "k_layernorm", hd);
    return;
  }
  // StableLmLayerNormPerHead: one bias-free LayerNorm per head.
  for (uint64_t n = 0; n < nh; ++n) x.b.Param(Layer(a + "q_layernorm.norms", n) + ".weight", {hd});
  for (uint64_t n = 0; n < nkv; ++n) x.b.Param(Layer(a + "k_layernorm.norms", n) + ".weight", {hd});
}

void LayerBuffers(ClassicBuild& x, const std::string& l) {
  const ClassicDecoderSpec& s = x.s;
  const uint64_t pos = x.hp().max_position_embeddings;
  const std::string a = l + "." + std::string(s.attn);
  if (BufferHolds(s.mask, x.o)) x.Mask(a);
  if (!x.alibi && BufferHolds(s.layer_rope, x.o)) {
    const std::string r = a + ".rotary_emb";
    x.b.Buffer(r + ".inv_freq", {x.rotary / 2}, Dtype::kF32, false);
    if (s.rope_cached && x.o.buffers == BufferConvention::kTransformers442) {
      x.b.Buffer(r + ".cos_cached", {pos, x.rotary}, Dtype::kF32, false);
      x.b.Buffer(r + ".sin_cached", {pos, x.rotary}, Dtype::kF32, false);
    }
  }
  if (s.layer_buffers) s.layer_buffers(x, l);
}

void DecoderLayer(ClassicBuild& x, uint64_t i) {
  const ClassicDecoderSpec& s = x.s;
  Hyperparameters& hp = x.hp();
  const uint64_t h = hp.hidden_size, inter = hp.intermediate_size;
  const std::string l = Layer(x.Name(s.layers), i);
  for (std::string_view norm : x.pre_norms) {
    if (!norm.empty()) x.Norm(l + "." + std::string(norm));
  }
  if (s.buffers_first) LayerBuffers(x, l);
  Attention(x, l + "." + std::string(s.attn) + ".");
  if (!s.buffers_first) LayerBuffers(x, l);
  if (!s.mid_norm.empty()) x.Norm(l + "." + std::string(s.mid_norm));
  if (s.layer) s.layer(x, l);
  const std::string m = s.mlp.empty() ? l + "." : l + "." + std::string(s.mlp) + ".";
  const auto& p = s.mlp_proj;
  x.Proj(m + std::string(p[0]), h, inter, x.mlp_bias);
  if (s.gated) x.Proj(m + std::string(p[1]), h, inter, x.mlp_bias);
  x.Proj(m + std::string(p[s.gated ? 2 : 1]), inter, h, x.mlp_bias);
  if (!x.post_norm.empty()) x.Norm(l + "." + std::string(x.post_norm));
  LayerInfo info = AttentionInfo(hp, x.window > 0, x.window);
  info.intermediate_size = inter;
  hp.layers.push_back(info);
}

}  // namespace

bool BufferHolds(BufferWhen when, const BuildOptions& o) {
  const bool tf442 = o.buffers == BufferConvention::kTransformers442;
  return when == BufferWhen::kAlways || (when == BufferWhen::k442 && tf442) ||
         (when == BufferWhen::kBefore449 && (tf442 || o.transformers < LibraryVersion{4, 49}));
}

std::string ClassicBuild::Name(std::string_view relative) const {
  return std::string(s.base) + "." + std::string(relative);
}

// An RMSNorm has a LayerNorm's tensors without the bias.
void ClassicBuild::Norm(const std::string& name) {
  if (norm_affine) b.LayerNorm(name, b.model().hp.hidden_size, s.norm == NormKind::kLayerNorm);
}

void ClassicBuild::Proj(const std::string& name, uint64_t in, uint64_t out, bool bias) {
  if (!s.conv1d) {
    QLinear(b, q, name, in, out, bias);
    return;
  }
  // transformers.pytorch_utils.Conv1D(nf=out, nx=in): weight [in, out], bias [out].
  b.Param(name + ".weight", {in, out});
  b.Param(name + ".bias", {out});
}

void ClassicBuild::Mask(const std::string& module) {
  const uint64_t pos = b.model().hp.max_position_embeddings;
  b.Buffer(module + ".bias", {1, 1, pos, pos}, Dtype::kBool, false);
  b.Buffer(module + ".masked_bias", {}, Dtype::kF32, false);
}

void ClassicHead(ClassicBuild& x) {
  const ClassicDecoderSpec& s = x.s;
  ModelBuilder& b = x.b;
  const std::string embed = x.Name(s.embed);
  if (s.task_head) return TaskHead(b, x.c, x.o, embed, s.lm_bias);
  const HeadKind head = x.head;
  if (head == HeadKind::kDoubleHeads ||
      (head == HeadKind::kSequenceClassification && !s.sequence_head) ||
      (head == HeadKind::kTokenClassification && !s.token_head) ||
      (head == HeadKind::kQuestionAnswering && !s.qa_head)) {
    return b.Fail(MakeError("{}: {} has no \"{}\" head", x.c.where(), s.family, x.head_class));
  }
  // The heads' input: embed_width, but hidden_size when that is 0.
  const uint64_t in = x.embed_width != 0 ? x.embed_width : x.hp().hidden_size;
  if (head == HeadKind::kCausalLm) return LmHead(b, embed, s.lm_bias, s.lm_head, in);
  b.SetHead(true);
  if (head == HeadKind::kSequenceClassification) {
    b.Linear("score", in, x.labels, false);
  } else if (head == HeadKind::kTokenClassification) {
    b.Linear("classifier", in, x.labels, true);
  } else if (head == HeadKind::kQuestionAnswering) {
    b.Linear("qa_outputs", in, s.qa_labels ? x.labels : 2, true);
  }
  b.SetHead(false);
}

Result<Model> BuildClassic(const HfConfig& c, const BuildOptions& o, const ClassicDecoderSpec& s) {
  ModelBuilder b(c);
  ClassicBuild x{
      .b = b, .c = c, .o = o, .s = s, .pre_norms = s.pre_norms, .post_norm = s.post_norm};
  Model& m = b.model();
  Hyperparameters& hp = m.hp;
  hp.norm = s.norm == NormKind::kRmsNorm ? "rmsnorm" : "layernorm";
  hp.gated_mlp = s.gated;
  if (!ReadHyperparameters(x)) return b.Finish();
  const uint64_t pos = hp.max_position_embeddings;
  b.Embedding(x.Name(s.embed), hp.vocab_size, x.embed_width);
  if (!s.learned_pos.empty()) {
    b.Embedding(x.Name(s.learned_pos), pos + s.pos_offset, hp.hidden_size);
  }
  if (!s.embed_norm.empty()) x.Norm(x.Name(s.embed_norm));
  if (s.after_embed) s.after_embed(x);
  for (uint64_t i = 0; i < hp.num_layers && !b.failed(); ++i) DecoderLayer(x, i);
  if (!s.final_norm.empty()) x.Norm(x.Name(s.final_norm));
  if (s.model_mask) b.Buffer(x.Name("bias"), {pos, pos}, Dtype::kBool, false);
  if (!x.alibi && s.rope_model && o.buffers == BufferConvention::kCurrent) {
    b.Buffer(x.Name("rotary_emb.inv_freq"), {x.rotary / 2}, Dtype::kF32, false);
  }
  (s.head ? s.head : ClassicHead)(x);
  if (s.quantized) NoteQuantization(b, x.q);
  m.no_split_patterns = {x.Name(s.layers) + ".*"};
  m.base_model_prefix = std::string(s.base) + ".";
  return b.Finish();
}

}  // namespace memfit::arch
