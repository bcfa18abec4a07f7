// The classic decoder families that are a ClassicDecoderSpec row (classic_decoder.h), one per
// model_type, each naming its source. A row sets only what differs from the defaults (GPT-2's
// names: transformer.{wte, h.N.{ln_1, attn.{c_attn, c_proj}, ln_2, mlp.{c_fc, c_proj}}, ln_f},
// biased projections, LayerNorms, no buffers, the GPT family heads). The hook functions beside a
// row say what a field cannot: each is one family's quirk. Parity with the hand-written builders
// they replaced: model_digest_test.cc.

#include "model/arch/classic_decoder.h"

#include "model/arch/decoder_heads.h"
#include "model/arch/decoder_kit.h"
#include "model/arch/table_row.h"

namespace memfit::arch {
namespace {

// GPT-2's config keys (GPT2Config, also read by GPT-J and BigCode): n_embd, n_layer, n_head,
// n_positions (each also under its hidden_size-style name), n_inner (default 4 x n_embd),
// activation_function.
constexpr ClassicDecoderSpec GptConfigKeys(ClassicDecoderSpec s) {
  s.hidden_key = "n_embd";
  s.hidden_alt = "hidden_size";
  s.layers_key = "n_layer";
  s.layers_alt = "num_hidden_layers";
  s.heads_key = "n_head";
  s.heads_alt = "num_attention_heads";
  s.width = Width::kKeyOr4H;
  s.inter_key = "n_inner";
  s.pos_key = "n_positions";
  s.pos_alt = "max_position_embeddings";
  s.act_key = "activation_function";
  return s;
}

// --- GPT-2 hooks -------------------------------------------------------------------------------
void Gpt2ReadCrossAttention(ClassicBuild& x) {
  x.quirk = Get(x.b, x.c.BoolOr("add_cross_attention", false));
}

// "add_cross_attention": crossattention.{c_attn [2H], q_attn, c_proj} with its own causal mask
// buffers, and ln_cross_attn.
void Gpt2CrossAttention(ClassicBuild& x, const std::string& l) {
  if (!x.quirk) return;
  const uint64_t h = x.hp().hidden_size;
  x.Proj(l + ".crossattention.c_attn", h, 2 * h, true);
  x.Proj(l + ".crossattention.q_attn", h, h, true);
  x.Proj(l + ".crossattention.c_proj", h, h, true);
  x.Mask(l + ".crossattention");
  x.Norm(l + ".ln_cross_attn");
}

// GPT2DoubleHeadsModel: the tied lm_head and SequenceSummary, a projection to num_labels
// (summary_proj_to_labels) or to hidden.
void Gpt2Head(ClassicBuild& x) {
  if (x.head != HeadKind::kDoubleHeads) return ClassicHead(x);
  LmHead(x.b, "transformer.wte");
  if (!Get(x.b, x.c.BoolOr("summary_use_proj", true))) return;
  const bool to_labels = Get(x.b, x.c.BoolOr("summary_proj_to_labels", true)) && x.labels > 0;
  const uint64_t h = x.hp().hidden_size;
  x.b.SetHead(true);
  x.b.Linear("multiple_choice_head.summary", h, to_labels ? x.labels : h, true);
  x.b.SetHead(false);
}

// --- GPT-NeoX hook -----------------------------------------------------------------------------
// Checkpoints saved by transformers < 4.31 also hold bias, masked_bias and inv_freq per layer
// (persistent then); current transformers ignores them on load, so they are not resident and
// memfit reports them in a note rather than as tensors (see docs/architectures.md).
void GptNeoxOldCheckpointNote(ClassicBuild& x) {
  if (!TransformersVersionBefore(x.c, 4, 31) || BufferHolds(BufferWhen::kBefore449, x.o)) return;
  const Hyperparameters& hp = x.hp();
  x.b.model().notes.push_back(fmt::format(
      "checkpoint saved by transformers < 4.31: each of the {} layers may also store the causal "
      "mask attention.bias (bool [1, 1, {}, {}]), attention.masked_bias and "
      "attention.rotary_emb.inv_freq ([{}] float32); transformers 4.49 and later neither create "
      "nor load them, so they are not counted as resident",
      hp.num_layers, hp.max_position_embeddings, hp.max_position_embeddings, x.rotary / 2));
}

// --- GPT-J hooks -------------------------------------------------------------------------------
// GPTJAttention: pos_embd_dim = rotary_dim or embed_dim (GPTJConfig's default 64; a null or 0
// rotary_dim: the whole width).
void GptjRotaryDim(ClassicBuild& x) {
  const auto key = x.c.raw().find("rotary_dim");
  const bool null_rotary = key != x.c.raw().end() && key->is_null();
  const uint64_t rotary_dim = null_rotary ? 0 : Get(x.b, x.c.UintOr("rotary_dim", 64));
  x.rotary = rotary_dim != 0 ? rotary_dim : x.hp().hidden_size;
}

// 4.45 and later: the sinusoidal table embed_positions (float32 [n_positions, rotary_dim or
// n_embd], made by create_sinusoidal_positions) is a plain attribute, not a buffer: accelerate
// does not count it, but it is resident (model.to() leaves it and the first forward moves it to
// the inputs' device, keeping it there) and stays float32 in a 16-bit model. Measured with 4.48.3
// (validation/results/cpu-torch1.13-tf4.48-slopes.csv, s-gj-*).
void GptjPositionTable(ClassicBuild& x, const std::string& l) {
  if (x.o.buffers == BufferConvention::kTransformers442) return;
  x.b.Buffer(l + ".attn.embed_positions", {x.hp().max_position_embeddings, x.rotary},
             Dtype::kF32, false);
}

// --- OPT hooks ---------------------------------------------------------------------------------
// word_embed_proj_dim (default hidden_size): the token embedding's width and the heads' input.
// The final norm exists when do_layer_norm_before and not _remove_final_layer_norm.
void OptReadProjectionAndFinalNorm(ClassicBuild& x) {
  x.embed_width = Get(x.b, x.c.UintOr("word_embed_proj_dim", x.hp().hidden_size));
  const bool pre_norm = Get(x.b, x.c.BoolOr("do_layer_norm_before", true));
  const bool remove_final_norm = Get(x.b, x.c.BoolOr("_remove_final_layer_norm", false));
  x.quirk = pre_norm && !remove_final_norm;
}

// project_out and project_in when word_embed_proj_dim != hidden; the final norm, registered
// before the layers.
void OptProjectionsAndFinalNorm(ClassicBuild& x) {
  const uint64_t h = x.hp().hidden_size, proj = x.embed_width;
  if (proj != h) {
    x.b.Linear("model.decoder.project_out", h, proj, false);
    x.b.Linear("model.decoder.project_in", proj, h, false);
  }
  if (x.quirk) x.Norm("model.decoder.final_layer_norm");
}

// --- MPT hook ----------------------------------------------------------------------------------
void MptExpansionAssumption(ClassicBuild& x) {
  const uint64_t expansion = Get(x.b, x.c.UintOr("expansion_ratio", 4));
  if (expansion == 4) return;
  x.b.model().assumptions.push_back(fmt::format(
      "expansion_ratio {} taken from the config as MosaicML's code does; transformers' MptMLP "
      "hard-codes 4 and cannot load such a checkpoint", expansion));
}

// --- Falcon hooks ------------------------------------------------------------------------------
// The layouts: new_decoder_architecture (40B/180B: num_kv_heads grouped key and value heads),
// multi_query (7B: one key/value head; the spec's multi_query_key), or classic multi-head. 4.42's
// norms: two parallel ones (ln_attn, ln_mlp) when the new layout leaves num_ln_in_parallel_attn
// unset or sets it to 2; one input_layernorm otherwise; sequential blocks (parallel_attn false)
// have two.
void FalconReadLayout(ClassicBuild& x) {
  // RefinedWeb (40B) always had the new decoder layout; RefinedWebModel (7B) the old one.
  const bool refined_web = x.c.model_type() == "RefinedWeb";
  x.quirk = Get(x.b, x.c.BoolOr("new_decoder_architecture", refined_web));
  if (!Get(x.b, x.c.BoolOr("parallel_attn", true))) {
    x.pre_norms = {"post_attention_layernorm", "input_layernorm"};
  }
}

void FalconLayout(ClassicBuild& x) {
  ModelBuilder& b = x.b;
  const HfConfig& c = x.c;
  Hyperparameters& hp = x.hp();
  const bool new_arch = x.quirk;
  if (new_arch && c.Has("num_kv_heads")) {
    hp.num_kv_heads = Get(b, c.Uint("num_kv_heads"));
  } else if (new_arch) {
    hp.num_kv_heads = Get(b, c.UintOr("n_head_kv", hp.num_attention_heads));
  }
  const uint64_t parallel_norms = Get(b, c.UintOr("num_ln_in_parallel_attn", new_arch ? 2 : 1));
  const bool parallel_attn = x.pre_norms[1].empty();
  if (parallel_attn && parallel_norms == 2) x.pre_norms = {"ln_attn", "ln_mlp"};
  if (b.failed()) return;
  if (hp.num_kv_heads == 0 || hp.num_attention_heads % hp.num_kv_heads != 0) {
    b.Fail(MakeError("{}: \"num_attention_heads\" = {} is not a multiple of \"num_kv_heads\" = {}",
                     c.where(), hp.num_attention_heads, hp.num_kv_heads));
  }
}

// The tiiuae .bin shards (custom-code era, transformers 4.27) hold lm_head.weight as a second
// copy of the tied embedding: stored twice, resident once.
void FalconHead(ClassicBuild& x) {
  ClassicHead(x);
  const bool tied = x.head == HeadKind::kCausalLm && x.hp().tie_word_embeddings;
  if (!tied || !TransformersVersionBefore(x.c, 4, 28) || x.b.failed()) return;
  x.b.model().tensors.back().stored = true;
  x.b.model().assumptions.push_back(
      "a Falcon checkpoint saved by transformers < 4.28 is assumed to store the tied "
      "lm_head.weight a second time (as tiiuae's .bin shards do); it is loaded once");
}

// --- InternLM2 hook ---------------------------------------------------------------------------
// InternLM2ForCausalLM's head is "output" (tied to tok_embeddings with tie_word_embeddings); the
// remote code has no other head but the bare model.
void InternLm2Head(ClassicBuild& x) {
  std::string cls = x.o.head_class;
  if (cls.empty()) {
    auto archs = x.c.architectures();
    cls = archs.empty() ? "ForCausalLM" : archs.front();
  }
  if (cls.ends_with("ForCausalLM")) {
    LmHead(x.b, "model.tok_embeddings", false, "output");
  } else if (!cls.ends_with("Model")) {
    x.b.Fail(MakeError("{}: head class \"{}\" is not supported for internlm2 (causal LM only); the "
                       "safetensors headers give an exact answer", x.c.where(), cls));
  }
}

}  // namespace

// --- The rows ----------------------------------------------------------------------------------

// GPT-2 (gpt2, DialoGPT, distilgpt2, gpt2-xl): transformers' modeling_gpt2.py. lm_head tied to
// wte; Conv1D projections, whose weight is [in, out]. Every attention module registers two
// non-persistent buffers, the causal mask `bias` and `masked_bias`: transformers 4.42 has them
// (accelerate counts the bool mask at 1/8 byte per element) and so do the 4.4x releases memfit
// calls current. Positions are learned (wpe). Dropout defaults 0.1. Hooks: cross attention and
// GPT2DoubleHeadsModel.
const ClassicDecoderSpec kGpt2Spec = GptConfigKeys({
    .family = "gpt2", .dropout = 0.1, .tie_default = true, .act_default = "gelu_new",
    .learned_pos = "wpe", .conv1d = true, .mask = BufferWhen::kAlways,
    .read = Gpt2ReadCrossAttention, .layer = Gpt2CrossAttention, .head = Gpt2Head});

// GPTBigCode (SantaCoder, StarCoder, StarCoderBase, WizardCoder): transformers'
// modeling_gpt_bigcode.py. GPT-2's names, but nn.Linear projections. Multi-query attention by
// default ("multi_query": true): c_attn emits every head's queries plus one shared key and value
// head. One buffer, in 4.42 and in current releases: the model-level causal mask transformer.bias
// (bool [n_positions, n_positions], non-persistent). Positions are learned (wpe). No QA head.
const ClassicDecoderSpec kGptBigcodeSpec = GptConfigKeys({
    .family = "gpt_bigcode", .multi_query_key = "multi_query", .dropout = 0.1,
    .tie_default = true, .act_default = "gelu_pytorch_tanh", .learned_pos = "wpe",
    .model_mask = true, .qa_head = false});

// GPT-NeoX (Pythia, GPT-NeoX-20B, OpenAssistant fine-tunes): transformers' modeling_gpt_neox.py.
// gpt_neox.{embed_in, layers.N.{input_layernorm, post_attention_layernorm,
// attention.{query_key_value, dense}, mlp.{dense_h_to_4h, dense_4h_to_h}}, final_layer_norm},
// embed_out (untied by default). Rotary over the first rotary_pct of each head. Buffers
// (non-persistent), by transformers release:
// - 4.42: per attention module `bias`, `masked_bias` and rotary_emb.{inv_freq, cos_cached,
//   sin_cached};
// - 4.45-4.48: per attention module `bias`, `masked_bias` and rotary_emb.inv_freq, plus the
//   model-level gpt_neox.rotary_emb.inv_freq (read at v4.45.0, v4.47.0 and v4.48.3; measured:
//   validation/results/cpu-torch1.13-tf4.48-slopes.csv, s-nx-*);
// - 4.49 and later: the model-level gpt_neox.rotary_emb.inv_freq only (GPTNeoXAttention lost
//   `_init_bias`; the checkpoints' attention.bias keys are ignored on load).
const ClassicDecoderSpec kGptNeoxSpec{
    .family = "gpt_neox", .pos_default = 2048, .base = "gpt_neox", .embed = "embed_in",
    .layers = "layers", .pre_norms = {"input_layernorm", "post_attention_layernorm"},
    .mid_norm = "", .final_norm = "final_layer_norm", .attn = "attention",
    .proj = {"query_key_value", "dense", "", ""}, .qkv_bias = {"attention_bias", true},
    .o_bias = {"attention_bias", true}, .mlp_proj = {"dense_h_to_4h", "dense_4h_to_h", ""},
    .mask = BufferWhen::kBefore449, .buffers_first = true, .layer_rope = BufferWhen::kBefore449,
    .rope_cached = true, .rope_model = true, .rotary = RotaryWidth::kRotaryPct,
    .rotary_default = 0.25, .lm_head = "embed_out", .setup = GptNeoxOldCheckpointNote};

// GPT-J (EleutherAI/gpt-j-6b and fine-tunes): transformers' modeling_gptj.py. One LayerNorm per
// block (attention and MLP run in parallel on it), attn.{k_proj, v_proj, q_proj, out_proj}
// without biases, mlp.{fc_in, fc_out}; lm_head with a bias, untied. Rotary on the first
// rotary_dim dimensions of each head. 4.42-4.44: the attention's causal mask buffers `bias` and
// `masked_bias`, which accelerate counts; 4.45 and later: none, but the sinusoidal table (hook).
// GPTJForQuestionAnswering: Linear(hidden, num_labels), unlike most families' fixed 2.
const ClassicDecoderSpec kGptjSpec = GptConfigKeys({
    .family = "gptj", .dropout = 0.0, .act_default = "gelu_new", .mid_norm = "",
    .attn_form = AttnForm::kSplitKvFirst, .proj = {"q_proj", "k_proj", "v_proj", "out_proj"},
    .qkv_bias = {}, .o_bias = {}, .mlp_proj = {"fc_in", "fc_out", ""},
    .mask = BufferWhen::k442, .buffers_first = true,
    .lm_bias = true, .qa_labels = true, .setup = GptjRotaryDim,
    .layer_buffers = GptjPositionTable});

// OPT (facebook/opt-125m .. opt-66b, Galactica): transformers' modeling_opt.py.
// model.decoder.{embed_tokens [vocab, word_embed_proj_dim], embed_positions [max_pos + 2, hidden]
// (learned, offset by 2: fairseq's padding), [project_out, project_in], [final_layer_norm],
// layers.N.{self_attn.{k,v,q,out}_proj, self_attn_layer_norm, fc1, fc2, final_layer_norm}},
// lm_head tied to embed_tokens. "enable_bias" for every Linear, "layer_norm_elementwise_affine"
// for every norm. No buffers. No token-classification head.
const ClassicDecoderSpec kOptSpec{
    .family = "opt", .inter_key = "ffn_dim", .tie_default = true,
    .act_key = "activation_function", .act_default = "relu", .base = "model",
    .embed = "decoder.embed_tokens", .learned_pos = "decoder.embed_positions", .pos_offset = 2,
    .layers = "decoder.layers", .pre_norms = {"", ""}, .mid_norm = "self_attn_layer_norm",
    .post_norm = "final_layer_norm", .final_norm = "",
    .norm_affine_key = "layer_norm_elementwise_affine", .attn = "self_attn",
    .attn_form = AttnForm::kSplitKvFirst, .proj = {"q_proj", "k_proj", "v_proj", "out_proj"},
    .qkv_bias = {"enable_bias", true}, .o_bias = {"enable_bias", true}, .mlp = "",
    .mlp_proj = {"fc1", "fc2", ""}, .mlp_bias = {"enable_bias", true}, .token_head = false,
    .read = OptReadProjectionAndFinalNorm, .after_embed = OptProjectionsAndFinalNorm};

// BLOOM (bigscience/bloom-560m .. bloom 176B, bloomz): transformers' modeling_bloom.py.
// transformer.{word_embeddings, word_embeddings_layernorm, h.N.{input_layernorm,
// self_attention.{query_key_value, dense}, post_attention_layernorm, mlp.{dense_h_to_4h,
// dense_4h_to_h}}, ln_f}, lm_head tied. BloomConfig: "n_embed" (old configs) overrides
// "hidden_size"; "n_layer"/"n_head" are attribute-mapped. BloomMLP is a fixed 4 x hidden, gelu.
// ALiBi positions, computed in forward: no buffers at all. The 176B checkpoint was saved from
// BloomModel, so its tensor names lack the "transformer." prefix; sizes are the same.
const ClassicDecoderSpec kBloomSpec{
    .family = "bloom", .hidden_key = "n_embed", .hidden_alt = "hidden_size",
    .layers_key = "n_layer", .layers_alt = "num_hidden_layers", .heads_alt = "n_head",
    .heads_name = "n_head", .width = Width::k4H, .pos_key = "", .tie_default = true,
    .act_key = "", .embed = "word_embeddings", .embed_norm = "word_embeddings_layernorm",
    .pre_norms = {"input_layernorm", ""}, .mid_norm = "post_attention_layernorm",
    .attn = "self_attention", .proj = {"query_key_value", "dense", "", ""},
    .mlp_proj = {"dense_h_to_4h", "dense_4h_to_h", ""}};

// MPT (mosaicml/mpt-7b, mpt-30b and their instruct/chat variants): transformers' modeling_mpt.py.
// transformer.{wte, blocks.N.{norm_1, attn.{Wqkv, out_proj}, norm_2, ffn.{up_proj, down_proj}},
// norm_f}, lm_head tied. No biases anywhere (norms included: transformers sets norm.bias = None
// "for backward compatibility with weights on the Hub"). ALiBi positions, no positional embedding
// and no buffers. Multi-head only (attn_config's kv_n_heads is not read). MptConfig: d_model,
// n_heads, n_layers, max_seq_len, expansion_ratio (transformers hard-codes 4; memfit follows the
// config, as the checkpoint does, and says so).
const ClassicDecoderSpec kMptSpec{
    .family = "mpt", .hidden_key = "d_model", .hidden_alt = "hidden_size",
    .layers_key = "n_layers", .layers_alt = "num_hidden_layers", .heads_key = "n_heads",
    .heads_alt = "num_attention_heads", .width = Width::kRatio, .inter_key = "expansion_ratio",
    .pos_key = "max_seq_len", .pos_default = 2048, .tie_default = true, .act_key = "",
    .layers = "blocks", .pre_norms = {"norm_1", ""}, .mid_norm = "norm_2", .final_norm = "norm_f",
    .norm = NormKind::kLayerNormNoBias, .proj = {"Wqkv", "out_proj", "", ""}, .qkv_bias = {},
    .o_bias = {}, .mlp = "ffn", .mlp_proj = {"up_proj", "down_proj", ""}, .mlp_bias = {},
    .setup = MptExpansionAssumption};

// Falcon (tiiuae/falcon-7b/40b/180b, Falcon2-11B, and the original RefinedWeb / RefinedWebModel
// configs of the custom-code era): transformers' modeling_falcon.py.
// transformer.{word_embeddings, h.N.{norms (FalconLayout), self_attention.{query_key_value,
// dense}, mlp.{dense_h_to_4h, dense_4h_to_h}}, ln_f}, lm_head tied. "bias" applies to every
// Linear; "alibi" replaces rotary. Buffers (non-persistent, float32) unless alibi: 4.42 per
// attention module rotary_emb.{inv_freq [head_dim / 2], cos_cached, sin_cached
// [max_position_embeddings, head_dim]}; current releases one transformer.rotary_emb.inv_freq.
const ClassicDecoderSpec kFalconSpec{
    .family = "falcon", .layers_alt = "n_layer", .heads_alt = "n_head", .width = Width::kKeyOr4H,
    .inter_key = "ffn_hidden_size", .pos_default = 2048, .multi_query_key = "multi_query",
    .tie_default = true, .act_key = "activation", .embed = "word_embeddings",
    .pre_norms = {"input_layernorm", ""}, .mid_norm = "", .attn = "self_attention",
    .proj = {"query_key_value", "dense", "", ""}, .qkv_bias = {"bias", false},
    .o_bias = {"bias", false}, .mlp_proj = {"dense_h_to_4h", "dense_4h_to_h", ""},
    .mlp_bias = {"bias", false}, .layer_rope = BufferWhen::k442, .rope_cached = true,
    .rope_model = true, .alibi_key = "alibi", .read = FalconReadLayout, .setup = FalconLayout,
    .head = FalconHead};

// LayerNorm decoders with partial rotary embeddings (transformers/models/{phi,stablelm,
// starcoder2}/modeling_*.py): model.{embed_tokens, layers.N.{input_layernorm,
// self_attn.{q,k,v,o}_proj, mlp, [post_attention_layernorm]}, norm}; 4.42: one rotary inv_freq
// per attention module, later one model.rotary_emb.inv_freq.
// phi (phi-1, phi-1.5, phi-2): parallel attention + fc1/fc2 MLP after one LayerNorm,
// self_attn.dense output, optional q/k LayerNorms ("qk_layernorm"), final_layernorm, biased
// lm_head; partial_rotary_factor 0.5.
const ClassicDecoderSpec kPhiSpec{
    .family = "phi", .kit_basics = true, .act_default = "gelu_new", .quantized = true,
    .base = "model", .embed = "embed_tokens", .layers = "layers",
    .pre_norms = {"input_layernorm", ""}, .mid_norm = "", .final_norm = "final_layernorm",
    .attn = "self_attn", .attn_form = AttnForm::kSplit,
    .proj = {"q_proj", "k_proj", "v_proj", "dense"}, .qk_norm = QkNormForm::kLayerNorm,
    .mlp_proj = {"fc1", "fc2", ""}, .layer_rope = BufferWhen::k442, .rope_model = true,
    .rotary = RotaryWidth::kPartialFactor, .rotary_default = 0.5,
    .task_head = true, .lm_bias = true};

// stablelm (StableLM 2 / Zephyr): gated MLP, no biases but "use_qkv_bias", optional per-head
// q/k LayerNorms, optional parallel residual ("use_parallel_residual"); partial_rotary_factor
// 0.25.
const ClassicDecoderSpec kStableLmSpec{
    .family = "stablelm", .kit_basics = true, .act_default = "silu",
    .quantized = true, .base = "model", .embed = "embed_tokens", .layers = "layers",
    .pre_norms = {"input_layernorm", ""}, .mid_norm = "", .post_norm = "post_attention_layernorm",
    .parallel_key = "use_parallel_residual", .final_norm = "norm", .attn = "self_attn",
    .attn_form = AttnForm::kSplit, .proj = {"q_proj", "k_proj", "v_proj", "o_proj"},
    .qkv_bias = {"use_qkv_bias", false}, .o_bias = {}, .qk_norm = QkNormForm::kPerHead,
    .mlp_proj = {"gate_proj", "up_proj", "down_proj"}, .gated = true, .mlp_bias = {},
    .layer_rope = BufferWhen::k442, .rope_model = true, .rotary = RotaryWidth::kPartialFactor,
    .rotary_default = 0.25, .task_head = true};

// stablelm_epoch (StableLM-3B-4E1T and the first StableLM 2 releases, remote code
// modeling_stablelm_epoch.py): stablelm's tensors; StableLMEpochConfig "rope_pct" (default 0.25)
// plays partial_rotary_factor's part.
const ClassicDecoderSpec kStableLmEpochSpec = [] {
  ClassicDecoderSpec s = kStableLmSpec;
  s.rotary_default_key = "rope_pct";
  return s;
}();

// starcoder2: biased projections ("use_bias"), c_fc/c_proj MLP, sliding window
// ("sliding_window"), tied embeddings, the whole head rotary.
const ClassicDecoderSpec kStarcoder2Spec{
    .family = "starcoder2", .kit_basics = true, .tie_default = true,
    .act_default = "gelu_new", .quantized = true, .base = "model", .embed = "embed_tokens",
    .layers = "layers", .pre_norms = {"input_layernorm", ""}, .mid_norm = "",
    .post_norm = "post_attention_layernorm", .final_norm = "norm", .attn = "self_attn",
    .attn_form = AttnForm::kSplit, .proj = {"q_proj", "k_proj", "v_proj", "o_proj"},
    .qkv_bias = {"use_bias", true}, .o_bias = {"use_bias", true}, .window_key = "sliding_window",
    .mlp_bias = {"use_bias", true}, .layer_rope = BufferWhen::k442, .rope_model = true,
    .rotary = RotaryWidth::kPartialFactor, .task_head = true};

// InternLM2 / InternLM2.5 (remote code, InternLM2ForCausalLM; internlm/internlm2-7b
// modeling_internlm2.py and its weight index): model.{tok_embeddings, layers.N.{attention_norm,
// attention.{wqkv, wo}, ffn_norm, feed_forward.{w1, w3, w2}}, norm} (RMSNorms), output. "bias"
// (default true) gives wqkv and wo biases. 4.42: the remote code's rotary embedding caches
// float32 inv_freq and cos/sin per attention module; nothing later.
const ClassicDecoderSpec kInternLm2Spec{
    .family = "internlm2", .kit_basics = true, .act_default = "silu",
    .quantized = true, .base = "model", .embed = "tok_embeddings", .layers = "layers",
    .pre_norms = {"attention_norm", ""}, .mid_norm = "ffn_norm", .final_norm = "norm",
    .norm = NormKind::kRmsNorm, .attn = "attention", .proj = {"wqkv", "wo", "", ""},
    .qkv_bias = {"bias", true}, .o_bias = {"bias", true}, .mlp = "feed_forward",
    .mlp_proj = {"w1", "w3", "w2"}, .gated = true, .mlp_bias = {},
    .layer_rope = BufferWhen::k442, .rope_cached = true, .task_head = true,
    .head = InternLm2Head};

const std::vector<ArchitectureBuilder>& ClassicFamilyBuilders() {
  static const std::vector<ArchitectureBuilder> kRows = {
      {"gpt2", "", BuildRow<BuildClassic, kGpt2Spec>, "gpt2"},
      {"gpt_neox", "", BuildRow<BuildClassic, kGptNeoxSpec>, "gpt_neox"},
      {"gptj", "", BuildRow<BuildClassic, kGptjSpec>, "gptj"},
      {"gpt_bigcode", "", BuildRow<BuildClassic, kGptBigcodeSpec>, "gpt_bigcode"},
      {"opt", "", BuildRow<BuildClassic, kOptSpec>, "opt"},
      {"bloom", "", BuildRow<BuildClassic, kBloomSpec>, "bloom"},
      {"falcon", "", BuildRow<BuildClassic, kFalconSpec>, "falcon"},
      {"RefinedWeb", "", BuildRow<BuildClassic, kFalconSpec>, "falcon"},
      {"RefinedWebModel", "", BuildRow<BuildClassic, kFalconSpec>, "falcon"},
      {"mpt", "", BuildRow<BuildClassic, kMptSpec>, "mpt"},
      {"phi", "", BuildRow<BuildClassic, kPhiSpec>, "phi"},
      {"stablelm", "", BuildRow<BuildClassic, kStableLmSpec>, "stablelm"},
      {"stablelm_epoch", "", BuildRow<BuildClassic, kStableLmEpochSpec>, "stablelm"},
      {"starcoder2", "", BuildRow<BuildClassic, kStarcoder2Spec>, "starcoder2"},
      {"internlm2", "", BuildRow<BuildClassic, kInternLm2Spec>, "internlm2"},
  };
  return kRows;
}

}  // namespace memfit::arch
