#include "memfit/stored_format.h"

#include <gtest/gtest.h>

#include "estimate/tiny_moe_test_util.h"
#include "formats/hf_config_json.h"
#include "memfit/estimate_inference.h"
#include "memfit/estimate_train.h"
#include "memfit/quantization.h"

namespace memfit {
namespace {
namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

using estimate_test::AddTensor;
using estimate_test::TinyFp8Moe;

bool Contains(const std::vector<std::string>& lines, std::string_view text) {
  for (const auto& l : lines) {
    if (l.find(text) != std::string::npos) return true;
  }
  return false;
}

// TinyFp8Moe (estimate/tiny_moe_test_util.h): q 516 + k 132 + v 132 + o 516 + 8 experts x 132
// = 2352 bytes stored quantized (FP8 data plus one fp32 weight_scale_inv each), in 16 tensors.
TEST(StoredFormat, DetectsFp8BlockDataAndScales) {
  const Model m = TinyFp8Moe();
  StoredQuantization s = DetectStoredQuantization(m);
  EXPECT_EQ(s.format, StoredFormat::kFp8Block);
  EXPECT_EQ(s.quantized_bytes, 2352u);
  EXPECT_EQ(s.tensors, 24u);  // 12 weights + 12 scales
  Model plain = m;
  plain.quantization_config.reset();
  for (auto& t : plain.tensors) {
    if (t.dtype == Dtype::kF8E4M3) t.dtype = Dtype::kBF16;
  }
  EXPECT_EQ(DetectStoredQuantization(plain).format, StoredFormat::kNone);
}

// As stored at bfloat16: embed 4096 + norm 32 + FP8 2352 + router 128 + final norm 32 + lm_head
// 4096 = 10736. Dequantized (--quant none): q 32x16x2 = 1024, k 256, v 256, o 1024, experts
// 8 x 128 x 2 = 2048 -> 4608 in place of 2352: 10736 - 2352 + 4608 = 12992. At float32 as stored:
// embed 8192 + norms 64 + 64 + router 256 + lm_head 8192 + 2352 = 19120 (--dtype changes only what
// is not quantized).
TEST(StoredFormat, WeightsAsStoredDequantizedAndAtAnotherDtype) {
  const Model m = TinyFp8Moe();
  auto stored = EstimateQuantizedWeights(m, QuantOptions{});
  ASSERT_TRUE(stored) << stored.error().message;
  EXPECT_EQ(stored->total_bytes, 10736u);
  EXPECT_EQ(stored->stored_quantized_bytes, 2352u);
  EXPECT_EQ(stored->stored_format, "fp8-block");
  auto none = ParseQuant("none");
  ASSERT_TRUE(none);
  auto dq = EstimateQuantizedWeights(m, *none);
  ASSERT_TRUE(dq);
  EXPECT_EQ(dq->total_bytes, 12992u);
  EXPECT_EQ(dq->stored_quantized_bytes, 0u);
  auto f32 = EstimateQuantizedWeights(m, QuantOptions{.compute_dtype = Dtype::kF32});
  ASSERT_TRUE(f32);
  EXPECT_EQ(f32->total_bytes, 19120u);
  // --quant nf4 re-quantizes the FP8 weights: q [32, 16] = 512 values -> 256 packed + 8 fp32
  // absmax (32) + the 64-byte code = 352; its weight_scale_inv is gone.
  auto nf4 = ParseQuant("nf4");
  ASSERT_TRUE(nf4);
  auto re = EstimateQuantizedWeights(m, *nf4);
  ASSERT_TRUE(re);
  EXPECT_EQ(re->tensor_bytes[2], 352u);  // model.layers.0.self_attn.q_proj.weight
  EXPECT_EQ(re->tensor_bytes[3], 0u);    // its weight_scale_inv
}

TEST(StoredFormat, EngineAndComputeCapabilityDecide) {
  std::vector<std::string> a;
  // transformers: FP8 needs 8.9 (quantizer_finegrained_fp8.py); A100 (8.0) dequantizes.
  auto h = HandleStoredFormat(StoredFormat::kFp8Block, Engine::kTransformers, 80, a);
  ASSERT_TRUE(h);
  EXPECT_EQ(*h, StoredHandling::kDequantize);
  EXPECT_TRUE(Contains(a, "8.9"));
  EXPECT_EQ(*HandleStoredFormat(StoredFormat::kFp8Block, Engine::kTransformers, 90, a),
            StoredHandling::kKeep);
  // vLLM on A100: Marlin weight-only FP8 keeps the bytes; V100 (7.0) is refused.
  a.clear();
  EXPECT_EQ(*HandleStoredFormat(StoredFormat::kFp8, Engine::kVllm, 80, a), StoredHandling::kKeep);
  EXPECT_TRUE(Contains(a, "Marlin"));
  auto v100 = HandleStoredFormat(StoredFormat::kFp8, Engine::kVllm, 70, a);
  ASSERT_FALSE(v100);
  EXPECT_EQ(v100.error().message.rfind("vllm:", 0), 0u);
  // transformers MXFP4: 7.5 and up run it (T4), below it is dequantized to bf16.
  EXPECT_EQ(*HandleStoredFormat(StoredFormat::kMxfp4, Engine::kTransformers, 75, a),
            StoredHandling::kKeep);
  EXPECT_EQ(*HandleStoredFormat(StoredFormat::kMxfp4, Engine::kTransformers, 70, a),
            StoredHandling::kDequantize);
  // Unknown GPU: kept, and said.
  a.clear();
  EXPECT_EQ(*HandleStoredFormat(StoredFormat::kNvfp4, Engine::kSglang, 0, a),
            StoredHandling::kKeep);
  EXPECT_TRUE(Contains(a, "unknown"));
}

// NVFP4 (ModelOpt) as a header gives it: weight uint8 [64, 16] (two values per byte) = 1024,
// weight_scale F8 [64, 2] (one per 16 values) = 128, weight_scale_2 and input_scale fp32 scalars
// = 8: 1160 as stored. Dequantized to bf16: 64 x 32 x 2 = 4096.
TEST(StoredFormat, Nvfp4FromHeadersKeptOrUnpacked) {
  Model m;
  m.name = "nvfp4";
  m.quantization_config = std::make_shared<const JsonValue>(
      nlohmann::json{{"quant_method", "modelopt"}, {"quant_algo", "NVFP4"}});
  AddTensor(m, "model.layers.0.mlp.up_proj.weight", {64, 16}, Dtype::kU8);
  AddTensor(m, "model.layers.0.mlp.up_proj.weight_scale", {64, 2}, Dtype::kF8E4M3);
  AddTensor(m, "model.layers.0.mlp.up_proj.weight_scale_2", {}, Dtype::kF32);
  AddTensor(m, "model.layers.0.mlp.up_proj.input_scale", {}, Dtype::kF32);
  EXPECT_EQ(DetectStoredQuantization(m).format, StoredFormat::kNvfp4);
  auto stored = EstimateQuantizedWeights(m, QuantOptions{});
  ASSERT_TRUE(stored);
  EXPECT_EQ(stored->total_bytes, 1160u);
  auto dq = EstimateQuantizedWeights(m, QuantOptions{.dequantize_stored = true});
  ASSERT_TRUE(dq);
  EXPECT_EQ(dq->total_bytes, 4096u);
}

// MLX (no quant_method): a uint32 weight beside its scales names the format, with or without the
// block; its scales and biases are stored quantized, a plain norm is not. No engine but mlx-lm
// loads it, and the assumption says so.
TEST(StoredFormat, MlxNamedFromItsLayout) {
  for (bool block : {true, false}) {
    Model m;
    m.name = "mlx";
    if (block) {
      m.quantization_config =
          std::make_shared<const JsonValue>(nlohmann::json{{"group_size", 64}, {"bits", 4}});
    }
    AddTensor(m, "model.layers.0.mlp.up_proj.biases", {64, 2}, Dtype::kBF16);
    AddTensor(m, "model.layers.0.mlp.up_proj.scales", {64, 2}, Dtype::kBF16);
    AddTensor(m, "model.layers.0.mlp.up_proj.weight", {64, 16}, Dtype::kU32);
    AddTensor(m, "model.norm.weight", {128}, Dtype::kBF16);
    const StoredQuantization q = DetectStoredQuantization(m);
    EXPECT_EQ(q.format, StoredFormat::kMlx) << block;
    EXPECT_EQ(StoredFormatName(q.format), "mlx");
    EXPECT_EQ(q.tensors, 3u);
    EXPECT_FALSE(q.quantized[3]);
  }
  // Apple silicon or a bare size (no compute capability): the stored bytes stand in, said.
  std::vector<std::string> assumptions;
  auto handled = HandleStoredFormat(StoredFormat::kMlx, Engine::kVllm, 0, assumptions);
  ASSERT_TRUE(handled);
  EXPECT_EQ(*handled, StoredHandling::kKeep);
  EXPECT_TRUE(Contains(assumptions, "vllm has no MLX loader"));
  // A CUDA GPU: nothing loads it there, so no verdict, and the way out is named.
  auto cuda = HandleStoredFormat(StoredFormat::kMlx, Engine::kTransformers, 86, assumptions);
  ASSERT_FALSE(cuda);
  EXPECT_EQ(cuda.error().message,
            "transformers: an MLX checkpoint (mlx-lm's format, for Apple silicon) does not load on "
            "a CUDA GPU (compute capability 8.6): --quant none counts the model dequantized to "
            "--dtype, or give the original (non-MLX) repository");
}

// The inference estimate picks the handling from the GPU: TinyFp8Moe with transformers on an
// A100 (8.0) loads 12992 bytes (dequantized), on an H100 (9.0) 10736 (as stored).
TEST(StoredFormat, InferenceWeightsFollowTheGpu) {
  const Model m = TinyFp8Moe();
  InferenceOptions o;
  o.context_tokens = 16;
  o.compute_capability = 80;
  auto a100 = EstimateInference(m, o);
  ASSERT_TRUE(a100) << a100.error().message;
  EXPECT_EQ(a100->weights_bytes, 12992u);
  EXPECT_TRUE(Contains(a100->assumptions, "dequantized"));
  o.compute_capability = 90;
  auto h100 = EstimateInference(m, o);
  ASSERT_TRUE(h100);
  EXPECT_EQ(h100->weights_bytes, 10736u);
  EXPECT_TRUE(Contains(h100->assumptions, "weights as stored"));
}

// Training over a quantized release says what it counted: FP8 dequantized (transformers' FP8
// quantizer is not trainable), packed formats as stored.
TEST(StoredFormat, TrainingNamesTheStoredBase) {
  TrainOptions o;
  o.seq = 16;
  auto fp8 = EstimateTraining(TinyFp8Moe(), o);
  ASSERT_TRUE(fp8) << fp8.error().message;
  EXPECT_TRUE(Contains(fp8->assumptions, "counted dequantized"));
  Model plain = TinyFp8Moe();
  plain.quantization_config.reset();
  for (auto& t : plain.tensors) {
    if (t.dtype == Dtype::kF8E4M3) t.dtype = Dtype::kBF16;
    if (t.name.ends_with("weight_scale_inv")) t.dtype = Dtype::kBF16;
  }
  auto bf16 = EstimateTraining(plain, o);
  ASSERT_TRUE(bf16) << bf16.error().message;
  EXPECT_FALSE(Contains(bf16->assumptions, "the checkpoint stores"));
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit
