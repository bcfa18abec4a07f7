#pragma once
// The classic decoder families as data (issue 30): GPT-2, GPT-NeoX, GPT-J, BigCode, OPT, BLOOM,
// MPT, Falcon, Phi, StableLM, StarCoder2 and InternLM2. A ClassicDecoderSpec names the config keys,
// module names, attention, MLP and norm forms, buffers and heads; BuildClassic
// (classic_decoder.cc) builds any spec; the rows, each citing its source, and the hooks for quirks
// no field can say are in classic_families.cc.
//
// Tensor order, as transformers registers the modules:
//   <base>.<embed>, [<base>.<learned_pos>], [<base>.<embed_norm>], [after_embed hook],
//   per layer <base>.<layers>.N: the pre-attention norms, [buffers, when buffers_first], the
//   attention projections, [its q/k norms], [buffers], the middle norm, [layer hook], the MLP,
//   the post norm; then the final norm, the model-level buffers and the head.

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "memfit/architecture.h"
#include "model/arch/builder_kit.h"
#include "model/arch/quantization.h"

namespace memfit::arch {

// The head a config asks for (options.head_class, else architectures[0]).
enum class HeadKind : uint8_t {
  kBase,                    // the bare AutoModel (GPT2Model, FalconModel, ...)
  kCausalLm,                // *ForCausalLM / *LMHeadModel
  kSequenceClassification,  // score: Linear(hidden, num_labels, bias=False)
  kTokenClassification,     // classifier: Linear(hidden, num_labels) with bias
  kQuestionAnswering,       // qa_outputs: Linear(hidden, 2) with bias
  kDoubleHeads,             // GPT2DoubleHeadsModel: lm_head + multiple_choice_head
};

// The MLP width.
enum class Width : uint8_t {
  kKey,      // inter_key, required
  kKeyOr4H,  // inter_key, default 4 x hidden
  k4H,       // 4 x hidden, not in config.json (BloomMLP)
  kRatio,    // inter_key (default 4) x hidden (MPT's expansion_ratio)
};

enum class AttnForm : uint8_t {
  kFused,         // proj = {qkv [(heads + 2 kv) x head_dim], out}
  kSplit,         // proj = {q, k, v, out}, registered in that order
  kSplitKvFirst,  // proj = {q, k, v, out}, registered k, v, q, out (GPT-J, OPT)
};

enum class QkNormForm : uint8_t {
  kNone,
  kLayerNorm,  // with qk_norm_key: self_attn.{q,k}_layernorm, LayerNorm [head_dim] (phi)
  kPerHead,    // with qk_norm_key: {q,k}_layernorm.norms.N.weight [head_dim] per head (stablelm)
};

enum class NormKind : uint8_t { kLayerNorm, kLayerNormNoBias, kRmsNorm };

// When a buffer exists: BuildOptions::buffers (kTransformers442) and ::transformers.
enum class BufferWhen : uint8_t {
  kNever,
  kAlways,
  k442,        // transformers 4.42 only
  kBefore449,  // 4.42 and every release before 4.49
};

// The rotary width.
enum class RotaryWidth : uint8_t {
  kHeadDim,
  // int(head_dim x "rotary_pct"), else "partial_rotary_factor", else rotary_default; in [0, 1].
  kRotaryPct,
  // RotaryDim (decoder_kit.h): "partial_rotary_factor", default rotary_default, or the value of
  // rotary_default_key when set (stablelm_epoch's "rope_pct").
  kPartialFactor,
};

// A boolean from config.json `key` (default `value`), or always `value` when key is "".
struct Flag {
  std::string_view key = "";
  bool value = false;
};

struct ClassicBuild;
using ClassicHook = void (*)(ClassicBuild& x);
using ClassicLayerHook = void (*)(ClassicBuild& x, const std::string& layer);

struct ClassicDecoderSpec {
  std::string_view family = "";  // in head errors and assumptions
  // ReadDecoderBasics (decoder_kit.h) instead of these keys ("_alt": another name for the same
  // field; head_dim = hidden / heads; one KV head with multi_query_key, else as many as heads).
  bool kit_basics = false;
  std::string_view hidden_key = "hidden_size", hidden_alt = "";
  std::string_view layers_key = "num_hidden_layers", layers_alt = "";
  std::string_view heads_key = "num_attention_heads", heads_alt = "";
  std::string_view heads_name = "";  // the heads' name in the head_dim error ("": heads_key)
  Width width = Width::kKey;
  std::string_view inter_key = "intermediate_size";
  std::string_view pos_key = "max_position_embeddings", pos_alt = "";  // "": not read
  uint64_t pos_default = 0;                                            // 0: required
  std::string_view multi_query_key = "";         // true (the default) gives one KV head
  std::optional<double> dropout = std::nullopt;  // resid_pdrop / attn_pdrop default, when read
  // Both.
  bool tie_default = false;
  std::string_view act_key = "hidden_act";  // "": always act_default
  std::string_view act_default = "gelu";
  bool quantized = false;  // reads "quantization_config" (QLinear layers)
  // Module names, relative to base ("transformer" = base_model_prefix without its dot).
  std::string_view base = "transformer";
  std::string_view embed = "wte";
  std::string_view learned_pos = "";  // an nn.Embedding of P + pos_offset positions
  uint64_t pos_offset = 0;
  std::string_view embed_norm = "";
  std::string_view layers = "h";
  // Norms inside a layer ("" none) and the final one.
  std::array<std::string_view, 2> pre_norms = {"ln_1", ""};
  std::string_view mid_norm = "ln_2";  // after the attention
  std::string_view post_norm = "";     // after the MLP
  std::string_view parallel_key = "";  // true: no post_norm (parallel residual)
  std::string_view final_norm = "ln_f";
  NormKind norm = NormKind::kLayerNorm;
  std::string_view norm_affine_key = "";  // false: no norm has parameters (OPT)
  // Attention.
  std::string_view attn = "attn";
  AttnForm attn_form = AttnForm::kFused;
  std::array<std::string_view, 4> proj = {"c_attn", "c_proj", "", ""};
  bool conv1d = false;  // transformers' Conv1D: weight [in, out] (GPT-2)
  Flag qkv_bias = {"", true}, o_bias = {"", true};
  QkNormForm qk_norm = QkNormForm::kNone;
  std::string_view qk_norm_key = "qk_layernorm";
  std::string_view window_key = "";  // > 0: sliding-window attention in every layer
  // MLP: {up, down}, or with gated {gate, up, down} (the first two hidden -> width).
  std::string_view mlp = "mlp";  // "": the projections sit in the layer itself (OPT)
  std::array<std::string_view, 3> mlp_proj = {"c_fc", "c_proj", ""};
  bool gated = false;
  Flag mlp_bias = {"", true};
  // Buffers.
  // Per attention: the causal mask `bias` bool [1, 1, P, P] and `masked_bias` (float32 scalar).
  BufferWhen mask = BufferWhen::kNever;
  bool buffers_first = false;  // the layer's buffers come before its attention projections
  bool model_mask = false;     // <base>.bias bool [P, P] after the final norm (BigCode)
  // Per attention: rotary_emb.inv_freq [rotary / 2] (float32; all these buffers are
  // non-persistent), in 4.42 with rope_cached also rotary_emb.{cos,sin}_cached [P, rotary].
  BufferWhen layer_rope = BufferWhen::kNever;
  bool rope_cached = false;
  bool rope_model = false;  // after the final norm, but for 4.42: <base>.rotary_emb.inv_freq
  std::string_view alibi_key = "";  // true: ALiBi instead of rotary, no rotary buffers
  RotaryWidth rotary = RotaryWidth::kHeadDim;
  double rotary_default = 1.0;
  std::string_view rotary_default_key = "";
  // Heads. task_head: TaskHead (decoder_kit.h). Else the head of options.head_class or
  // architectures[0] (none: the causal LM, said in an assumption): lm_head (tied to embed, on
  // embed_width features) or a classifier head the family has.
  bool task_head = false;
  std::string_view lm_head = "lm_head";
  bool lm_bias = false;
  bool sequence_head = true, token_head = true, qa_head = true;
  bool qa_labels = false;  // qa_outputs has num_labels outputs (GPT-J), else 2
  // Hooks for what a field cannot say (classic_families.cc).
  ClassicHook read = nullptr;                // reads more fields, before the head is resolved
  ClassicHook setup = nullptr;               // after the hyperparameters, before any tensor
  ClassicHook after_embed = nullptr;         // after the embeddings
  ClassicLayerHook layer = nullptr;          // in each layer, after the middle norm
  ClassicLayerHook layer_buffers = nullptr;  // in each layer, after the spec's buffers
  ClassicHook head = nullptr;                // replaces the head (ClassicHead builds the spec's)
};

// What a build has read, for the skeleton and the hooks.
struct ClassicBuild {
  ModelBuilder& b;
  const HfConfig& c;
  const BuildOptions& o;
  const ClassicDecoderSpec& s;
  Quantization q{};
  HeadKind head = HeadKind::kCausalLm;
  std::string head_class{};  // the class `head` was resolved from
  uint64_t labels = 0;
  uint64_t rotary = 0;       // the rotary width (0 with ALiBi)
  uint64_t embed_width = 0;  // the token embedding's width and the heads' input (OPT's proj)
  uint64_t window = 0;
  bool qk_norm = false, alibi = false, norm_affine = true;
  bool qkv_bias = false, o_bias = false, mlp_bias = false;
  bool quirk = false;  // a family flag that its read hook reads for its other hooks
  std::array<std::string_view, 2> pre_norms{};
  std::string_view post_norm{};

  Hyperparameters& hp() { return b.model().hp; }
  std::string Name(std::string_view relative) const;  // <base>.<relative>
  void Norm(const std::string& name);                 // the spec's norm over hidden_size
  // A projection: QLinear, or with the spec's conv1d a GPT-2 Conv1D.
  void Proj(const std::string& name, uint64_t in, uint64_t out, bool bias);
  void Mask(const std::string& module);  // the causal mask buffers of an attention module
};

// Whether a buffer of `when` exists under `options`.
bool BufferHolds(BufferWhen when, const BuildOptions& options);

// The spec's head, for hooks that add to it.
void ClassicHead(ClassicBuild& x);

// Builds the decoder `spec` describes from `config` (classic_decoder.cc).
Result<Model> BuildClassic(const HfConfig& config, const BuildOptions& options,
                           const ClassicDecoderSpec& spec);

// The registry rows of every ClassicDecoderSpec family (classic_families.cc).
const std::vector<ArchitectureBuilder>& ClassicFamilyBuilders();

}  // namespace memfit::arch
