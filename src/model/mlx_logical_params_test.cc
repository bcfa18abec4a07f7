// MLX-packed tensors read from headers: logical parameters from the config's block or the shapes.
#include "model/mlx_logical_params.h"

#include <gtest/gtest.h>

#include "model/tensor_test_util.h"

namespace memfit {
namespace {
namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

using testing::StoredTensor;

HfConfig Config(const std::string& json) {
  auto c = HfConfig::Parse(json);
  EXPECT_TRUE(c) << c.error().message;
  return std::move(c).value();
}

// A linear (or embedding) [out, in] as mlx-lm stores it: uint32 [out, in x bits / 32], scales
// and (affine) biases [out, in / group]: bfloat16 when affine, uint8 otherwise.
void AddPacked(std::vector<Tensor>& ts, const std::string& m, uint64_t out, uint64_t in,
               uint64_t bits, uint64_t group, bool affine = true) {
  ts.push_back(StoredTensor(m + ".weight", {out, in * bits / 32}, Dtype::kU32));
  ts.push_back(StoredTensor(m + ".scales", {out, in / group}, affine ? Dtype::kBF16 : Dtype::kU8));
  if (affine) ts.push_back(StoredTensor(m + ".biases", {out, in / group}, Dtype::kBF16));
}

uint64_t Total(const std::vector<Tensor>& ts) {
  uint64_t n = 0;
  for (const auto& t : ts) n += LogicalParams(t);
  return n;
}

uint64_t Stored(const std::vector<Tensor>& ts) {
  uint64_t n = 0;
  for (const auto& t : ts) n += t.bytes;
  return n;
}

// Two llama layers: hidden 128, q 128 out, k and v 64 out, intermediate 256, vocab 32, untied
// head, every linear and the embedding 4-bit affine, group 64 (`q1_bits`: layer 1's q_proj).
std::vector<Tensor> TinyLlama(uint64_t q1_bits = 4) {
  std::vector<Tensor> ts;
  AddPacked(ts, "model.embed_tokens", 32, 128, 4, 64);
  for (int l = 0; l < 2; ++l) {
    const std::string p = "model.layers." + std::to_string(l);
    AddPacked(ts, p + ".self_attn.q_proj", 128, 128, l == 1 ? q1_bits : 4, 64);
    AddPacked(ts, p + ".self_attn.k_proj", 64, 128, 4, 64);
    AddPacked(ts, p + ".self_attn.v_proj", 64, 128, 4, 64);
    AddPacked(ts, p + ".self_attn.o_proj", 128, 128, 4, 64);
    AddPacked(ts, p + ".mlp.gate_proj", 256, 128, 4, 64);
    AddPacked(ts, p + ".mlp.up_proj", 256, 128, 4, 64);
    AddPacked(ts, p + ".mlp.down_proj", 128, 256, 4, 64);
    ts.push_back(StoredTensor(p + ".input_layernorm.weight", {128}, Dtype::kBF16));
    ts.push_back(StoredTensor(p + ".post_attention_layernorm.weight", {128}, Dtype::kBF16));
  }
  ts.push_back(StoredTensor("model.norm.weight", {128}, Dtype::kBF16));
  AddPacked(ts, "lm_head", 32, 128, 4, 64);
  return ts;
}

// Unquantized, by hand: per layer q 128x128 = 16384, k and v 64x128 = 8192 each, o 16384,
// gate and up 256x128 = 32768 each, down 128x256 = 32768, two norms 256: 147712; two layers
// 295424; embed_tokens and lm_head 32x128 = 4096 each; final norm 128. Total 303744.
constexpr uint64_t kTinyLlamaParams = 303744;

const char* kAffine4 = R"({"model_type": "llama", "quantization": {"group_size": 64, "bits": 4},
  "quantization_config": {"group_size": 64, "bits": 4}})";

TEST(MlxLogicalParams, TwoLayerAffine4BitGroup64) {
  auto ts = TinyLlama();
  const uint64_t stored = Stored(ts);
  const HfConfig config = Config(kAffine4);
  auto report = InferMlxLogicalParams(ts, &config);
  EXPECT_EQ(Total(ts), kTinyLlamaParams);
  EXPECT_EQ(Stored(ts), stored);  // bytes untouched
  EXPECT_TRUE(report.assumptions.empty());
  ASSERT_EQ(report.notes.size(), 1u);
  // 16 packed weights (7 per layer, embedding, head), 32 scales and biases.
  EXPECT_NE(report.notes[0].find("16 uint32 weight(s)"), std::string::npos) << report.notes[0];
  EXPECT_NE(report.notes[0].find("affine 4-bit group 64: 16"), std::string::npos);
  EXPECT_NE(report.notes[0].find("32 scales"), std::string::npos);
}

// Layer 1's q_proj at 8 bits (group 64): its per-module entry gives the bits.
TEST(MlxLogicalParams, PerModule8BitOverride) {
  auto ts = TinyLlama(8);
  const HfConfig config = Config(R"({"quantization": {"group_size": 64, "bits": 4,
    "model.layers.1.self_attn.q_proj": {"group_size": 64, "bits": 8}}})");
  auto report = InferMlxLogicalParams(ts, &config);
  EXPECT_EQ(Total(ts), kTinyLlamaParams);
  EXPECT_TRUE(report.assumptions.empty());
  ASSERT_EQ(report.notes.size(), 1u);
  EXPECT_NE(report.notes[0].find("affine 8-bit group 64: 1"), std::string::npos);

  // Without the entry, the 8-bit words (ratio 16 words per group) fit affine 8-bit group 64 and
  // 4-bit group 128 alike: counted as the 4096 stored words, and said.
  auto again = TinyLlama(8);
  const HfConfig base_only = Config(kAffine4);
  report = InferMlxLogicalParams(again, &base_only);
  EXPECT_EQ(Total(again), kTinyLlamaParams - 16384 + 4096);
  ASSERT_EQ(report.assumptions.size(), 1u);
  EXPECT_NE(report.assumptions[0].find("model.layers.1.self_attn.q_proj.weight"),
            std::string::npos);
  EXPECT_NE(report.assumptions[0].find("does not fit"), std::string::npos);
}

// mode mxfp4: uint8 scales per 32 inputs, no biases; stacked experts [E, out, in x 4 / 32].
TEST(MlxLogicalParams, Mxfp4WithStackedExperts) {
  std::vector<Tensor> ts;
  AddPacked(ts, "model.layers.0.self_attn.q_proj", 128, 128, 4, 32, false);
  ts.push_back(
      StoredTensor("model.layers.0.mlp.experts.down_proj.weight", {4, 64, 16}, Dtype::kU32));
  ts.push_back(StoredTensor("model.layers.0.mlp.experts.down_proj.scales", {4, 64, 4}, Dtype::kU8));
  const HfConfig config =
      Config(R"({"quantization": {"group_size": 32, "bits": 4, "mode": "mxfp4"}})");
  auto report = InferMlxLogicalParams(ts, &config);
  EXPECT_EQ(LogicalParams(ts[0]), 128u * 128);
  EXPECT_EQ(LogicalParams(ts[1]), 0u);
  EXPECT_EQ(LogicalParams(ts[2]), 4u * 64 * 128);
  EXPECT_EQ(LogicalParams(ts[3]), 0u);
  EXPECT_TRUE(report.assumptions.empty());
  ASSERT_EQ(report.notes.size(), 1u);
  EXPECT_NE(report.notes[0].find("mxfp4: 2"), std::string::npos) << report.notes[0];
}

// No config: one spec fits (affine 3-bit group 32: 3 words per group; mxfp4: uint8 scales, 4
// words per group) and is used, said; 4-bit group 64 (8 words per group) fits three and is
// counted as words, said.
TEST(MlxLogicalParams, HeadersOnly) {
  std::vector<Tensor> ts;
  AddPacked(ts, "a", 8, 128, 3, 32);
  AddPacked(ts, "b", 8, 128, 4, 32, false);
  AddPacked(ts, "c", 8, 128, 4, 64);
  auto report = InferMlxLogicalParams(ts, nullptr);
  EXPECT_EQ(LogicalParams(ts[0]), 8u * 128);
  EXPECT_EQ(LogicalParams(ts[3]), 8u * 128);
  EXPECT_EQ(LogicalParams(ts[5]), 8u * 16);  // words
  EXPECT_EQ(LogicalParams(ts[6]), 0u);       // its scales still count none
  ASSERT_EQ(report.assumptions.size(), 2u);
  EXPECT_NE(report.assumptions[0].find("inferred from the ratio"), std::string::npos);
  EXPECT_NE(report.assumptions[0].find("no readable MLX"), std::string::npos);
  EXPECT_NE(report.assumptions[1].find(
                "affine 8-bit group 32, affine 4-bit group 64, affine 2-bit group 128"),
            std::string::npos)
      << report.assumptions[1];
}

// Scales that do not divide the words, zero sizes, absurd shapes, a bad block: left as stored,
// one assumption each kind, no crash.
TEST(MlxLogicalParams, HostileHeaders) {
  std::vector<Tensor> ts = {
      StoredTensor("a.weight", {8, 16}, Dtype::kU32),
      StoredTensor("a.scales", {8, 3}, Dtype::kBF16),
      StoredTensor("a.biases", {8, 3}, Dtype::kBF16),
      StoredTensor("z.weight", {8, 0}, Dtype::kU32),
      StoredTensor("z.scales", {8, 0}, Dtype::kBF16),
      StoredTensor("r.weight", {16}, Dtype::kU32),
      StoredTensor("r.scales", {2}, Dtype::kBF16),
      StoredTensor("o.weight", {1, 4}, Dtype::kU32),
      StoredTensor("o.scales", {1, uint64_t{1} << 62}, Dtype::kU8),
      StoredTensor("m.weight", {8, 16}, Dtype::kU32),
      StoredTensor("m.scales", {4, 2}, Dtype::kBF16),
  };
  const HfConfig bad = Config(R"({"quantization": {"group_size": 48, "bits": 4}})");
  for (const HfConfig* config : {static_cast<const HfConfig*>(nullptr), &bad}) {
    std::vector<Tensor> copy = ts;
    auto report = InferMlxLogicalParams(copy, config);
    for (size_t i = 0; i < copy.size(); ++i) {
      EXPECT_EQ(LogicalParams(copy[i]), copy[i].numel) << copy[i].name;
    }
    ASSERT_EQ(report.assumptions.size(), 1u);
    EXPECT_NE(report.assumptions[0].find("5 uint32 weight(s)"), std::string::npos)
        << report.assumptions[0];
    EXPECT_TRUE(report.notes.empty());
  }
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit
