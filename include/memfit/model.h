#pragma once
// The model description shared by every estimator: tensors (from headers or an architecture
// builder), hyperparameters, indivisible blocks, and what was assumed along the way.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "memfit/dtype.h"
#include "memfit/result.h"

namespace memfit {

enum class TensorKind : uint8_t {
  kParameter,
  kBuffer,                // persistent buffer: in the state dict
  kNonPersistentBuffer,   // e.g. rotary "inv_freq": resident, normally not in the checkpoint
};

struct Tensor {
  std::string name;             // checkpoint name, e.g. "model.layers.0.self_attn.q_proj.weight"
  std::vector<uint64_t> shape;  // outermost first, as in safetensors and PyTorch
  Dtype dtype = Dtype::kF32;
  std::string dtype_label{};    // display name: DtypeName(dtype), or a GGUF type such as "Q4_K"
  uint64_t numel = 0;           // stored elements (packed ones for packed quantized formats)
  uint64_t bytes = 0;           // storage bytes (exact for headers, overflow-checked)
  // Parameters of the unquantized model this tensor stands for, when they differ from numel:
  // a packed weight (NVFP4, MXFP4, bitsandbytes 4-bit, GPTQ/AWQ/pack-quantized int32) counts
  // out x in; quantization metadata (scales, zero points, g_idx) counts 0. nullopt: numel.
  // See LogicalParams and docs/architectures.md "Logical parameter counts".
  std::optional<uint64_t> logical_params{};
  TensorKind kind = TensorKind::kParameter;
  bool in_head = false;   // belongs to the task head (lm_head, classifier): absent from AutoModel
  std::string tied_to{};  // shares storage with this tensor (tied embeddings): resident once
  bool stored = true;     // present in the checkpoint files
  std::string component{};  // multimodal component ("vision_tower", ...); "" for single models
  // In the base AutoModel but not in architectures[0]'s class (BertForMaskedLM builds BertModel
  // without its pooler): counted only in base-model views (include_head = false), never stored.
  bool base_only = false;
  // A tie that accelerate's init_empty_weights breaks (the parameter is re-created on the meta
  // device, e.g. BART's encoder/decoder embed_tokens): its view counts the tensor again.
  bool tie_broken_on_meta = false;
  // false: stored in the checkpoint but never loaded by transformers (DeepSeek-V3's
  // multi-token-prediction layer): counted in stored bytes only.
  bool loaded = true;
  // The compact form of repeated modules (BuildOptions::compact_repeats; docs/benchmarks.md): a
  // run of `repeat_span` tensors, opened by this one, stands for `copies` copies of itself (a
  // layer's routed experts) that differ only in the index "0" at
  // name[name.size() - repeat_index_from_end] (counted from the end, so that a builder that puts
  // a prefix before the names keeps it). Every tensor of the run has `copies` and
  // `repeat_index_from_end` set; sums multiply by `copies`. A model without repeats has
  // copies == 1 everywhere; ExpandRepeats writes every copy out.
  uint64_t copies = 1;
  uint32_t repeat_span = 0;
  uint32_t repeat_index_from_end = 0;
};

// The parameters a tensor counts in parameter totals: Tensor::logical_params, else numel.
inline uint64_t LogicalParams(const Tensor& t) { return t.logical_params.value_or(t.numel); }

// The name of copy `k` of a tensor in a compact run (Tensor::copies): its name with the index
// "0" replaced by k.
std::string RepeatCopyName(const Tensor& t, uint64_t k);

enum class AttentionKind : uint8_t {
  kFull,     // global attention over the whole context
  kSliding,  // sliding-window attention (window in LayerInfo::window_tokens)
  kMla,      // multi-head latent attention (DeepSeek-V2/V3): compressed KV cache
  kNone,     // no KV cache (linear attention, Mamba, or no attention)
  kChunked,  // chunked local attention (Llama 4 "attention_chunk_size"): at most one chunk cached
};

// What mixes tokens in a layer. Attention layers keep a KV cache; the others keep a fixed
// per-sequence state (LayerInfo::state). Names as printed: LayerMixerName.
enum class LayerMixer : uint8_t {
  kAttention,
  kMamba,          // Mamba-1 selective SSM (Falcon-Mamba, Jamba)
  kMamba2,         // Mamba-2 SSD (Nemotron-H, Falcon-H1, Granite-4 hybrid, Zamba2)
  kGatedDeltaNet,  // gated delta-net linear attention (Qwen3-Next, Qwen3.5/3.6)
  kKimiDelta,      // Kimi delta attention (Kimi-Linear, Kimi-K3)
  kShortConv,      // gated short convolution (LFM2)
  kLinearAttention,  // lightning / plain linear attention (MiniMax-01/M1)
  kNone,           // no token mixer (an MLP-only or MoE-only layer of a hybrid pattern)
};
std::string_view LayerMixerName(LayerMixer mixer);

// The fixed per-sequence state of a non-attention layer, in elements. Engines differ in what
// they keep (transformers keeps conv_kernel conv steps, vLLM and llama.cpp conv_kernel - 1); the
// estimators apply that, so these are the layer's dimensions, not a byte count.
struct RecurrentState {
  uint64_t conv_channels = 0;  // channels of the causal conv1d state (split under TP)
  uint64_t conv_kernel = 0;    // its kernel width ("conv_kernel", "linear_conv_kernel_dim", ...)
  uint64_t heads = 0;          // heads of the recurrent state (split under TP)
  uint64_t elements_per_head = 0;  // Mamba2: head_dim x d_state; delta-net: d_k x d_v
  uint32_t state_bits = 0;     // recurrent state element bits; 0 = the model dtype
                               // ("mamba_ssm_cache_dtype": float32 -> 32)
};

// Per decoder layer facts that KV-cache and activation estimates need.
struct LayerInfo {
  AttentionKind attention = AttentionKind::kFull;
  LayerMixer mixer = LayerMixer::kAttention;
  uint64_t num_heads = 0;
  uint64_t num_kv_heads = 0;
  uint64_t head_dim_k = 0;
  uint64_t head_dim_v = 0;
  uint64_t window_tokens = 0;  // for kSliding (window) and kChunked (chunk size)
  bool moe = false;            // routed-expert MLP in this layer
  uint64_t intermediate_size = 0;  // dense MLP width (0 for MoE layers)
  // Encoder-decoder decoder layers also attend to the encoder output: a second K/V cache of
  // Hyperparameters::encoder_max_positions tokens (T5, BART, Whisper), same heads and head dims.
  bool cross_attention = false;
  bool recurrent = false;      // keeps a recurrent state (Mamba, RWKV, DeltaNet, short conv)
  RecurrentState state{};      // for recurrent layers (filled from configs; GGUF uses hp.ssm_*)
  // DeepSeek sparse attention (DeepSeek-V3.2, GLM-5 "glm_moe_dsa"): the lightning indexer keeps
  // its own key cache of "index_head_dim" elements per token besides the MLA cache.
  uint64_t indexer_head_dim = 0;
  // DeepSeek-V4 compressed attention ("compress_ratios"): one compressed KV entry per
  // compress_ratio tokens besides the sliding window; 0 = window only.
  uint64_t compress_ratio = 0;
  // K and V are one tensor (Gemma 4 "attention_k_eq_v" full-attention layers).
  bool k_eq_v = false;
  // Reuses the KV cache of an earlier layer (Gemma 3n/4 "num_kv_shared_layers"): none of its own.
  bool kv_shared = false;
};

// Hyperparameters, named after config.json keys (the GGUF key is given where it differs).
struct Hyperparameters {
  uint64_t hidden_size = 0;              // "hidden_size" / "n_embd" / "d_model"; GGUF embedding_length
  uint64_t num_layers = 0;               // decoder (or encoder-only) layers; GGUF block_count
  uint64_t num_attention_heads = 0;      // GGUF attention.head_count
  uint64_t num_kv_heads = 0;             // "num_key_value_heads"; GGUF attention.head_count_kv
  uint64_t head_dim = 0;                 // "head_dim" or hidden / heads; GGUF attention.key_length
  uint64_t intermediate_size = 0;        // GGUF feed_forward_length
  uint64_t vocab_size = 0;
  uint64_t max_position_embeddings = 0;  // GGUF context_length
  bool tie_word_embeddings = false;
  bool gated_mlp = false;                // SwiGLU / GeGLU: gate, up and down projections
  std::string activation;                // "silu", "gelu", "gelu_new", "relu", ...
  std::string norm;                      // "rmsnorm" or "layernorm"
  // Mixture of experts.
  uint64_t num_experts = 0;              // routed experts per MoE layer
  uint64_t experts_per_token = 0;        // "num_experts_per_tok"
  uint64_t num_shared_experts = 0;
  uint64_t moe_intermediate_size = 0;
  // Multi-head latent attention (DeepSeek-V2/V3).
  uint64_t kv_lora_rank = 0;
  uint64_t qk_rope_head_dim = 0;
  // Encoder-decoder models: num_layers is the decoder; these describe the encoder.
  bool is_encoder_decoder = false;
  uint64_t num_encoder_layers = 0;
  uint64_t encoder_max_positions = 0;    // e.g. Whisper's 1500 audio frames
  // Dropout probabilities active in training ("hidden_dropout_prob"/"resid_pdrop",
  // "attention_probs_dropout_prob"/"attn_pdrop"/"attention_dropout"); 0 when absent.
  double hidden_dropout = 0.0;
  double attention_dropout = 0.0;
  std::vector<LayerInfo> layers;         // one per decoder layer; filled by builders and readers
  // Attention details read from GGUF (llama.cpp hparams).
  bool causal = true;                    // GGUF attention.causal (false: embedding models)
  uint64_t sliding_window = 0;           // GGUF attention.sliding_window (n_swa)
  uint64_t leading_dense_layers = 0;     // GGUF leading_dense_block_count
  // Recurrent state sizes (llama.cpp hparams n_embd_r / n_embd_s inputs).
  uint64_t ssm_conv_kernel = 0;          // GGUF ssm.conv_kernel (d_conv)
  uint64_t ssm_inner_size = 0;           // GGUF ssm.inner_size (d_inner)
  uint64_t ssm_state_size = 0;           // GGUF ssm.state_size (d_state)
  uint64_t ssm_group_count = 0;          // GGUF ssm.group_count (n_group)
  // Mamba-2 SSD chunk length ("mamba_chunk_size" / "chunk_size"): transformers' torch path (no
  // mamba_ssm kernels, e.g. on CPU) keeps per-chunk products of chunk x chunk; 0 = not Mamba-2.
  uint64_t ssm_chunk_size = 0;
  uint64_t wkv_head_size = 0;            // GGUF wkv.head_size (RWKV)
  uint64_t token_shift_count = 0;        // GGUF token_shift_count (RWKV, default 2)
  uint64_t shortconv_l_cache = 0;        // GGUF shortconv.l_cache (LFM2)
  // Read from config.json by ReadTextHyperparameters (memfit/text_hparams.h).
  uint64_t q_lora_rank = 0;              // MLA "q_lora_rank" (0: plain q_proj)
  uint64_t qk_nope_head_dim = 0;         // MLA "qk_nope_head_dim"
  uint64_t v_head_dim = 0;               // MLA / MiMo "v_head_dim"
  uint64_t shared_expert_intermediate_size = 0;  // "shared_expert_intermediate_size" / ...
  uint64_t num_mtp_layers = 0;           // "num_nextn_predict_layers" / "mtp_num_hidden_layers"
  uint64_t index_topk = 0;               // DSA "index_topk" (bounds work, not the cache)
  // Where the text model's keys were found: "" (top level), "text_config", "llm_config", ...
  std::string text_config_key;
};

// A parsed JSON value; opaque outside the library (defined in src/formats/json.h).
struct JsonValue;

struct Model {
  std::string name;          // what the user asked for, or the resolved id
  std::string source;        // e.g. "safetensors headers (4 shards) + config.json"
  std::string model_type;    // config.json "model_type" or GGUF general.architecture
  std::string architecture;  // config.json "architectures"[0]
  std::vector<Tensor> tensors;
  Hyperparameters hp;
  // Module paths whose subtree is one indivisible block for device maps ("largest layer"), as
  // accelerate's _no_split_modules; '*' matches one path segment: "model.layers.*".
  std::vector<std::string> no_split_patterns;
  // The AutoModelFor* class named first in config.json "auto_map" (accelerate builds it).
  std::string auto_map_class;
  // transformers' base_model_prefix plus a dot ("model.", "bert.", "transformer."): the base
  // AutoModel's tensor names lack it. Empty when the checkpoint has no prefix.
  std::string base_model_prefix;
  std::optional<Dtype> config_dtype;  // config.json "torch_dtype"
  // config.json "quantization_config" (or hf_quant_config.json's), as parsed; null when absent.
  // Library code reads it through src/formats/json.h; shared by copies.
  std::shared_ptr<const JsonValue> quantization_config;
  std::optional<uint64_t> index_total_size;  // the weight index's metadata.total_size
  std::vector<std::string> assumptions;      // guesses made: always printed
  std::vector<std::string> notes;            // facts worth telling (mismatches, ties)
};

// Sums over a model's tensors (all overflow-checked at construction, so plain sums are safe up to
// 2^64; DescribeModel rejects models whose totals overflow).
struct ModelTotals {
  uint64_t stored_bytes = 0;       // what the checkpoint files hold
  uint64_t resident_bytes = 0;     // after loading: parameters once (ties shared) + all buffers
  uint64_t parameters = 0;         // logical parameters (LogicalParams), tied ones once
  uint64_t buffer_bytes = 0;       // resident buffers
  uint64_t head_parameters = 0;    // parameters of the task head (untied)
  uint64_t base_only_parameters = 0;  // in the base AutoModel only (Tensor::base_only)
  // The base AutoModel's parameters: parameters - head_parameters + base_only_parameters.
};
ModelTotals ComputeTotals(const Model& model);

// The compact form (Tensor::copies): whether the model has a compact run; the number of tensors it
// stands for; every copy written out, in the order the builder would have emitted them (copy 0's
// run, copy 1's, ...), each with copies == 1. Callers that walk tensor names (inspect, device maps,
// JSON tensor lists, plans) take expanded models; the load summary, totals and blocks take either.
bool HasRepeats(const Model& model);
uint64_t ExpandedTensorCount(const Model& model);
void ExpandRepeats(Model& model);
// Whether every compact run lies inside one no-split block (a module matching
// Model::no_split_patterns above the index): then the blocks of the compact and the expanded model
// are the same, and AssignBlocks may take the compact one.
bool RepeatsStayInBlocks(const Model& model);
// Totals per multimodal component (Tensor::component), in first-seen order; tensors without a
// component are grouped under "shared". Empty for single models.
std::vector<std::pair<std::string, ModelTotals>> ComponentTotals(const Model& model);

// Bounds that make every figure derived from a model fit in 64 bits with plain arithmetic: at
// most 2^56 elements (x 64 bits, x 18 B/param for AdamW, x 4 B at float32 all stay below 2^63)
// and 2^60 bytes in all. DescribeModel and ModelBuilder::Finish enforce them; a reader that makes
// a Model without DescribeModel must call CheckModelBounds. See docs/security.md.
inline constexpr uint64_t kMaxModelElements = uint64_t{1} << 56;
inline constexpr uint64_t kMaxModelBytes = uint64_t{1} << 60;
// An error naming `where` when the model's total elements or bytes exceed the bounds above.
Status CheckModelBounds(const Model& model, std::string_view where);

// One indivisible unit for "largest layer" and device maps.
struct Block {
  std::string name;  // module path, e.g. "model.layers.3" or "lm_head"
  uint64_t bytes = 0;
  uint64_t parameters = 0;
};

// Which tensors a view of the model counts.
struct TensorFilter {
  bool include_head = true;             // false: the base AutoModel (accelerate's default)
  bool include_buffers = true;
  bool include_unstored = true;         // tensors not in the checkpoint (non-persistent buffers)
  bool count_ties_once = true;          // false: a tied tensor counts again (accelerate quirk)
  bool count_broken_ties = false;       // true: ties with Tensor::tie_broken_on_meta count again
  // Size of one tensor in the caller's unit; empty: Tensor::bytes. (accelerate mode counts bits,
  // since it charges bool buffers 1/8 byte.)
  std::function<uint64_t(const Tensor&)> size_of{};
};
// The size a filter assigns to a tensor (0 when the filter excludes it).
uint64_t FilteredSize(const Tensor& tensor, const TensorFilter& filter);

// accelerate's get_max_layer_size traversal: the model's direct tensors and top-level modules are
// roots; a module with no child modules, or matching a no-split pattern, is one block; any other
// module is expanded. Returns blocks in depth-first order; Block::bytes is in the
// filter's unit.
std::vector<Block> IndivisibleBlocks(const Model& model, const TensorFilter& filter);

// The block each tensor belongs to, computed once per model and reused for every dtype view.
struct BlockAssignment {
  std::vector<std::string> names;     // block module paths, depth-first order
  std::vector<int32_t> tensor_block;  // per tensor: index into names, -1 if in no block
};
BlockAssignment AssignBlocks(const Model& model, const TensorFilter& filter);
// Block sizes for a filter's view over a precomputed assignment.
std::vector<Block> SumBlocks(const Model& model, const BlockAssignment& assignment,
                             const TensorFilter& filter);

// Largest of IndivisibleBlocks (first on ties); nullopt for an empty model.
std::optional<Block> LargestBlock(const Model& model, const TensorFilter& filter);

// True when the module path matches a pattern with '*' segments.
bool MatchesModulePattern(std::string_view path, std::string_view pattern);

}  // namespace memfit
