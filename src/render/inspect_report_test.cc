// `memfit inspect`'s renderer (render/inspect_report.cc) on a hand-made model with every kind of
// tensor the JSON distinguishes: tied, non-persistent buffer, packed quantized, multimodal
// component, and one only the base AutoModel has.

#include <gtest/gtest.h>

#include "formats/json.h"
#include "memfit/render.h"
#include "model/tensor_test_util.h"
#include "render/report_json.h"

namespace memfit {
namespace {
namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

using testing::StoredTensor;

//   model.embed.weight     [8, 4] F32   32 el  128 B
//   model.layers.0.w       [4, 4] BF16  16 el   32 B
//   model.layers.1.w       [4, 4] BF16  16 el   32 B
//   lm_head.weight         [8, 4] F32, tied to the embedding, not stored, head: resident once
//   model.rotary.inv_freq  [2] F32 non-persistent buffer, not stored: 8 B
//   vision.patch.weight    [4, 2] U8 packed 4-bit: 8 B stored, 16 logical parameters, "vision"
//   pooler.w               [4, 4] F32 base_only: not in the class described
// stored 128 + 32 + 32 + 8 = 200 B; resident 200 + 8 (buffer) = 208 B;
// parameters 32 + 16 + 16 + 16 = 80.
Model Tiny() {
  Model m = testing::ToyModel("tiny-vl", "ToyForConditionalGeneration",
                              {StoredTensor("model.embed.weight", {8, 4}, Dtype::kF32),
                               StoredTensor("model.layers.0.w", {4, 4}, Dtype::kBF16),
                               StoredTensor("model.layers.1.w", {4, 4}, Dtype::kBF16),
                               StoredTensor("lm_head.weight", {8, 4}, Dtype::kF32),
                               StoredTensor("model.rotary.inv_freq", {2}, Dtype::kF32),
                               StoredTensor("vision.patch.weight", {4, 2}, Dtype::kU8),
                               StoredTensor("pooler.w", {4, 4}, Dtype::kF32)});
  m.tensors[3].tied_to = "model.embed.weight";
  m.tensors[3].stored = false;
  m.tensors[3].in_head = true;
  m.tensors[4].kind = TensorKind::kNonPersistentBuffer;
  m.tensors[4].stored = false;
  m.tensors[5].logical_params = 16;
  m.tensors[5].component = "vision";
  m.tensors[6].base_only = true;
  m.tensors[6].stored = false;
  m.notes = {"a note"};
  return m;
}

TEST(InspectReportTest, JsonTotalsHistogramAndTensors) {
  const nlohmann::json j = InspectJson(Tiny());
  EXPECT_EQ(j["schema"], "memfit.inspect/1");
  EXPECT_EQ(j["model"], "tiny-vl");
  EXPECT_EQ(j["architecture"], "ToyForConditionalGeneration");
  EXPECT_EQ(j["parameters"], 80);
  EXPECT_EQ(j["stored_bytes"], 200);
  EXPECT_EQ(j["resident_bytes"], 208);
  // Stored tensors only, by dtype label: F32 is the embedding alone (the head and the buffer
  // are not stored); BF16 the two layers.
  EXPECT_EQ(j["dtypes"], nlohmann::json::parse(R"([
      {"dtype": "BF16", "elements": 32, "bytes": 64},
      {"dtype": "F32", "elements": 32, "bytes": 128},
      {"dtype": "U8", "elements": 8, "bytes": 8}])"));
  // Six tensors: pooler.w (base_only) is not one of the class's.
  ASSERT_EQ(j["tensors"].size(), 6u);
  EXPECT_EQ(
      j["tensors"][0],
      nlohmann::json::parse(
          R"({"name": "model.embed.weight", "shape": [8, 4], "dtype": "F32", "bytes": 128, "stored": true})"));
  EXPECT_EQ(
      j["tensors"][3],
      nlohmann::json::parse(
          R"({"name": "lm_head.weight", "shape": [8, 4], "dtype": "F32", "bytes": 128, "stored": false,
          "tied_to": "model.embed.weight", "head": true})"));
  EXPECT_EQ(j["tensors"][4]["buffer"], "non-persistent");
  EXPECT_EQ(j["tensors"][5]["parameters"], 16);
  EXPECT_EQ(j["tensors"][5]["component"], "vision");
  EXPECT_FALSE(j["tensors"][0].contains("parameters"));  // only where it differs from numel
  // Components in order of first appearance; untagged tensors under "shared":
  // shared: 32 + 16 + 16 = 64 parameters, 192 B stored, 192 + 8 (buffer) = 200 B resident.
  EXPECT_EQ(j["components"], nlohmann::json::parse(R"([
      {"component": "shared", "parameters": 64, "stored_bytes": 192, "resident_bytes": 200},
      {"component": "vision", "parameters": 16, "stored_bytes": 8, "resident_bytes": 8}])"));
  EXPECT_EQ(j["assumptions"], nlohmann::json::parse(R"(["made by hand"])"));
  EXPECT_EQ(j["notes"], nlohmann::json::parse(R"(["a note"])"));
  EXPECT_EQ(RenderInspect(Tiny(), OutputFormat::kJson, 2), DumpJson(j) + "\n");
}

TEST(InspectReportTest, NoComponentsForASingleModel) {
  Model m = Tiny();
  m.tensors[5].component.clear();
  EXPECT_FALSE(InspectJson(m).contains("components"));
}

TEST(InspectReportTest, GroupsByDepthMergingNumberedLayers) {
  // Depth 3: model.layers.0.w and model.layers.1.w merge into model.layers.* (2 tensors, 32
  // parameters, 64 B); a name shorter than the depth groups under its module; the tied head
  // counts no parameters and no bytes (shared with the embedding); the buffer no parameters.
  EXPECT_EQ(RenderInspect(Tiny(), OutputFormat::kCsv, 3),
            "module,tensors,parameters,bytes\n"
            "lm_head,1,0,0 B\n"
            "model.embed,1,32,128 B\n"
            "model.layers.*,2,32,64 B\n"
            "model.rotary,1,0,8 B\n"
            "vision.patch,1,16,8 B\n");
  // Depth 1: model (embed + layers + buffer: 4 tensors, 64 parameters, 200 B).
  EXPECT_EQ(RenderInspect(Tiny(), OutputFormat::kMarkdown, 1),
            "| module | tensors | parameters | bytes |\n"
            "|---|---:|---:|---:|\n"
            "| lm_head | 1 | 0 | 0 B |\n"
            "| model | 4 | 64 | 200 B |\n"
            "| vision | 1 | 16 | 8 B |\n");
}

// An MLX-quantized module (weight, scales, biases) is one row, at a depth longer or shorter than
// its name: its scales and biases are not modules of their own.
TEST(InspectReportTest, QuantizedModuleIsOneRow) {
  Model m = testing::ToyModel("mlx", "ToyForCausalLM",
                              {StoredTensor("lm_head.biases", {8, 1}, Dtype::kBF16),
                               StoredTensor("lm_head.scales", {8, 1}, Dtype::kBF16),
                               StoredTensor("lm_head.weight", {8, 8}, Dtype::kU32),
                               StoredTensor("norm", {8}, Dtype::kBF16)});
  m.tensors[0].logical_params = 0;
  m.tensors[1].logical_params = 0;
  m.tensors[2].logical_params = 512;
  for (int depth : {1, 3}) {
    EXPECT_EQ(RenderInspect(m, OutputFormat::kCsv, depth),
              "module,tensors,parameters,bytes\n"
              "lm_head,3,512,288 B\n"
              "norm,1,8,16 B\n")
        << depth;
  }
}

TEST(InspectReportTest, TableHeadlineHistogramComponentsAndAssumptions) {
  const std::string table = RenderInspect(Tiny(), OutputFormat::kTable, 1);
  // The class has six tensors (pooler.w belongs to the base AutoModel only).
  EXPECT_TRUE(table.starts_with("tiny-vl: 6 tensors, 80 parameters, 200 B stored (hand-made)\n\n"))
      << table;
  // Tensors per stored dtype and their share of the 200 stored bytes: 64/200 = 32.0%,
  // 128/200 = 64.0%, 8/200 = 4.0%.
  EXPECT_NE(table.find("BF16         2   64 B  32.0%\n"), std::string::npos) << table;
  EXPECT_NE(table.find("F32          1  128 B  64.0%\n"), std::string::npos) << table;
  EXPECT_NE(table.find("shared             64     200 B\n"), std::string::npos) << table;
  EXPECT_TRUE(table.ends_with("assumption: made by hand\nnote: a note\n")) << table;
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit
