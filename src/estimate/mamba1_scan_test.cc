// transformers' torch-path Mamba-1 scan (slow_forward), counted by hand at 4 sequences x 2,048
// tokens, a size validation/results does not cover.

#include "estimate/mamba1_scan.h"

#include <gtest/gtest.h>

#include "estimate/hand_count_test_util.h"
#include "memfit/estimate_inference.h"
#include "model/arch/arch_test_util.h"

namespace memfit {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

// Jamba shape small enough to count by hand: layer 0 Mamba (d_inner = 2 x 32 = 64, d_state 16,
// dt rank ceil(32 / 16) = 2), layer 1 attention (4 heads, 2 KV heads of 8), dense MLP 64,
// vocab 100.
nlohmann::json TinyJamba() {
  return estimate_test::HandCountConfig(
      "jamba", "JambaForCausalLM",
      {{"attn_layer_period", 2}, {"attn_layer_offset", 1}, {"expert_layer_period", 2},
       {"expert_layer_offset", 1}, {"num_experts", 1}, {"mamba_d_state", 16}, {"mamba_d_conv", 4},
       {"mamba_expand", 2}});
}

// b = 4, T = 2,048, d = 64, n = 16, r = 2, bfloat16:
//   discrete_A, discrete_B, deltaB_u   3 x 4 x 64 x 2,048 x 16 x 4 = 100,663,296
//   dt, the step outputs' list, scan_output, act(gate), product
//                                      5 x 4 x 64 x 2,048 x 2      =   5,242,880
//   x_proj's output and the normed dt, B, C
//                                      2 x 4 x 2,048 x (2 + 32) x 2 =  1,114,112
//                                                                  = 107,020,288
TEST(Mamba1Scan, SlowForwardTensorsByHand) {
  estimate::Mamba1ScanShape s{.batch = 4, .seq = 2048, .channels = 64, .d_state = 16,
                              .dt_rank = 2, .normed_ssm_parameters = true};
  const estimate::Mamba1ScanBytes r = estimate::Mamba1TorchScanBytes(s, 2);
  EXPECT_EQ(r.float32_products, 100663296u);
  EXPECT_EQ(r.locals, 5242880u + 1114112u);
  EXPECT_EQ(r.forward_peak, 107020288u);
  // MambaMixer keeps dt, B and C as views of x_proj's output: half the small term.
  s.normed_ssm_parameters = false;
  EXPECT_EQ(estimate::Mamba1TorchScanBytes(s, 2).forward_peak, 107020288u - 557056u);
}

InferenceEstimate Estimate(const Model& model, Mamba2Scan scan) {
  InferenceOptions o = estimate_test::HandCountOptions(4, 2048, Dtype::kBF16, AttnImpl::kSdpa);
  o.mamba2_scan = scan;
  return estimate_test::EstimateOk(model, o);
}

// The prefill peak on the torch path sits in the Mamba layer: the residual stream and normed
// input 2 x 8,192 x 32 x 2 = 1,048,576, in_proj's output 8,192 x 128 x 2 = 2,097,152, the conv's
// output 8,192 x 64 x 2 = 1,048,576 and the scan's 107,020,288 = 111,214,592 at layer 0, where
// the attention layer's cache (8,192 x 2 x 2 x 8 x 2 = 524,288) does not exist yet: 110,690,304
// beyond the whole cache.
TEST(Mamba1Scan, JambaPrefillOnTheTorchPath) {
  auto model = arch::testing::BuildJson(TinyJamba());
  ASSERT_TRUE(model) << model.error().message;
  ASSERT_EQ(model->hp.layers.size(), 2u);
  ASSERT_EQ(model->hp.layers[0].mixer, LayerMixer::kMamba);
  const InferenceEstimate torch = Estimate(*model, Mamba2Scan::kTorch);
  EXPECT_EQ(torch.activation_peak_at, "Mamba-1 scan (torch path)");
  EXPECT_EQ(torch.activation_bytes, 110690304u);
  const InferenceEstimate kernels = Estimate(*model, Mamba2Scan::kKernels);
  EXPECT_LT(kernels.activation_bytes, torch.activation_bytes);
  bool said = false;
  for (const auto& a : kernels.assumptions) {
    said = said || a.find("the Mamba scan with the mamba_ssm kernels") != a.npos;
  }
  EXPECT_TRUE(said);
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit
