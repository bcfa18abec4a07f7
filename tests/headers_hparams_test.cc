// Weights from safetensors headers for a family memfit has no builder for (a Gemma 3 style
// multimodal config under a model_type no builder claims; gemma3 itself now has one): the load table is exact, and inference / train / fit now answer too, with the
// text model's hyperparameters read from text_config (the issue's own example).

#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_run.h"
#include "test_support.h"

namespace memfit {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

namespace fs = std::filesystem;

using testing::RunMemfit;

// Two text layers (one sliding of window 4, one global) of hidden 8, 2 heads of 4, 1 KV head.
const char* kConfig = R"({"model_type": "newvlm", "architectures":
  ["NewVlmForConditionalGeneration"], "torch_dtype": "bfloat16",
  "text_config": {"model_type": "gemma3_text", "hidden_size": 8, "num_hidden_layers": 2,
    "num_attention_heads": 2, "num_key_value_heads": 1, "head_dim": 4, "vocab_size": 16,
    "intermediate_size": 12, "sliding_window": 4, "max_position_embeddings": 64,
    "layer_types": ["sliding_attention", "full_attention"]},
  "vision_config": {"model_type": "siglip_vision_model", "hidden_size": 8,
    "num_hidden_layers": 1, "num_attention_heads": 2, "intermediate_size": 16, "patch_size": 4}})";

std::string WriteModel() {
  fs::path dir = fs::path(testing::TempDir()) / "gemma3-like";
  fs::create_directories(dir);
  std::ofstream(dir / "config.json") << kConfig;
  std::vector<testing::FakeTensor> tensors = {
      {"language_model.model.embed_tokens.weight", "BF16", {16, 8}},
      {"language_model.model.layers.0.self_attn.q_proj.weight", "BF16", {8, 8}},
      {"language_model.model.layers.0.self_attn.k_proj.weight", "BF16", {4, 8}},
      {"language_model.model.layers.0.self_attn.v_proj.weight", "BF16", {4, 8}},
      {"language_model.model.layers.0.self_attn.o_proj.weight", "BF16", {8, 8}},
      {"language_model.model.layers.1.self_attn.q_proj.weight", "BF16", {8, 8}},
      {"language_model.model.layers.1.self_attn.k_proj.weight", "BF16", {4, 8}},
      {"language_model.model.layers.1.self_attn.v_proj.weight", "BF16", {4, 8}},
      {"language_model.model.layers.1.self_attn.o_proj.weight", "BF16", {8, 8}},
      {"vision_tower.vision_model.embeddings.patch_embedding.weight", "BF16", {8, 3, 4, 4}},
  };
  std::ofstream(dir / "model.safetensors", std::ios::binary) << testing::MakeSafetensors(tensors);
  return dir.string();
}

TEST(HeadersHparams, InferenceAnswersForAFamilyWithoutABuilder) {
  const std::string dir = WriteModel();
  auto load = RunMemfit({"estimate-memory", dir, "--format", "json"});
  ASSERT_EQ(load.code, 0) << load.err;
  // Stored bytes exact from the header: (128 + 2 x (64 + 32 + 32 + 64) + 384) x 2 B = 1,792.
  auto lj = nlohmann::json::parse(load.out);
  EXPECT_EQ(lj["stored_bytes"], 1792u);
  auto r = RunMemfit({"inference", dir, "--context", "32", "--format", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  // Per token: 1 KV head x (4 + 4) x 2 B = 16 B per layer. At 32 tokens: the sliding layer
  // keeps its window of 4 tokens (64 B), the global layer all 32 (512 B).
  EXPECT_EQ(j["kv_bytes_per_token"], 32u);
  EXPECT_EQ(j["per_gpu"]["kv_cache"], 64u + 512u);
  ASSERT_EQ(j["kv_layers"].size(), 2u);
  EXPECT_EQ(j["kv_layers"][0]["kind"], "sliding");
  bool said = false;
  for (const auto& a : j["assumptions"]) {
    said = said || a.get<std::string>().find("generic reader") != std::string::npos;
  }
  EXPECT_TRUE(said) << r.out;
  auto t = RunMemfit({"train", dir, "--method", "lora", "--seq", "16", "--format", "json"});
  EXPECT_EQ(t.code, 0) << t.err;
  auto f = RunMemfit({"fit", dir, "--gpu", "24GiB", "--task", "inference", "--format", "json"});
  EXPECT_EQ(f.code, 0) << f.err;
}

TEST(HeadersHparams, ConfigWithoutHeadsStillLoadsAndNamesTheField) {
  fs::path dir = fs::path(testing::TempDir()) / "no-heads";
  fs::create_directories(dir);
  std::ofstream(dir / "config.json")
      << R"({"model_type": "mystery", "architectures": ["MysteryForCausalLM"],
            "hidden_size": 8, "num_hidden_layers": 2, "vocab_size": 16, "torch_dtype": "float16"})";
  std::ofstream(dir / "model.safetensors", std::ios::binary)
      << testing::MakeSafetensors({{"model.layers.0.w.weight", "F16", {8, 8}}});
  auto load = RunMemfit({"estimate-memory", dir.string()});
  EXPECT_EQ(load.code, 0) << load.err;
  auto r = RunMemfit({"inference", dir.string(), "--context", "32"});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("num_attention_heads"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("estimate-memory"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit
