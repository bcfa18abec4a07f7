// HfConfig::Parse: auto_map's keys in file order, read from the top-level object only.

#include "memfit/hf_config.h"
#include "formats/hf_config_json.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace memfit {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

TEST(HfConfigTest, AutoMapKeysInFileOrderFromTheTopLevelOnly) {
  // A nested "auto_map" (in text_config) and a string value "auto_map" must not be taken; quoted
  // braces and escaped quotes inside strings must not confuse the scan.
  const std::string text = R"({
    "note": "a \"quoted\" { brace",
    "text_config": {"auto_map": {"Zeta": "x.Y"}, "name": "auto_map"},
    "auto_map": {"AutoModelForCausalLM": "m.C", "AutoConfig": "c.K", "AutoModel": "m.B"},
    "model_type": "x", "limits": [0.0, Infinity]
  })";
  auto config = HfConfig::Parse(text, "config.json");
  ASSERT_TRUE(config) << config.error().message;
  EXPECT_EQ(config->auto_map_keys(),
            (std::vector<std::string>{"AutoModelForCausalLM", "AutoConfig", "AutoModel"}));
}

TEST(HfConfigTest, ALargeQuantizationMapNextToAnAutoMap) {
  // 50,000 entries in one object (ModelOpt's "quantized_layers" has 22,422 for MiniMax-M3) next to
  // an auto_map: the order pass reads only auto_map.
  std::string text = R"({"auto_map": {"AutoModel": "m.B"}, "quantization_config": {"layers": {)";
  for (int i = 0; i < 50'000; ++i) {
    if (i) text += ",";
    text += "\"model.layers." + std::to_string(i) + ".mlp\": {\"quant_algo\": \"NVFP4\"}";
  }
  text += "}}}";
  auto config = HfConfig::Parse(text, "config.json");
  ASSERT_TRUE(config) << config.error().message;
  EXPECT_EQ(config->auto_map_keys(), std::vector<std::string>{"AutoModel"});
  EXPECT_EQ(config->raw()["quantization_config"]["layers"].size(), 50'000u);
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit
