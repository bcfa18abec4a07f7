#pragma once
// Quantized linear layers as checkpoints store them, from config.json "quantization_config":
// bitsandbytes int8 (weight int8 + SCB + weight_format), bitsandbytes 4-bit (packed uint8 weight +
// absmax, quant_map, optional nested statistics, packed quant_state), GPTQ and AWQ packed int32
// tensors (qweight, qzeros, scales, g_idx), and fp8 with block scales (weight_scale_inv).
// Sources: bitsandbytes/nn/modules.py (Int8Params, Params4bit, QuantState.as_dict),
// auto_gptq/nn_modules/qlinear, awq/modules/linear/gemm.py, transformers/integrations/finegrained_fp8.py.

#include <cstdint>
#include <memory>
#include <regex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "formats/hf_config_json.h"
#include "memfit/architecture.h"
#include "model/arch/builder_kit.h"

namespace memfit::arch {

enum class QuantMethod : uint8_t {
  kNone, kBnbInt8, kBnb4Bit, kGptq, kAwq, kFp8Block, kMxfp4,
  kNvfp4,      // NVIDIA ModelOpt / compressed-tensors NVFP4: E2M1 values two per byte, an E4M3
               // scale per 16, float32 weight_scale_2 and input_scale per tensor
  kFp8Tensor,  // FP8 with a float32 scale per tensor (per output channel with `per_channel`)
               // and a float32 input_scale (ModelOpt FP8, compressed-tensors float-quantized)
  kMixed,      // ModelOpt MIXED_PRECISION: the method of each module in `per_module`
  kPackedInt,  // compressed-tensors "pack-quantized" W4A16/W8A16: int32 weight_packed
               // [out, in x bits / 32], weight_scale [out, groups] in the model dtype, int64
               // weight_shape [2], int32 weight_zero_point [out x bits / 32, groups] if asymmetric
  kMxfp4Packed,  // compressed-tensors "mxfp4-pack-quantized": uint8 weight_packed [out, in/2]
                 // (two E2M1 values a byte), uint8 (E8M0) weight_scale [out, in/32]
  kMxfp8,      // ModelOpt MXFP8 (in MIXED_PRECISION "quantized_layers"): float8_e4m3fn weight
               // [out, in] and a uint8 E8M0 weight_scale per 32 inputs [out, in/32]
  kMlx,        // MLX (mlx-lm): "quantization" {group_size, bits, mode}; ModelBuilder::Linear and
               // ::Embedding store the weights (mlx_quantization.h), QLinear defers to them
};

// The skip list compiled once for SkipsModule: each '*' pattern filed under its literal prefix
// (the text before its first '*'), so a module is tested only against the patterns that can match
// it: one hash lookup per distinct prefix length instead of every pattern. NVFP4 releases list a
// few hundred patterns and build ~10^5 expert linears (docs/architectures.md).
struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};
struct SkipIndex {
  std::vector<std::string> plain;           // patterns without '*': matched as substrings
  // compressed-tensors "re:" patterns (Python re.match: anchored at the start) that are not
  // simple enough to become '*' patterns (".*", "\\.", one level of (a|b) alternation).
  std::vector<std::regex> regexes;
  std::vector<size_t> prefix_lengths;       // distinct literal-prefix lengths, ascending
  std::unordered_map<std::string, std::vector<std::string>, StringHash, std::equal_to<>>
      by_prefix;  // prefix -> patterns
};

struct Quantization {
  QuantMethod method = QuantMethod::kNone;
  uint64_t bits = 16;
  uint64_t group_size = 0;            // GPTQ/AWQ; 0 = the whole input dimension
  uint64_t block_out = 0, block_in = 0;  // fp8 weight_block_size
  bool double_quant = false;          // bnb 4-bit bnb_4bit_use_double_quant
  std::string quant_type = "nf4";     // bnb 4-bit fp4 | nf4
  std::vector<std::string> skip;      // modules_to_not_convert / llm_int8_skip_modules / ignore
  bool per_channel = false;           // kFp8Tensor: weight_scale [out, 1]
  // kFp8Tensor: a float32 input_scale is stored (static activation scales). compressed-tensors
  // with dynamic (or no) input activations stores none (FP8_DYNAMIC releases).
  bool input_scale = true;
  bool zero_point = false;            // kPackedInt: asymmetric (weight_zero_point stored)
  // kMixed: module path -> its method (kNvfp4, kFp8Tensor or kMxfp8); modules not listed stay
  // unquantized.
  std::vector<std::pair<std::string, QuantMethod>> per_module;
  // `skip` compiled (ReadQuantization sets it; SkipsModule compiles `skip` itself when absent).
  std::shared_ptr<const SkipIndex> skip_index;
  // The names the checkpoint gives the modules of a language model that a text builder builds
  // inside a composite model (multimodal_kit.h CarryQuantization): a module whose built name
  // starts with `first` is looked up in `skip` and `per_module` as `second` + the rest of its
  // name, under every alias whose `first` matches ("model." -> "model.language_model.",
  // "lm_head" -> "language_model.lm_head"); names no alias covers are looked up as built. Read
  // from the kModuleAliasesKey entry of the quantization_config the composite builder hands on.
  std::vector<std::pair<std::string, std::string>> module_aliases;
};

// The quantization_config entry (an array of [built prefix, checkpoint prefix] pairs) through
// which a composite builder gives its text builder Quantization::module_aliases. memfit writes it
// into the text sub-config it builds; it is not a field of any release's config.json.
inline constexpr const char* kModuleAliasesKey = "memfit_module_aliases";

SkipIndex IndexSkips(const std::vector<std::string>& skip);

// Reads "quantization_config" (kMlx for an MLX block, mlx_quantization.h; none when absent, or
// when options.ignore_quantization is set: accelerate's create_empty_model builds the unquantized
// model). Unknown methods fail the builder with an error naming the field.
Quantization ReadQuantization(ModelBuilder& b, const HfConfig& config, const BuildOptions& options);

// The checkpoint names of a built module name under q.module_aliases (the name itself when no
// alias covers it).
std::vector<std::string> CheckpointNames(const Quantization& q, const std::string& module);

// True when `module` (a dotted path) is excluded by the skip list: a pattern with '*' segments
// matching the path or one of its ancestors, or a plain name contained in the path (transformers
// matches skip keys as substrings). With module_aliases, the checkpoint names of `module` are
// tested (any of them excluded: excluded).
bool SkipsModule(const Quantization& q, const std::string& module);

// nn.Linear(in, out) as the checkpoint stores it under `q` (plain Linear when not quantized or
// when `module` is skipped). Parameters that stay in floating point use the builder's dtype.
void QLinear(ModelBuilder& b, const Quantization& q, const std::string& module, uint64_t in,
             uint64_t out, bool bias);

// A gated (SwiGLU-style) MLP under `prefix` as the checkpoint stores it under `q`: gate_proj and
// up_proj [width, hidden], down_proj [hidden, width], each through QLinear.
void QGatedMlp(ModelBuilder& b, const Quantization& q, const std::string& prefix, uint64_t hidden,
               uint64_t width, bool bias = false);

// Records in the model's notes what the quantization means for the counts.
void NoteQuantization(ModelBuilder& b, const Quantization& q);

}  // namespace memfit::arch
