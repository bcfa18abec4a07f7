// Qwen4-Exp (qwen4_exp: Qwen4ExpForConditionalGeneration, e.g. Qwen/Qwen3.8-Flash-Next;
// qwen4_exp_text: Qwen4ExpForCausalLM): the text model and MTP module of its two QwenHybridSpec
// rows (qwen_hybrid.h). A layer has no norms but attn_/mlp_hyper_connection gated residuals over
// hc_count streams; Qwen3.5's gated delta-net on "linear_attention" layers, else its gated
// attention plus the QSA indexer; the Qwen3-Next MoE block (experts stored per expert); on the
// one-indexed "ple_layer_ids" layers ple.*, whose n-gram table (stored in "split_ngram_parts"
// shards that transformers concatenates on load) has rows summed from primes derived from the
// config. No final norm: hyper_connection_mixer folds the streams; mtp.* stored, not loaded.
// Sources: transformers models/qwen4_exp/modular_qwen4_exp.py and configuration_qwen4_exp.py
// (Qwen4ExpTextNGramEmbedding, Qwen4ExpTextPLELayer, Qwen4ExpTextGatedResidual,
// Qwen4ExpTextQSAIndexer); the 31 mtp.* tensors of the Qwen3.8-Flash-Next BF16 checkpoint as its
// shard headers list them (fc_embedding/fc_hidden [H, H], pre_fc_norm_hidden [hc H], fused
// experts).

#include <fmt/format.h>

#include <algorithm>
#include <string_view>
#include <utility>

#include "formats/hf_config_json.h"
#include "model/arch/decoder_kit.h"
#include "model/arch/qwen_hybrid.h"

namespace memfit::arch {
namespace {

// Miller-Rabin with bases 2, 7 and 61: exact below 4,759,123,141; n < 2^32 keeps every product in
// 64 bits.
bool IsPrime(uint64_t n) {
  if (n < 2) return false;
  for (uint64_t p : {2u, 3u, 5u, 7u, 11u, 13u, 61u}) {
    if (n % p == 0) return n == p;
  }
  uint64_t d = n - 1;
  int r = 0;
  while (d % 2 == 0) {
    d /= 2;
    ++r;
  }
  for (uint64_t a : {2u, 7u, 61u}) {
    uint64_t x = 1, base = a % n, e = d;
    while (e > 0) {
      if (e & 1) x = x * base % n;
      base = base * base % n;
      e >>= 1;
    }
    if (x == 1 || x == n - 1) continue;
    bool composite = true;
    for (int i = 1; i < r && composite; ++i) {
      x = x * x % n;
      composite = x != n - 1;
    }
    if (composite) return false;
  }
  return true;
}

// _find_nth_prime_after is at most this far above the base (the largest prime gap below 2^32 is
// 336): a bound that keeps the search finite whatever the config says.
constexpr uint64_t kMaxNgramBase = 4'000'000'000;
constexpr uint64_t kMaxNgramHeads = 1 << 16;  // n-gram heads over all PLE layers

struct Qwen4Dims {
  uint64_t hc = 0, rank = 0;                        // hyper-connection streams, mixer rank
  uint64_t idx_heads = 0, idx_dim = 0, rotary = 0;  // QSA indexer (one key head)
  uint64_t ple_dim = 0, ple_kernel = 0, ngram = 0, per_ngram = 0, base = 0, divisor = 0, parts = 0;
  std::vector<uint64_t> ple_layers;  // zero-based
};

Qwen4Dims ReadQwen4Dims(ModelBuilder& b, const HfConfig& c, const Hyperparameters& hp) {
  Qwen4Dims d;
  d.hc = Get(b, c.UintOr("hc_count", 4));
  d.rank = Get(b, c.UintOr("hc_lowrank", 320));
  d.idx_heads = Get(b, c.UintOr("indexer_n_heads", 0));
  const uint64_t idx_kv = Get(b, c.UintOr("indexer_kv_heads", 0));
  d.idx_dim = Get(b, c.UintOr("indexer_head_dim", 0));
  d.rotary = QwenRotaryDim(b, c, hp.head_dim);
  d.ple_dim = Get(b, c.UintOr("ple_embed_dim", hp.hidden_size));
  d.ple_kernel = Get(b, c.UintOr("ple_conv_kernel_size", 4));
  d.ngram = Get(b, c.UintOr("ngram_size", 3));
  d.per_ngram = Get(b, c.UintOr("heads_per_ngram", 8));
  d.base = Get(b, c.UintOr("ngram_vocab_size_base", 20'000'000));
  d.divisor = Get(b, c.UintOr("make_ngram_vocab_size_divisible_by", 128));
  d.parts = Get(b, c.UintOr("split_ngram_parts", 512));
  if (b.failed()) return d;
  const auto fail = [&](const std::string& message) {
    b.Fail(MakeError("{}: {}", c.where(), message));
    return d;
  };
  if (d.hc < 2) return fail(fmt::format("\"hc_count\" = {} must be at least 2", d.hc));
  if (d.rank == 0) return fail("\"hc_lowrank\" must be positive");
  // Qwen4ExpTextAttention always builds the QSA indexer: its fields are required.
  if (d.idx_heads == 0 || d.idx_dim == 0 || idx_kv != 1) {
    return fail(
        "the QSA indexer needs \"indexer_n_heads\" and \"indexer_head_dim\" > 0 and "
        "\"indexer_kv_heads\" = 1 (Qwen4ExpTextQSAIndexer)");
  }
  MulDims(b, MulDims(b, d.hc, hp.hidden_size, "hc_count x hidden_size"), d.rank,
          "hc_count x hidden_size x hc_lowrank");
  MulDims(b, d.idx_heads + 1, d.idx_dim, "(indexer_n_heads + 1) x indexer_head_dim");
  if (auto it = c.raw().find("ple_layer_ids"); it != c.raw().end() && !it->is_null()) {
    if (!it->is_array()) return fail("\"ple_layer_ids\" must be a list of layer ids");
    for (const auto& v : *it) {
      if (!v.is_number_integer() || v.get<int64_t>() < 1 ||
          static_cast<uint64_t>(v.get<int64_t>()) > hp.num_layers) {
        return fail(
            fmt::format("\"ple_layer_ids\" holds one-indexed ids in [1, {}]", hp.num_layers));
      }
      d.ple_layers.push_back(static_cast<uint64_t>(v.get<int64_t>()) - 1);
    }
    std::sort(d.ple_layers.begin(), d.ple_layers.end());
    d.ple_layers.erase(std::unique(d.ple_layers.begin(), d.ple_layers.end()), d.ple_layers.end());
  }
  if (d.ple_layers.empty()) return d;
  const uint64_t heads = d.ngram >= 2 ? (d.ngram - 1) * d.per_ngram : 0;
  if (heads == 0 || d.ple_dim == 0 || d.ple_dim % heads != 0) {
    return fail(
        fmt::format("\"ple_embed_dim\" = {} must be a positive multiple of the n-gram "
                    "heads (\"ngram_size\" - 1) x \"heads_per_ngram\" = {}",
                    d.ple_dim, heads));
  }
  if (d.base < 2 || d.base > kMaxNgramBase) {
    return fail(
        fmt::format("\"ngram_vocab_size_base\" = {} must be in [2, {}]", d.base, kMaxNgramBase));
  }
  if (heads * d.ple_layers.size() > kMaxNgramHeads) {
    return fail(fmt::format("{} n-gram heads over the PLE layers: at most {}",
                            heads * d.ple_layers.size(), kMaxNgramHeads));
  }
  if (d.divisor == 0 || d.parts == 0 || d.ple_kernel == 0) {
    return fail(
        "\"make_ngram_vocab_size_divisible_by\", \"split_ngram_parts\" and "
        "\"ple_conv_kernel_size\" must be positive");
  }
  return d;
}

// Qwen4ExpTextGatedResidual under `path`; block_inject_weight only with `combine`.
void GatedResidual(ModelBuilder& b, const Quantization& q, const std::string& path,
                   const Qwen4Dims& d, uint64_t h, bool combine) {
  const uint64_t streams = d.hc * h;
  b.RmsNorm(path + ".hc_norm", streams);
  QLinear(b, q, path + ".input_mix_weight_down", streams, d.rank, false);
  QLinear(b, q, path + ".input_mix_weight_up", d.rank, streams, false);
  if (combine) QLinear(b, q, path + ".block_inject_weight", streams, d.hc, false);
}

// The QSA indexer of a full-attention layer; returns the elements it caches per token: the raw
// key and the cos/sin of its position (torch.cat([token_k, cos, sin]) in update_indexer).
uint64_t Qwen4ExpIndexer(ModelBuilder& b, const Quantization& q, const std::string& l,
                         const Qwen4Dims& d, uint64_t h) {
  const std::string x = l + ".self_attn.indexer";
  QLinear(b, q, x + ".index_qk_proj", h, (d.idx_heads + 1) * d.idx_dim, false);
  b.RmsNorm(x + ".q_layernorm", d.idx_dim);
  b.RmsNorm(x + ".k_layernorm", d.idx_dim);
  return d.idx_dim + 2 * d.rotary;
}

// Qwen4ExpTextPLELayer of the `index`-th PLE layer; `primes` are the n-gram vocabularies of every
// head of every PLE layer in order (global head index = index x heads + head).
void Ple(ModelBuilder& b, const Quantization& q, const std::string& l, const Qwen4Dims& d,
         uint64_t h, const std::vector<uint64_t>& primes, uint64_t index) {
  const uint64_t heads = (d.ngram - 1) * d.per_ngram;
  uint64_t total = 0;
  for (uint64_t k = 0; k < heads; ++k) total += primes[index * heads + k];
  const uint64_t rows = (total + d.divisor - 1) / d.divisor * d.divisor;
  const uint64_t width = d.ple_dim / heads;
  const std::string p = l + ".ple";
  const std::string e = p + ".ple_embedding";
  // save_pretrained writes the table in split_ngram_parts shards (torch.chunk along rows: equal
  // parts of ceil(rows / parts), the last one shorter).
  const uint64_t chunk = (rows + d.parts - 1) / d.parts;
  for (uint64_t k = 0, start = 0; start < rows && !b.failed(); ++k, start += chunk) {
    b.Param(fmt::format("{}.ngram_embedding.shard_{}.weight", e, k),
            {std::min(chunk, rows - start), width});
  }
  b.Buffer(e + ".layer_multipliers", {d.ngram}, Dtype::kI64, true);
  b.Buffer(e + ".ngram_heads_vocab_sizes", {heads}, Dtype::kI64, true);
  b.Buffer(e + ".ngram_heads_offsets", {heads}, Dtype::kI64, true);
  const uint64_t streams = d.hc * h;
  QLinear(b, q, p + ".key_proj", d.ple_dim, streams, false);
  QLinear(b, q, p + ".value_proj", d.ple_dim, h, false);
  b.RmsNorm(p + ".norm_key", streams);
  b.RmsNorm(p + ".norm_query", streams);
  b.RmsNorm(p + ".norm_conv", streams);
  b.Conv(p + ".conv1d", streams, streams, {d.ple_kernel}, false, streams);
}

// The names "layer_types" may use and whether each is a gated delta-net layer (the others are
// indexed full attention). transformers' Qwen4ExpTextConfig validates the first three; the
// builder also takes "full_attention" and "qwen_sparse_attention" as indexed attention.
constexpr std::pair<std::string_view, bool> kQwen4LayerTypes[] = {
    {"linear_attention", true}, {"deepseek_sparse_attention", false}, {"hybrid_indexed", false},
    {"full_attention", false},  {"qwen_sparse_attention", false},
};

// The Qwen hybrid dims of Qwen4-Exp: Qwen3_5Attention always doubles q_proj for the gate.
QwenHybridDims ReadHybrid(ModelBuilder& b, const HfConfig& c) {
  QwenHybridDims d = ReadQwenHybridDims(b, c);
  d.output_gate = true;
  return d;
}

// A layer's mixer, the indexer of an attention layer, the MoE block; the caller adds the rest.
LayerInfo MixerAndMoe(ModelBuilder& b, const Quantization& q, const std::string& l,
                      const Qwen4Dims& d, const QwenHybridDims& hybrid, const QwenHybridSpec& s,
                      bool linear, ExpertLayout layout) {
  const auto& hp = b.model().hp;
  LayerInfo info = EmitQwenHybridMixer(b, q, l, hybrid, s, linear, 0);
  if (!linear) info.indexer_head_dim = Qwen4ExpIndexer(b, q, l, d, hp.hidden_size);
  QwenMoeBlock(b, q, l, hp.hidden_size, hp.num_experts, hp.moe_intermediate_size,
               hp.shared_expert_intermediate_size, layout);
  info.moe = true;
  return info;
}

}  // namespace

uint64_t EmitQwen4ExpText(ModelBuilder& b, const HfConfig& c, const Quantization& q,
                          const QwenHybridSpec& s, const std::string& prefix) {
  auto& hp = b.model().hp;
  const uint64_t mtp = Get(b, c.UintOr("mtp_num_hidden_layers", 0));
  if (b.failed()) return 0;
  if (hp.num_experts == 0 || hp.moe_intermediate_size == 0 ||
      hp.shared_expert_intermediate_size == 0 || hp.experts_per_token == 0 ||
      hp.experts_per_token > hp.num_experts) {
    b.Fail(
        MakeError("{}: \"num_experts\", \"num_experts_per_tok\" (at most num_experts), "
                  "\"moe_intermediate_size\" and \"shared_expert_intermediate_size\" must be "
                  "positive",
                  c.where()));
    return 0;
  }
  const Qwen4Dims d = ReadQwen4Dims(b, c, hp);
  const QwenHybridDims hybrid = ReadHybrid(b, c);
  if (b.failed()) return 0;
  const std::vector<bool> linear = QwenLinearLayers(b, c, hp.num_layers, kQwen4LayerTypes);
  if (b.failed()) return 0;
  for (uint64_t i : d.ple_layers) {
    if (!linear[i]) {
      b.Fail(
          MakeError("{}: \"ple_layer_ids\" names layer {} (one-indexed), which is not a "
                    "\"linear_attention\" layer",
                    c.where(), i + 1));
      return 0;
    }
  }
  // The n-gram vocabularies: head g of all PLE layers takes the (g + 1)-th prime after base - 1.
  std::vector<uint64_t> primes;
  if (!d.ple_layers.empty()) {
    const uint64_t heads = (d.ngram - 1) * d.per_ngram * d.ple_layers.size();
    primes.reserve(heads);
    uint64_t p = d.base - 1;
    for (uint64_t g = 0; g < heads; ++g) {
      do ++p;
      while (!IsPrime(p));
      primes.push_back(p);
    }
  }
  b.Embedding(prefix + ".embed_tokens", hp.vocab_size, hp.hidden_size);
  const uint64_t h = hp.hidden_size;
  for (uint64_t i = 0; i < hp.num_layers && !b.failed(); ++i) {
    const std::string l = Layer(prefix + ".layers", i);
    LayerInfo info = MixerAndMoe(b, q, l, d, hybrid, s, linear[i], s.layout);
    const auto ple = std::find(d.ple_layers.begin(), d.ple_layers.end(), i);
    if (ple != d.ple_layers.end()) {
      Ple(b, q, l, d, h, primes, static_cast<uint64_t>(ple - d.ple_layers.begin()));
    }
    GatedResidual(b, q, l + ".attn_hyper_connection", d, h, true);
    GatedResidual(b, q, l + ".mlp_hyper_connection", d, h, true);
    hp.layers.push_back(info);
  }
  // inv_freq = 1 / theta^(arange(0, rotary, 2) / rotary): ceil(rotary / 2) entries.
  b.Buffer(prefix + ".rotary_emb.inv_freq", {(d.rotary + 1) / 2}, Dtype::kF32, false);
  GatedResidual(b, q, prefix + ".hyper_connection_mixer", d, h, false);
  hp.num_mtp_layers = mtp;
  auto& notes = b.model().assumptions;
  notes.push_back(fmt::format(
      "hyper-connections: {} residual streams of hidden_size per token (hc_count) between the "
      "layers; activation estimates count one stream",
      d.hc));
  if (!d.ple_layers.empty()) {
    notes.push_back(fmt::format(
        "per-layer embedding (PLE) layers keep a short-conv state of {} x {} and {} token ids "
        "per sequence besides the delta-net state: not counted in the recurrent state",
        d.hc * h, (d.ple_kernel - 1) * d.ngram, d.ngram - 1));
  }
  notes.push_back(fmt::format(
      "the QSA indexer caches {} elements per token on each full-attention layer: the key "
      "({}) and its position's cos and sin ({} each), as transformers' cache stores them",
      d.idx_dim + 2 * d.rotary, d.idx_dim, d.rotary));
  return mtp;
}

// mtp.*: the 31-tensor layout of one layer (its routed experts fused).
void EmitQwen4ExpMtp(ModelBuilder& b, const HfConfig& c, const Quantization& q,
                     const QwenHybridSpec& s, uint64_t layers) {
  const uint64_t h = b.model().hp.hidden_size;
  const Qwen4Dims d = ReadQwen4Dims(b, c, b.model().hp);
  const QwenHybridDims hybrid = ReadHybrid(b, c);
  QLinear(b, q, "mtp.fc_embedding", h, h, false);
  QLinear(b, q, "mtp.fc_hidden", h, h, false);
  b.RmsNorm("mtp.pre_fc_norm_embedding", h);
  b.RmsNorm("mtp.pre_fc_norm_hidden", d.hc * h);
  GatedResidual(b, q, "mtp.hyper_connection_mixer", d, h, false);
  for (uint64_t k = 0; k < layers && !b.failed(); ++k) {
    const std::string l = Layer("mtp.layers", k);
    MixerAndMoe(b, q, l, d, hybrid, s, /*linear=*/false, ExpertLayout::kFused);
    GatedResidual(b, q, l + ".attn_hyper_connection", d, h, true);
    GatedResidual(b, q, l + ".mlp_hyper_connection", d, h, true);
  }
}

}  // namespace memfit::arch
