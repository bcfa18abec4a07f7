// DeepSeek-V4 (model_type "deepseek_v4", DeepseekV4ForCausalLM; SGLang's FP8 re-releases say
// "deepseek_ref"), as its checkpoints store it: deepseek-ai's own names and dtypes (DeepSeek-V4-
// Flash inference/model.py), which transformers' DeepseekV4ForCausalLM (models/deepseek_v4/
// modular_deepseek_v4.py) renames on load and whose "mtp.*" layers it never loads. Not an
// MlaFamilySpec row (mla_kit.h): its attention is one shared K=V head with a grouped low-rank
// output and per-layer compressors and indexers, every block carries hyper-connection mixers,
// the first layers route by hash and its storage (block FP8, FP4 experts) is its own.
// H = hidden_size, E = n_routed_experts, hc = hc_mult, D = head_dim:
//   embed.weight, head.weight [vocab, H]; norm.weight [H]; hc_head_fn [hc, hc x H],
//   hc_head_base [hc], hc_head_scale [1]
//   layers.{i}: attn_norm, ffn_norm [H]; hc_attn_fn, hc_ffn_fn [(2 + hc) x hc, hc x H],
//     hc_attn_base, hc_ffn_base [(2 + hc) x hc], hc_attn_scale, hc_ffn_scale [3]
//     attn: wq_a [q_lora_rank, H], q_norm [q_lora_rank], wq_b [heads x D, q_lora_rank], wkv
//       [D, H], kv_norm [D], wo_a [o_groups x o_lora_rank, heads x D / o_groups], wo_b
//       [H, o_groups x o_lora_rank], attn_sink [heads]
//     attn.compressor where r = compress_ratios[i] > 0, c = 2 when r == 4 else 1: wkv, wgate
//       [c x D, H], ape [r, c x D], norm [D]
//     attn.indexer where r == 4: wq_b [index_n_heads x index_head_dim, q_lora_rank],
//       weights_proj [index_n_heads, H], and a compressor as above at index_head_dim
//     ffn.gate.weight [E, H]; ffn.gate.tid2eid [vocab, num_experts_per_tok] in the first
//       num_hash_layers layers, else ffn.gate.bias [E]; ffn.experts.{e} and ffn.shared_experts
//       (model.py asserts n_shared_experts == 1): w1, w3 [moe_intermediate_size, H], w2 [H, same]
//   mtp.{k} (num_nextn_predict_layers; its compress_ratios entry is index num_hidden_layers + k,
//     0 past the list's end): a layer as above plus e_proj, h_proj [H, H], enorm, hnorm, norm
//     [H], hc_head_fn/base/scale; it shares embed and head with the model.
// Storage: float32 hc_*, attn_sink, ape and gate.bias; int64 tid2eid; the checkpoint dtype for the
// rest. With quantization_config (quant_method "fp8", weight_block_size) the linears model.py makes
// in its default dtype (wq_a, wq_b, wkv, wo_a, wo_b, indexer.wq_b, the experts, e_proj, h_proj)
// are float8_e4m3fn with "<linear>.scale" per block in float8_e8m0fnu (float32 with
// "scale_dtype": "fp32"); "expert_dtype": "fp4" stores the routed experts as int8 [out, in / 2]
// (two E2M1 values a byte) with a float8_e8m0fnu scale [out, in / 32]. NVIDIA's NVFP4 releases
// (ModelOpt MIXED_PRECISION, "quantized_layers" layers.{i}.ffn.experts) store those experts as
// NVFP4; the modules they "ignore" keep the original release's storage (an assumption). Checked
// against the DeepSeek-V4-Flash checkpoint's manifest (deepseek_v4_test.cc). transformers'
// non-persistent rotary tables (main and compress inv_freq and original_inv_freq, float32
// [rope / 2]) are built once for the model and once per compressor and indexer.

#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "formats/hf_config_json.h"
#include "memfit/checked_math.h"
#include "model/arch/builder_kit.h"
#include "model/arch/families.h"
#include "model/arch/mla_kit.h"
#include "model/arch/quantization.h"
#include "model/arch/repeated_modules.h"

namespace memfit::arch {
namespace {

// An integer JSON value in [lo, hi] (nlohmann keeps parsed positives unsigned, built ones signed).
bool InRange(const nlohmann::json& v, uint64_t lo, uint64_t hi) {
  if (!v.is_number_integer()) return false;
  if (!v.is_number_unsigned() && v.get<int64_t>() < 0) return false;
  const uint64_t x = v.get<uint64_t>();
  return x >= lo && x <= hi;
}

enum class Store : uint8_t { kPlain, kFp8, kFp4, kNvfp4 };

struct V4Storage {
  bool fp8 = false;          // quantization_config: block FP8 for the default-dtype linears
  bool fp4_experts = false;  // "expert_dtype": "fp4"
  uint64_t block_out = 128, block_in = 128;
  Dtype scale = Dtype::kF8E8M0;
  std::vector<std::string> nvfp4;  // ModelOpt "quantized_layers" module prefixes
  Quantization nvfp4_q;            // QLinear's NVFP4 layout
};

struct V4Dims {
  uint64_t h = 0, heads = 0, head_dim = 0, rope = 0, q_lora = 0, o_groups = 0, o_lora = 0;
  uint64_t index_heads = 0, index_dim = 0, experts = 0, top_k = 0, inter = 0, vocab = 0, hc = 0;
  uint64_t hash_layers = 0;
};

void V4Linear(ModelBuilder& b, const V4Storage& s, Store kind, const std::string& m, uint64_t in,
              uint64_t out) {
  if (kind == Store::kNvfp4) {
    QLinear(b, s.nvfp4_q, m, in, out, false);
  } else if (kind == Store::kPlain || !s.fp8) {
    b.Linear(m, in, out, false);
  } else if (kind == Store::kFp4) {
    // Logical parameters: the packed weight counts out x in, the scales none.
    b.Packed(m + ".weight", {out, in / 2}, Dtype::kI8, CheckedMul(out, in).value_or(0));
    b.Packed(m + ".scale", {out, in / 32}, Dtype::kF8E8M0, 0);
  } else {
    b.ParamAs(m + ".weight", {out, in}, Dtype::kF8E4M3);
    b.Packed(m + ".scale", {CeilDivOrZero(out, s.block_out), CeilDivOrZero(in, s.block_in)},
             s.scale, 0);
  }
}

// w1, w3 [inter, H] and w2 [H, inter] under `x`.
void V4Mlp(ModelBuilder& b, const V4Storage& s, Store kind, const std::string& x, const V4Dims& d) {
  V4Linear(b, s, kind, x + ".w1", d.h, d.inter);
  V4Linear(b, s, kind, x + ".w2", d.inter, d.h);
  V4Linear(b, s, kind, x + ".w3", d.h, d.inter);
}

void RotaryTables(ModelBuilder& b, const BuildOptions& o, const std::string& prefix,
                  uint64_t rope) {
  if (o.buffers != BufferConvention::kCurrent) return;
  for (const char* type : {"main", "compress"}) {
    for (const char* which : {"_inv_freq", "_original_inv_freq"}) {
      b.Buffer(prefix + "rotary_emb." + type + which, {rope / 2}, Dtype::kF32, false);
    }
  }
}

void Compressor(ModelBuilder& b, const std::string& x, const V4Dims& d, uint64_t ratio,
                uint64_t dim) {
  const uint64_t c = ratio == 4 ? 2 : 1;
  b.Linear(x + ".wkv", d.h, c * dim, false);
  b.Linear(x + ".wgate", d.h, c * dim, false);
  b.ParamAs(x + ".ape", {ratio, c * dim}, Dtype::kF32);
  b.RmsNorm(x + ".norm", dim);
}

void Block(ModelBuilder& b, const V4Storage& s, const BuildOptions& o, const std::string& l,
           const V4Dims& d, uint64_t layer, uint64_t ratio, bool loaded_by_transformers) {
  const uint64_t mix = (2 + d.hc) * d.hc;
  b.RmsNorm(l + ".attn_norm", d.h);
  b.RmsNorm(l + ".ffn_norm", d.h);
  for (const char* site : {"attn", "ffn"}) {
    const std::string p = l + ".hc_" + site;
    b.ParamAs(p + "_fn", {mix, d.hc * d.h}, Dtype::kF32);
    b.ParamAs(p + "_base", {mix}, Dtype::kF32);
    b.ParamAs(p + "_scale", {3}, Dtype::kF32);
  }
  const std::string a = l + ".attn";
  V4Linear(b, s, Store::kFp8, a + ".wq_a", d.h, d.q_lora);
  b.RmsNorm(a + ".q_norm", d.q_lora);
  V4Linear(b, s, Store::kFp8, a + ".wq_b", d.q_lora, d.heads * d.head_dim);
  V4Linear(b, s, Store::kFp8, a + ".wkv", d.h, d.head_dim);
  b.RmsNorm(a + ".kv_norm", d.head_dim);
  V4Linear(b, s, Store::kFp8, a + ".wo_a", d.heads * d.head_dim / d.o_groups,
           d.o_groups * d.o_lora);
  V4Linear(b, s, Store::kFp8, a + ".wo_b", d.o_groups * d.o_lora, d.h);
  b.ParamAs(a + ".attn_sink", {d.heads}, Dtype::kF32);
  if (ratio > 0) {
    Compressor(b, a + ".compressor", d, ratio, d.head_dim);
    if (loaded_by_transformers) RotaryTables(b, o, a + ".compressor.", d.rope);
  }
  if (ratio == 4) {
    V4Linear(b, s, Store::kFp8, a + ".indexer.wq_b", d.q_lora, d.index_heads * d.index_dim);
    b.Linear(a + ".indexer.weights_proj", d.h, d.index_heads, false);
    Compressor(b, a + ".indexer.compressor", d, ratio, d.index_dim);
    if (loaded_by_transformers) RotaryTables(b, o, a + ".indexer.", d.rope);
  }
  const std::string f = l + ".ffn";
  b.Param(f + ".gate.weight", {d.experts, d.h});
  if (layer < d.hash_layers) {
    b.Buffer(f + ".gate.tid2eid", {d.vocab, d.top_k}, Dtype::kI64, true);
  } else {
    b.Buffer(f + ".gate.bias", {d.experts}, Dtype::kF32, true);
  }
  const std::string experts = f + ".experts";
  const bool nvfp4 = std::find(s.nvfp4.begin(), s.nvfp4.end(), experts) != s.nvfp4.end();
  const Store routed = nvfp4 ? Store::kNvfp4 : s.fp4_experts ? Store::kFp4 : Store::kFp8;
  // V4Linear decides by kind, never by name: only the NVFP4 quantization can tell experts apart.
  RepeatedModules(b, nvfp4 ? s.nvfp4_q : Quantization{}, experts, d.experts,
                  [&](const std::string& x) { V4Mlp(b, s, routed, x, d); });
  V4Mlp(b, s, Store::kFp8, f + ".shared_experts", d);
}

void HcHead(ModelBuilder& b, const std::string& prefix, const V4Dims& d) {
  b.ParamAs(prefix + "hc_head_fn", {d.hc, d.hc * d.h}, Dtype::kF32);
  b.ParamAs(prefix + "hc_head_base", {d.hc}, Dtype::kF32);
  b.ParamAs(prefix + "hc_head_scale", {1}, Dtype::kF32);
}

// Reads the storage from quantization_config and "expert_dtype".
V4Storage ReadStorage(ModelBuilder& b, const HfConfig& c, const BuildOptions& o) {
  V4Storage s;
  const auto fail = [&](const Error& e) {
    b.Fail(e);
    return s;
  };
  const std::string expert_dtype = Get(b, c.StringOr("expert_dtype", ""));
  if (!expert_dtype.empty() && expert_dtype != "fp4" && expert_dtype != "fp8") {
    b.Fail(MakeError("{}: field \"expert_dtype\" must be \"fp4\" (or absent), not \"{}\"",
                     c.where(), expert_dtype));
  }
  auto raw = c.raw().find("quantization_config");
  if (o.ignore_quantization || raw == c.raw().end() || raw->is_null()) return s;
  if (!raw->is_object())
    return fail(MakeError("{}: \"quantization_config\" must be an object", c.where()));
  const auto& q = *raw;
  const std::string method = q.value("quant_method", std::string());
  if (method != "fp8") {
    return fail(
        MakeError("{}: quantization_config: DeepSeek-V4 is built for quant_method \"fp8\" "
                  "(deepseek-ai's block FP8, optionally with ModelOpt NVFP4 experts), not "
                  "\"{}\"; the safetensors headers give the exact sizes",
                  c.where(), method));
  }
  s.fp8 = true;
  s.fp4_experts = expert_dtype == "fp4";
  auto block = q.find("weight_block_size");
  if (block == q.end() || !block->is_array() || block->size() != 2 ||
      !InRange((*block)[0], 1, kMaxConfigDimension) ||
      !InRange((*block)[1], 1, kMaxConfigDimension)) {
    return fail(
        MakeError("{}: quantization_config: fp8 needs \"weight_block_size\" as two "
                  "positive integers",
                  c.where()));
  }
  s.block_out = (*block)[0].get<uint64_t>();
  s.block_in = (*block)[1].get<uint64_t>();
  const std::string scale_dtype = Get(b, c.StringOr("scale_dtype", "fp8"));
  if (scale_dtype == "fp32") {
    s.scale = Dtype::kF32;
  } else if (scale_dtype != "fp8") {
    b.Fail(MakeError("{}: field \"scale_dtype\" must be \"fp8\" or \"fp32\", not \"{}\"", c.where(),
                     scale_dtype));
  }
  if (q.value("quant_algo", std::string()) != "MIXED_PRECISION") return s;
  auto layers = q.find("quantized_layers");
  if (layers == q.end() || !layers->is_object()) {
    return fail(MakeError("{}: quantization_config: MIXED_PRECISION needs \"quantized_layers\"",
                          c.where()));
  }
  for (auto it = layers->begin(); it != layers->end(); ++it) {
    const std::string algo =
        it->is_object() ? it->value("quant_algo", std::string()) : std::string();
    if (algo != "NVFP4" || !it.key().ends_with(".ffn.experts")) {
      return fail(
          MakeError("{}: quantization_config: quantized_layers \"{}\" (quant_algo \"{}\"): "
                    "DeepSeek-V4 is built with NVFP4 ffn.experts only",
                    c.where(), it.key(), algo));
    }
    s.nvfp4.push_back(it.key());
  }
  s.nvfp4_q.method = QuantMethod::kNvfp4;
  s.nvfp4_q.bits = 4;
  s.nvfp4_q.group_size = 16;
  return s;
}

// The dimensions model.py's ModelArgs names, into `d` and model.hp; the sizes must not be zero.
V4Dims ReadV4Dims(ModelBuilder& b, const HfConfig& c) {
  auto& hp = b.model().hp;
  V4Dims d;
  d.vocab = hp.vocab_size = Get(b, c.Uint("vocab_size"));
  d.h = hp.hidden_size = Get(b, c.Uint("hidden_size"));
  hp.num_layers = Get(b, c.Uint("num_hidden_layers"));
  d.heads = hp.num_attention_heads = Get(b, c.Uint("num_attention_heads"));
  d.head_dim = hp.head_dim = Get(b, c.Uint("head_dim"));
  d.rope = hp.qk_rope_head_dim = Get(b, c.Uint("qk_rope_head_dim"));
  d.q_lora = hp.q_lora_rank = Get(b, c.Uint("q_lora_rank"));
  d.o_groups = Get(b, c.Uint("o_groups"));
  d.o_lora = Get(b, c.Uint("o_lora_rank"));
  d.index_heads = Get(b, c.Uint("index_n_heads"));
  d.index_dim = Get(b, c.Uint("index_head_dim"));
  hp.index_topk = Get(b, c.UintOr("index_topk", 0));
  d.experts = hp.num_experts = Get(b, c.Uint("n_routed_experts"));
  d.top_k = hp.experts_per_token = Get(b, c.Uint("num_experts_per_tok"));
  d.inter = hp.moe_intermediate_size = Get(b, c.Uint("moe_intermediate_size"));
  hp.num_shared_experts = Get(b, c.UintOr("n_shared_experts", 1));
  d.hc = Get(b, c.Uint("hc_mult"));
  d.hash_layers = Get(b, c.UintOr("num_hash_layers", 0));
  hp.num_mtp_layers = Get(b, c.UintOr("num_nextn_predict_layers", 0));
  hp.sliding_window = Get(b, c.Uint("sliding_window"));
  hp.num_kv_heads = Get(b, c.UintOr("num_key_value_heads", 1));
  hp.max_position_embeddings = Get(b, c.UintOr("max_position_embeddings", 0));
  hp.activation = Get(b, c.StringOr("hidden_act", "silu"));
  hp.norm = "rmsnorm";
  hp.gated_mlp = true;
  CheckNonZero(b, c,
               {{d.heads, "num_attention_heads"},
                {d.head_dim, "head_dim"},
                {d.q_lora, "q_lora_rank"},
                {d.o_groups, "o_groups"},
                {d.o_lora, "o_lora_rank"},
                {d.index_heads, "index_n_heads"},
                {d.index_dim, "index_head_dim"},
                {d.experts, "n_routed_experts"},
                {d.top_k, "num_experts_per_tok"},
                {d.inter, "moe_intermediate_size"},
                {d.hc, "hc_mult"},
                {d.h, "hidden_size"}});
  return d;
}

// What model.py asserts or divides by beyond positive sizes (ReadV4Dims): an error returned for
// the first broken rule; the products the tensors use are checked for overflow into `b`.
Status CheckV4Dims(ModelBuilder& b, const HfConfig& c, const V4Dims& d, const V4Storage& s) {
  const auto& hp = b.model().hp;
  // model.py asserts one shared expert; the model caches one shared key-value head.
  for (const auto& [value, key] : {std::pair{hp.num_shared_experts, "n_shared_experts"},
                                   {hp.num_kv_heads, "num_key_value_heads"}}) {
    if (value != 1) return MakeError("{}: field \"{}\" must be 1, not {}", c.where(), key, value);
  }
  if (d.rope > d.head_dim || d.rope % 2 != 0 || d.rope > d.index_dim) {
    return MakeError(
        "{}: field \"qk_rope_head_dim\" = {} must be even and at most \"head_dim\" "
        "and \"index_head_dim\"",
        c.where(), d.rope);
  }
  if (d.top_k > d.experts) {
    return MakeError("{}: field \"num_experts_per_tok\" ({}) exceeds \"n_routed_experts\" ({})",
                     c.where(), d.top_k, d.experts);
  }
  const uint64_t q_width = MulDims(b, d.heads, d.head_dim, "num_attention_heads x head_dim");
  DivideExact(b, c, q_width, "num_attention_heads x head_dim", d.o_groups, "o_groups");
  if (s.fp4_experts) {
    DivideExact(b, c, d.h, "hidden_size", 32, "32 (the FP4 experts' scale block)");
    DivideExact(b, c, d.inter, "moe_intermediate_size", 32, "32 (the FP4 experts' scale block)");
  }
  MulDims(b, (2 + d.hc), d.hc, "(2 + hc_mult) x hc_mult");
  MulDims(b, d.hc, d.h, "hc_mult x hidden_size");
  MulDims(b, d.o_groups, d.o_lora, "o_groups x o_lora_rank");
  MulDims(b, d.index_heads, d.index_dim, "index_n_heads x index_head_dim");
  return Ok{};
}

// "compress_ratios": one entry per layer, then (when the list goes on) per MTP layer; the
// entries past the list's end are 0 (no compressor).
Result<std::vector<uint64_t>> ReadV4CompressRatios(const HfConfig& c, const Hyperparameters& hp) {
  auto ratios_it = c.raw().find("compress_ratios");
  if (ratios_it == c.raw().end() || !ratios_it->is_array()) {
    return MakeError(
        "{}: field \"compress_ratios\" (one entry per layer) is missing or not a "
        "list",
        c.where());
  }
  const auto& ratios = *ratios_it;
  if (ratios.size() < hp.num_layers) {
    return MakeError(
        "{}: field \"compress_ratios\" has {} entries for {} layers (\"num_hidden_"
        "layers\")",
        c.where(), ratios.size(), hp.num_layers);
  }
  std::vector<uint64_t> ratio(std::min<uint64_t>(ratios.size(), hp.num_layers + hp.num_mtp_layers),
                              0);
  for (uint64_t i = 0; i < ratio.size(); ++i) {
    const auto& r = ratios[i];
    if (!InRange(r, 0, uint64_t{1} << 20)) {
      return MakeError("{}: \"compress_ratios\"[{}] must be an integer in 0..1048576", c.where(),
                       i);
    }
    ratio[i] = r.get<uint64_t>();
  }
  return ratio;
}

}  // namespace

Result<Model> BuildDeepseekV4(const HfConfig& c, const BuildOptions& o) {
  ModelBuilder b(c);
  const V4Dims d = ReadV4Dims(b, c);
  const V4Storage s = ReadStorage(b, c, o);
  Model& m = b.model();
  auto& hp = m.hp;
  if (b.failed()) return b.Finish();
  MEMFIT_RETURN_IF_ERROR(CheckV4Dims(b, c, d, s));
  MEMFIT_ASSIGN_OR_RETURN(const std::vector<uint64_t> ratio, ReadV4CompressRatios(c, hp));
  if (b.failed()) return b.Finish();
  // What the storage implies beyond the tensors' dtypes.
  if (s.fp8 && !s.nvfp4.empty()) {
    m.assumptions.push_back(
        "NVFP4 experts (ModelOpt MIXED_PRECISION): the modules quantization_config \"ignore\"s "
        "(attention, shared experts, head, mtp.*) are assumed to keep the original release's "
        "storage (block FP8 with float8_e8m0fnu scales; FP4 routed experts in mtp.*)");
  }
  if (c.model_type() == "deepseek_ref" && s.fp8 && !s.fp4_experts) {
    m.notes.push_back(
        "no \"expert_dtype\": routed experts stored as block FP8, as model.py "
        "stores them without expert_dtype");
  }

  b.Embedding("embed", d.vocab, d.h);
  RotaryTables(b, o, "", d.rope);
  for (uint64_t i = 0; i < hp.num_layers && !b.failed(); ++i) {
    Block(b, s, o, Layer("layers", i), d, i, ratio[i], true);
    // A sliding window plus, by the ratio, compressed entries, all of one shared K=V head.
    hp.layers.push_back({.attention = AttentionKind::kSliding,
                         .num_heads = d.heads,
                         .num_kv_heads = 1,
                         .head_dim_k = d.head_dim,
                         .head_dim_v = 0,
                         .window_tokens = hp.sliding_window,
                         .moe = true,
                         .indexer_head_dim = ratio[i] == 4 ? d.index_dim : 0,
                         .compress_ratio = ratio[i],
                         .k_eq_v = true});
  }
  b.RmsNorm("norm", d.h);
  HcHead(b, "", d);
  b.SetHead(true);
  b.Param("head.weight", {d.vocab, d.h});
  b.SetHead(false);
  // Multi-token prediction, not loaded by transformers (_keys_to_ignore_on_load_unexpected).
  const size_t mtp_begin = m.tensors.size();
  for (uint64_t k = 0; k < hp.num_mtp_layers && !b.failed(); ++k) {
    const uint64_t id = hp.num_layers + k;
    const std::string l = Layer("mtp", k);
    // model.py: the MTP experts are FP4 like the others; NVFP4 releases "ignore" mtp.*.
    Block(b, s, o, l, d, id, id < ratio.size() ? ratio[id] : 0, false);
    V4Linear(b, s, Store::kFp8, l + ".e_proj", d.h, d.h);
    V4Linear(b, s, Store::kFp8, l + ".h_proj", d.h, d.h);
    b.RmsNorm(l + ".enorm", d.h);
    b.RmsNorm(l + ".hnorm", d.h);
    b.RmsNorm(l + ".norm", d.h);
    HcHead(b, l + ".", d);
  }
  MarkMtpStoredOnly(b, mtp_begin, hp.num_mtp_layers, "layer(s) (mtp.*");
  if (s.fp8) {
    m.notes.push_back(fmt::format(
        "DeepSeek-V4 native storage: FP8 linears as float8_e4m3fn with a {} scale per {}x{} "
        "block{}",
        DtypeName(s.scale), s.block_out, s.block_in,
        s.fp4_experts ? "; routed experts as int8 (two E2M1 values a byte) with a float8_e8m0fnu "
                        "scale per 32 inputs; parameters are logical (scales are not parameters)"
                      : ""));
  }
  if (!s.nvfp4.empty()) NoteQuantization(b, s.nvfp4_q);
  m.no_split_patterns = {"layers.*", "mtp.*"};
  return b.Finish();
}

}  // namespace memfit::arch
