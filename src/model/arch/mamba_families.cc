// Pure state-space decoders: Mamba-1 (mamba), Falcon-Mamba (falcon_mamba) and Mamba-2 (mamba2).
// Not DecoderSpec rows: their blocks are one norm and one recurrent mixer under backbone.* with
// no attention and no MLP, which a spec (model.layers.N attention + MLP) cannot say.
// Layout (MambaForCausalLM, FalconMambaForCausalLM, Mamba2ForCausalLM):
//   backbone.embeddings [V, H]; backbone.layers.N.{norm [H], mixer.*}; backbone.norm_f [H];
//   lm_head [V, H], tied to the embeddings unless "tie_word_embeddings" is false.
// - mamba / falcon_mamba: the Mamba-1 mixer (mamba1_mixer.h) of d_inner = "intermediate_size"
//   (a key in the config wins over int(expand x H), as PretrainedConfig sets it after
//   MambaConfig.__init__; FalconMambaConfig reads it explicitly), "state_size" (16),
//   "conv_kernel" (4), "time_step_rank" ("auto": ceil(H / 16)), "use_bias" (true for Mamba,
//   false for Falcon-Mamba), "use_conv_bias" (true); tie_word_embeddings defaults to true.
// - mamba2: the Mamba-2 mixer (mamba2_mixer.h) of d_inner = int("expand" x H) (Mamba2Mixer
//   ignores "intermediate_size"), "num_heads" (128) x "head_dim" (64), which must equal
//   d_inner, "n_groups" (8), "state_size" (128), "conv_kernel" (4), "use_bias" (false),
//   "use_conv_bias" (true), "chunk_size" (256); tie_word_embeddings defaults to false.
// Sources: transformers models/mamba/{configuration,modeling}_mamba.py,
// models/falcon_mamba/modular_falcon_mamba.py, models/mamba2/{configuration,modeling}_mamba2.py;
// configs state-spaces/mamba-130m-hf, tiiuae/falcon-mamba-7b, mistralai/Mamba-Codestral-7B-v0.1.

#include <cmath>

#include "model/arch/mamba_families.h"
#include "formats/hf_config_json.h"
#include "model/arch/decoder_kit.h"
#include "model/arch/mamba1_mixer.h"
#include "model/arch/mamba2_mixer.h"
#include "model/arch/quantization.h"

namespace memfit::arch {
namespace {

// The common hyperparameters of the three families (no attention heads).
void ReadSsmBasics(ModelBuilder& b, const HfConfig& c, bool tie_default) {
  auto& hp = b.model().hp;
  hp.vocab_size = Get(b, c.Uint("vocab_size"));
  hp.hidden_size = Get(b, c.Uint("hidden_size"));
  hp.num_layers = Get(b, c.Uint("num_hidden_layers"));
  hp.max_position_embeddings = Get(b, c.UintOr("max_position_embeddings", 0));
  hp.tie_word_embeddings = Get(b, c.BoolOr("tie_word_embeddings", tie_default));
  hp.activation = Get(b, c.StringOr("hidden_act", "silu"));
  hp.norm = "rmsnorm";
  if (!b.failed() && (hp.hidden_size == 0 || hp.hidden_size > kMaxConfigDimension)) {
    b.Fail(MakeError("{}: field \"hidden_size\" must be positive and sane", c.where()));
  }
}

// int(expand x hidden), as MambaConfig / Mamba2Mixer compute it; "expand" may be a float (1.5).
uint64_t ExpandedSize(ModelBuilder& b, const HfConfig& c, uint64_t h) {
  const double expand = Get(b, c.NumberOr("expand", 2));
  const double size = expand * static_cast<double>(h);
  if (!b.failed() && !(std::isfinite(size) && size >= 1 &&
                       size <= static_cast<double>(kMaxConfigDimension))) {
    b.Fail(MakeError("{}: field \"expand\" x \"hidden_size\" must be a positive size", c.where()));
    return 0;
  }
  return static_cast<uint64_t>(size);
}

// The backbone.* tail: final norm, head, quantization note, blocks.
Result<Model> FinishBackbone(ModelBuilder& b, const HfConfig& c, const BuildOptions& o,
                             const Quantization& q) {
  Model& m = b.model();
  b.RmsNorm("backbone.norm_f", m.hp.hidden_size);
  TaskHead(b, c, o, "backbone.embeddings");
  NoteQuantization(b, q);
  m.no_split_patterns = {"backbone.layers.*"};  // _no_split_modules: MambaBlock / Mamba2Block
  m.base_model_prefix = "backbone.";
  return b.Finish();
}

Result<Model> BuildMambaOne(const HfConfig& c, const BuildOptions& o, bool falcon) {
  ModelBuilder b(c);
  Model& m = b.model();
  auto& hp = m.hp;
  ReadSsmBasics(b, c, true);
  if (b.failed()) return b.Finish();
  const uint64_t h = hp.hidden_size;
  Mamba1Dims d;
  d.d_inner = c.Has("intermediate_size") ? Get(b, c.Uint("intermediate_size"))
                                         : ExpandedSize(b, c, h);
  d.d_state = Get(b, c.UintOr("state_size", 16));
  d.kernel = Get(b, c.UintOr("conv_kernel", 4));
  d.dt_rank = ReadTimeStepRank(b, c, "time_step_rank", h);
  d.proj_bias = Get(b, c.BoolOr("use_bias", !falcon));
  d.conv_bias = Get(b, c.BoolOr("use_conv_bias", true));
  d.norms = falcon ? Mamba1Norms::kFalconBuffers : Mamba1Norms::kNone;
  Quantization q = ReadQuantization(b, c, o);
  if (auto st = ResolveMamba1(b, c, d,
                              "\"intermediate_size\", \"state_size\", \"conv_kernel\" and "
                              "\"time_step_rank\"");
      !st) {
    return st.error();
  }
  if (b.failed()) return b.Finish();
  hp.intermediate_size = d.d_inner;
  b.Embedding("backbone.embeddings", hp.vocab_size, h);
  for (uint64_t i = 0; i < hp.num_layers && !b.failed(); ++i) {
    const std::string l = Layer("backbone.layers", i);
    b.RmsNorm(l + ".norm", h);
    hp.layers.push_back(EmitMamba1(b, q, l + ".mixer", h, d));
  }
  if (falcon) {
    m.assumptions.push_back(
        "Falcon-Mamba's b_c_rms / dt_rms (all-ones weights the mamba_ssm kernels take) counted "
        "as non-persistent buffers in the model dtype");
  }
  return FinishBackbone(b, c, o, q);
}

}  // namespace

Result<Model> BuildMamba(const HfConfig& c, const BuildOptions& o) {
  return BuildMambaOne(c, o, false);
}

Result<Model> BuildFalconMamba(const HfConfig& c, const BuildOptions& o) {
  return BuildMambaOne(c, o, true);
}

Result<Model> BuildMamba2(const HfConfig& c, const BuildOptions& o) {
  ModelBuilder b(c);
  Model& m = b.model();
  auto& hp = m.hp;
  ReadSsmBasics(b, c, false);
  if (b.failed()) return b.Finish();
  const uint64_t h = hp.hidden_size;
  Mamba2Dims d;
  d.heads = Get(b, c.UintOr("num_heads", 128));
  d.head_dim = Get(b, c.UintOr("head_dim", 64));
  d.groups = Get(b, c.UintOr("n_groups", 8));
  d.d_state = Get(b, c.UintOr("state_size", 128));
  d.kernel = Get(b, c.UintOr("conv_kernel", 4));
  d.proj_bias = d.out_bias = Get(b, c.BoolOr("use_bias", false));
  d.conv_bias = Get(b, c.BoolOr("use_conv_bias", true));
  d.d_inner = ExpandedSize(b, c, h);
  hp.ssm_chunk_size = Get(b, c.UintOr("chunk_size", 256));
  Quantization q = ReadQuantization(b, c, o);
  if (b.failed()) return b.Finish();
  if (d.heads == 0 || d.head_dim == 0 || d.groups == 0 || d.d_state == 0 || d.kernel == 0 ||
      hp.ssm_chunk_size == 0) {
    return MakeError("{}: \"num_heads\", \"head_dim\", \"n_groups\", \"state_size\", "
                     "\"conv_kernel\" and \"chunk_size\" must be positive", c.where());
  }
  if (d.heads > kMaxConfigDimension || d.head_dim > kMaxConfigDimension ||
      d.groups > kMaxConfigDimension || d.d_state > kMaxConfigDimension ||
      d.kernel > kMaxConfigDimension || d.d_inner % d.heads != 0 ||
      d.d_inner / d.heads != d.head_dim) {
    return MakeError("{}: \"num_heads\" x \"head_dim\" must equal int(\"expand\" x "
                     "\"hidden_size\") = {}", c.where(), d.d_inner);
  }
  const uint64_t bc = MulDims(b, 2 * d.groups, d.d_state, "2 x n_groups x state_size");
  if (b.failed()) return b.Finish();
  if (bc > kMaxModelElements) return MakeError("{}: Mamba-2 dimensions are absurd", c.where());
  d.conv = d.d_inner + bc;  // both at most 2^56: no wrap
  hp.intermediate_size = d.d_inner;
  hp.ssm_conv_kernel = d.kernel;
  hp.ssm_inner_size = d.d_inner;
  hp.ssm_state_size = d.d_state;
  hp.ssm_group_count = d.groups;
  if (!c.Has("chunk_size")) {
    m.assumptions.push_back(
        "no \"chunk_size\": the config class's default 256 (Mamba-2 scan chunk)");
  }
  b.Embedding("backbone.embeddings", hp.vocab_size, h);
  for (uint64_t i = 0; i < hp.num_layers && !b.failed(); ++i) {
    const std::string l = Layer("backbone.layers", i);
    b.RmsNorm(l + ".norm", h);
    hp.layers.push_back(EmitMamba2(b, q, l + ".mixer", h, d));
  }
  return FinishBackbone(b, c, o, q);
}

}  // namespace memfit::arch
