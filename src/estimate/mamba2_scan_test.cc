// transformers' torch-path Mamba-2 scan (estimate/mamba2_scan.h, docs/estimates.md "Mamba-2 in
// transformers without mamba_ssm"): the term by hand on a tiny shape, then in the inference and
// training estimates of a tiny Bamba config, and the --mamba-scan choice.

#include <algorithm>

#include <gtest/gtest.h>

#include "base/error_test_util.h"
#include "estimate/mamba2_scan.h"
#include "memfit/estimate_inference.h"
#include "memfit/estimate_train.h"
#include "memfit/units.h"
#include "model/arch/arch_test_util.h"

namespace memfit {
namespace estimate {

// The six terms by name, for a failed comparison.
void PrintTo(const Mamba2ScanBytes& b, std::ostream* os) {
  *os << "{g_intermediate " << b.g_intermediate << ", largest_other " << b.largest_other
      << ", locals " << b.locals << ", forward_peak " << b.forward_peak << ", saved " << b.saved
      << ", backward_peak " << b.backward_peak << "}";
}

}  // namespace estimate

namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

// Bamba: hidden 8, vocab 10, layer 0 Mamba-2 (2 heads of 8 = d_inner 16, d_state 2, 1 group,
// conv channels 16 + 2 x 2 = 20, in_proj 16 + 20 + 2 = 38 wide), layer 1 attention (2 heads of
// 4, 1 KV head); SSD chunk 4.
nlohmann::json TinyBamba() {
  return arch::testing::TinyDecoderWith(
      "bamba", {{"architectures", {"BambaForCausalLM"}},
                {"attn_layer_indices", nlohmann::json::array({1})},
                {"mamba_n_heads", 2}, {"mamba_n_groups", 1}, {"mamba_d_state", 2},
                {"mamba_d_conv", 3}, {"mamba_expand", 2}, {"mamba_chunk_size", 4}});
}

// b 1, T 5 tokens in chunks of l 4: nc = ceil(5 / 4) = 2 chunks, padded to 8 tokens; h 2 heads
// of d 8, n 2. Bytes (float32, 4 B per element):
// - G_intermediate (b, nc, l, l, h, n) = 1 x 2 x 4 x 4 x 2 x 2 x 4 = 512;
// - the other 6-D products: M x values (b, nc, l, l, h, d) = 2 x 16 x 2 x 8 x 4 = 2,048;
//   B_decay x values and C_times_states (b, 8 tokens, h, d, n) = 8 x 2 x 8 x 2 x 4 = 1,024;
//   the recurrence (b, nc+1, nc+1, h, d, n) = 3 x 3 x 2 x 8 x 2 x 4 = 1,152: the largest 2,048;
// - locals: L, G, M_intermediate, M 4 x (2 x 16 x 2) x 4 = 1,024; B, C, B_decay 3 x (8 x 2 x 2)
//   x 4 = 384; values, D_residual, Y_diag 3 x (8 x 2 x 8) x 4 = 1,536; states before and after
//   the recurrence 2 x (3 x 2 x 8 x 2) x 4 = 768: 3,712;
// - forward peak 512 + 2,048 + 3,712 = 6,272;
// - saved: 4 x (8 x 2 x 8) x 4 = 2,048 + 384 + 3 x (2 x 16 x 2) x 4 = 768 + 768 = 3,968;
// - backward: 2 x 512 + the gradient of G (1 x 2 x 4 x 4 x 2) x 4 = 256: 1,280.
TEST(Mamba2TorchScan, TinyShapeByHand) {
  const estimate::Mamba2ScanShape s{.batch = 1, .chunk = 4, .chunks = 2, .heads = 2,
                                    .head_dim = 8, .d_state = 2};
  EXPECT_EQ(estimate::Mamba2TorchScanBytes(s),
            (estimate::Mamba2ScanBytes{.g_intermediate = 512,
                                       .largest_other = 2048,
                                       .locals = 3712,
                                       .forward_peak = 6272,
                                       .saved = 3968,
                                       .backward_peak = 1280}));
}

TEST(Mamba2TorchScan, ShapeFromTheBambaBuilder) {
  auto model = arch::testing::BuildJson(TinyBamba());
  ASSERT_TRUE(model) << model.error().message;
  EXPECT_EQ(model->hp.ssm_chunk_size, 4u);
  ASSERT_EQ(model->hp.layers.size(), 2u);
  auto s = estimate::Mamba2ScanShapeFor(*model, model->hp.layers[0], 1, 5, 1);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->chunks, 2u);
  EXPECT_EQ(s->heads, 2u);
  EXPECT_EQ(s->head_dim, 8u);
  EXPECT_EQ(s->d_state, 2u);
  // Under --tp 2 the heads split: one per GPU.
  EXPECT_EQ(estimate::Mamba2ScanShapeFor(*model, model->hp.layers[0], 1, 5, 2)->heads, 1u);
  // The attention layer has no scan.
  EXPECT_FALSE(estimate::Mamba2ScanShapeFor(*model, model->hp.layers[1], 1, 5, 1));
}

bool Has(const std::vector<std::string>& lines, const std::string& text) {
  return std::any_of(lines.begin(), lines.end(),
                     [&](const std::string& l) { return l.find(text) != std::string::npos; });
}

InferenceOptions Prefill(Mamba2Scan scan) {
  InferenceOptions o;
  o.context_tokens = 5;
  o.dtype = Dtype::kF32;
  o.attn = AttnImpl::kEager;
  o.overhead.cuda_context_bytes = 0;
  o.mamba2_scan = scan;
  return o;
}

// The torch path's prefill peak is at the Mamba-2 layer: the residual stream and the normed input
// 2 x 5 x 8 x 4 = 320, in_proj's output 5 x 38 x 4 = 760, the conv's activated output
// 5 x 20 x 4 = 400, and the scan's 6,272: 7,752 at layer 0, where the recurrent states
// (allocated up front) are in the cache and the attention layer's K/V do not exist yet.
TEST(Mamba2TorchScan, InferencePrefillCountsTheScanOnTheTorchPath) {
  auto model = arch::testing::BuildJson(TinyBamba());
  ASSERT_TRUE(model) << model.error().message;
  auto torch = EstimateInference(*model, Prefill(Mamba2Scan::kTorch));
  ASSERT_TRUE(torch) << torch.error().message;
  uint64_t attention_kv = 0;
  for (const auto& l : torch->kv.layers) attention_kv += l.bytes_per_token ? l.bytes : 0;
  ASSERT_GT(attention_kv, 0u);
  EXPECT_EQ(torch->activation_peak_at, "Mamba-2 scan (torch path)");
  EXPECT_EQ(torch->activation_bytes, 7752u - attention_kv);
  EXPECT_TRUE(Has(torch->assumptions, "Mamba-2 scan on its torch path (--mamba-scan torch"));

  auto kernels = EstimateInference(*model, Prefill(Mamba2Scan::kKernels));
  ASSERT_TRUE(kernels) << kernels.error().message;
  EXPECT_NE(kernels->activation_peak_at, "Mamba-2 scan (torch path)");
  EXPECT_LT(kernels->activation_bytes, torch->activation_bytes);
  // The default is the kernels, and the line says what the torch path would add.
  const std::string extra = FormatBytes(torch->activation_bytes - kernels->activation_bytes);
  EXPECT_TRUE(Has(kernels->assumptions, "with the mamba_ssm kernels (--mamba-scan kernels): "
                                        "without them (CPU, or mamba_ssm not installed) the "
                                        "torch path needs " + extra + " more"));
  EXPECT_EQ(InferenceOptions{}.mamba2_scan, Mamba2Scan::kKernels);
}

// A model without Mamba-2 layers says nothing about the scan.
TEST(Mamba2TorchScan, NoLineWithoutMamba2Layers) {
  auto model = arch::testing::BuildJson(arch::testing::TinyDecoder("llama"));
  ASSERT_TRUE(model) << model.error().message;
  auto e = EstimateInference(*model, Prefill(Mamba2Scan::kTorch));
  ASSERT_TRUE(e) << e.error().message;
  EXPECT_FALSE(Has(e->assumptions, "Mamba-2"));
}

TrainOptions Step(ComputeDevice device, std::optional<Mamba2Scan> scan) {
  TrainOptions o;
  o.method = TrainMethod::kFull;
  o.precision = Precision::kFp32;
  o.seq = 5;
  o.attn = AttnImpl::kEager;
  o.device = device;
  o.mamba2_scan = scan;
  o.overhead.cuda_context_bytes = 0;
  return o;
}

const StagePart* Part(const TrainEstimate& e, const std::string& stage, const std::string& part) {
  for (const auto& st : e.stages) {
    if (st.stage != stage) continue;
    for (const auto& p : st.parts) {
      if (p.name == part) return &p;
    }
  }
  return nullptr;
}

// Training on the torch path (the default on CPU): the one Mamba-2 layer saves the scan's 3,968
// bytes more; the forward holds the scan's 6,272 transient bytes and the backward of
// G_intermediate's product its 1,280.
TEST(Mamba2TorchScan, TrainingSavesTheScanAndHoldsItsBackward) {
  auto model = arch::testing::BuildJson(TinyBamba());
  ASSERT_TRUE(model) << model.error().message;
  auto cpu = EstimateTraining(*model, Step(ComputeDevice::kCpu, std::nullopt));
  auto kernels = EstimateTraining(*model, Step(ComputeDevice::kCpu, Mamba2Scan::kKernels));
  ASSERT_TRUE(cpu) << cpu.error().message;
  ASSERT_TRUE(kernels) << kernels.error().message;
  EXPECT_EQ(cpu->activation_bytes, kernels->activation_bytes + 3968);
  const StagePart* fwd = Part(*cpu, "forward", "Mamba-2 scan (torch path)");
  ASSERT_NE(fwd, nullptr);
  EXPECT_EQ(fwd->bytes, 6272u);
  const StagePart* bwd = Part(*cpu, "backward", "Mamba-2 scan backward (torch path)");
  ASSERT_NE(bwd, nullptr);
  EXPECT_EQ(bwd->bytes, 1280u);
  EXPECT_EQ(Part(*kernels, "forward", "Mamba-2 scan (torch path)"), nullptr);
  EXPECT_TRUE(Has(cpu->assumptions, "--mamba-scan torch"));
  // CUDA: the kernels by default, and the same estimate as asking for them.
  auto cuda = EstimateTraining(*model, Step(ComputeDevice::kCuda, std::nullopt));
  ASSERT_TRUE(cuda) << cuda.error().message;
  EXPECT_EQ(Part(*cuda, "forward", "Mamba-2 scan (torch path)"), nullptr);
  EXPECT_TRUE(Has(cuda->assumptions, "--mamba-scan kernels"));
}

TEST(Mamba2TorchScan, ParseNames) {
  EXPECT_EQ(*ParseMamba2Scan("torch", "--mamba-scan"), Mamba2Scan::kTorch);
  EXPECT_EQ(*ParseMamba2Scan("kernels", "--mamba-scan"), Mamba2Scan::kKernels);
  EXPECT_EQ(*ParseMamba2Scan("mamba_ssm", "--mamba-scan"), Mamba2Scan::kKernels);
  auto bad = ParseMamba2Scan("cuda", "--mamba-scan");
  testing::ExpectErrorContains(bad, "--mamba-scan cuda: expected kernels");
  EXPECT_EQ(Mamba2ScanName(Mamba2Scan::kTorch), "torch");
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit
