// The one verdict of `inference --gpu`, `train --gpu` and `fit` (memfit/verdict.h), on figures
// chosen by hand: which parts are named as too big, how many GPUs, the fix, the exact line.

#include "memfit/verdict.h"

#include <gtest/gtest.h>

namespace memfit {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

constexpr uint64_t kGiB = uint64_t{1} << 30;

HardwareFacts OneRtx4090(uint64_t need_gib) {
  return HardwareFacts{.gpu_label = "RTX 4090", .gpu_memory_bytes = 24 * kGiB,
                       .need_bytes = need_gib * kGiB};
}

TEST(VerdictTest, FitsSaysOnWhatAndHowMuch) {
  HardwareFacts f = OneRtx4090(10);
  f.parts = {{"weights", 10 * kGiB}};
  const HardwareVerdict v = JudgeHardware(f);
  EXPECT_EQ(v.verdict, Verdict::kFits);
  EXPECT_EQ(v.reason, "");
  EXPECT_EQ(v.line, "fits on 1 x RTX 4090: needs 10.00 GiB per GPU, one RTX 4090 has 24.00 GiB");
}

TEST(VerdictTest, DoesNotFitNamesThePartThatIsTooBigAndTheGpusThatWould) {
  // 56 + 4 + 2 = 62 GiB on a 24 GiB GPU: the weights alone exceed it.
  HardwareFacts f = OneRtx4090(62);
  f.parts = {{"KV cache", 4 * kGiB}, {"weights", 56 * kGiB}, {"activations", 2 * kGiB},
             {"CUDA graphs", 0}};
  f.gpus_needed = 4;
  f.gpus_needed_flags = "--tp 4";
  const HardwareVerdict v = JudgeHardware(f);
  EXPECT_EQ(v.verdict, Verdict::kDoesNotFit);
  EXPECT_EQ(v.reason, "weights 56.00 GiB alone exceeds one GPU");
  EXPECT_EQ(v.line, "does not fit on 1 x RTX 4090: needs 62.00 GiB per GPU, one RTX 4090 has "
                    "24.00 GiB (weights 56.00 GiB alone exceeds one GPU); 4 x RTX 4090 would fit "
                    "with --tp 4");
}

TEST(VerdictTest, PartsAreNamedUntilTogetherTheyExceedTheGpu) {
  // 15 GiB fits alone; 15 + 12 = 27 > 24 does not; the 1 GiB part is not needed to say why.
  HardwareFacts f = OneRtx4090(28);
  f.parts = {{"activations", 12 * kGiB}, {"weights", 15 * kGiB}, {"CUDA context", 1 * kGiB}};
  f.no_count_reason = "not with ZeRO-3 over up to 64";
  f.fix_flags = "--method qlora --checkpointing full";
  f.fix_bytes = 10 * kGiB;
  const HardwareVerdict v = JudgeHardware(f);
  EXPECT_EQ(v.reason, "weights 15.00 GiB + activations 12.00 GiB exceed one GPU");
  EXPECT_EQ(v.line, "does not fit on 1 x RTX 4090: needs 28.00 GiB per GPU, one RTX 4090 has "
                    "24.00 GiB (weights 15.00 GiB + activations 12.00 GiB exceed one GPU); no "
                    "number of RTX 4090 holds it: not with ZeRO-3 over up to 64; fits with "
                    "--method qlora --checkpointing full (10.00 GiB)");
}

TEST(VerdictTest, ADeviceMapDecidesByPlacementOverAllGpus) {
  // Totals over 2 x 24 GiB: 40 GiB of 60 could not be placed.
  HardwareFacts f{.gpu_label = "RTX 4090", .gpu_memory_bytes = 24 * kGiB, .gpus = 2,
                  .per_gpu = false, .need_bytes = 60 * kGiB,
                  .parts = {{"weights", 60 * kGiB}}, .placed = Verdict::kDoesNotFit,
                  .unplaced_bytes = 40 * kGiB};
  HardwareVerdict v = JudgeHardware(f);
  EXPECT_EQ(v.reason, "40.00 GiB could not be placed; weights 60.00 GiB alone exceeds the GPUs");
  EXPECT_EQ(v.line, "does not fit on 2 x RTX 4090: needs 60.00 GiB, 2 x RTX 4090 have 48.00 GiB "
                    "(40.00 GiB could not be placed; weights 60.00 GiB alone exceeds the GPUs)");
  // With RAM for the rest it fits with offload.
  f.placed = Verdict::kFitsWithOffload;
  f.unplaced_bytes = 0;
  f.offloaded_bytes = 14 * kGiB;
  v = JudgeHardware(f);
  EXPECT_EQ(v.verdict, Verdict::kFitsWithOffload);
  EXPECT_EQ(v.line, "fits with offload on 2 x RTX 4090: 14.00 GiB offloaded to CPU RAM or disk "
                    "(60.00 GiB in all)");
}

TEST(VerdictTest, DoesNotFitAlwaysSaysWhyEvenWithoutParts) {
  HardwareFacts f = OneRtx4090(30);
  const HardwareVerdict v = JudgeHardware(f);
  EXPECT_EQ(v.verdict, Verdict::kDoesNotFit);
  EXPECT_EQ(v.reason, "30.00 GiB is more than one GPU's 24.00 GiB");
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit
