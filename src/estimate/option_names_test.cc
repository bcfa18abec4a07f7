// The words of the options' enums (base/enum_names.h tables): each value's name reads back as
// that value, and the other spellings read as their value.

#include <gtest/gtest.h>

#include <array>
#include <initializer_list>
#include <string>
#include <utility>

#include "base/enum_names.h"
#include "memfit/engine.h"
#include "memfit/estimate_inference.h"
#include "memfit/estimate_load.h"
#include "memfit/gpu.h"
#include "memfit/quantization.h"

namespace memfit {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

// Each of `values` has a name, and the name reads back as the value.
template <typename E, typename Name, typename Parse>
void ExpectNamesReadBack(std::initializer_list<E> values, Name name, Parse parse) {
  for (E v : values) {
    SCOPED_TRACE(std::string(name(v)));
    EXPECT_NE(name(v), "?");
    auto back = parse(name(v));
    ASSERT_TRUE(back) << back.error().message;
    EXPECT_EQ(*back, v);
  }
}

// Each of `words` reads as its value.
template <typename E, typename Parse>
void ExpectReads(std::initializer_list<std::pair<const char*, E>> words, Parse parse) {
  for (const auto& [word, value] : words) {
    auto read = parse(word);
    ASSERT_TRUE(read) << word << ": " << read.error().message;
    EXPECT_EQ(*read, value) << word;
  }
}

enum class Color { kRed, kGreen, kBlue };
constexpr auto kColors = std::to_array<EnumWord<Color>>(
    {{"red", Color::kRed}, {"rouge", Color::kRed}, {"green", Color::kGreen}});

TEST(EnumNames, TheFirstWordIsTheNameAndEveryWordReads) {
  EXPECT_EQ(NameOf(Color::kRed, kColors), "red");
  EXPECT_EQ(NameOf(Color::kBlue, kColors), "?");  // not in the table
  EXPECT_EQ(FindWord("rouge", kColors), Color::kRed);
  EXPECT_EQ(FindWord("Red", kColors), std::nullopt);  // exactly
  EXPECT_EQ(*ParseWord("green", kColors, "--color"), Color::kGreen);
  auto bad = ParseWord("blue", kColors, "--color");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message, "--color blue: expected one of red, rouge, green");
}

TEST(EnumNames, OptionNamesReadBack) {
  ExpectNamesReadBack({KvDtype::kModel, KvDtype::kF32, KvDtype::kF16, KvDtype::kBF16,
                       KvDtype::kFp8, KvDtype::kInt8, KvDtype::kInt4},
                      KvDtypeName, ParseKvDtype);
  ExpectNamesReadBack({AttnImpl::kEager, AttnImpl::kSdpa, AttnImpl::kFlash}, AttnImplName,
                      ParseAttnImpl);
  ExpectNamesReadBack({Engine::kTransformers, Engine::kVllm, Engine::kSglang, Engine::kLlamaCpp},
                      EngineName, ParseEngine);
  ExpectNamesReadBack({GpuVendor::kNvidia, GpuVendor::kAmd, GpuVendor::kApple, GpuVendor::kIntel},
                      GpuVendorName, ParseGpuVendor);
  // "as stored", the name shown for the stored dtypes, is not a word --dtype reads: "stored" is.
  ExpectNamesReadBack({LoadDtype::kFloat32, LoadDtype::kFloat16, LoadDtype::kBFloat16,
                       LoadDtype::kInt8, LoadDtype::kInt4},
                      LoadDtypeName, ParseLoadDtype);
  EXPECT_EQ(LoadDtypeName(LoadDtype::kAsStored), "as stored");
  EXPECT_FALSE(ParseLoadDtype("as stored"));
  EXPECT_EQ(*ParseLoadDtype("stored"), LoadDtype::kAsStored);
}

TEST(EnumNames, OtherSpellingsReadAsTheirValue) {
  ExpectReads<KvDtype>(
      {{"auto", KvDtype::kModel}, {"f16", KvDtype::kF16}, {"q4_0", KvDtype::kInt4}}, ParseKvDtype);
  ExpectReads<AttnImpl>({{"flash_attention_2", AttnImpl::kFlash}}, ParseAttnImpl);
  ExpectReads<Engine>({{"hf", Engine::kTransformers}, {"llama-cpp", Engine::kLlamaCpp}},
                      ParseEngine);
  ExpectReads<GpuVendor>({{"NVIDIA", GpuVendor::kNvidia}}, ParseGpuVendor);  // any case
  ExpectReads<LoadDtype>({{"bf16", LoadDtype::kBFloat16}}, ParseLoadDtype);
}

// Every scheme's name is a --quant word that picks it (with its defaults: no double quant, the
// scheme's own bits and group).
TEST(EnumNames, QuantSchemeNamesAreQuantWords) {
  for (QuantScheme scheme :
       {QuantScheme::kNone, QuantScheme::kBnbInt8, QuantScheme::kBnbNf4, QuantScheme::kBnbFp4,
        QuantScheme::kGptq, QuantScheme::kAwq, QuantScheme::kFp8, QuantScheme::kFp8Block,
        QuantScheme::kMxfp4, QuantScheme::kHqq, QuantScheme::kPlainInt8, QuantScheme::kPlainInt4}) {
    const std::string name(QuantSchemeName(scheme));
    auto options = ParseQuant(name);
    ASSERT_TRUE(options) << name << ": " << options.error().message;
    EXPECT_EQ(options->scheme, scheme) << name;
    EXPECT_FALSE(options->double_quant) << name;
  }
  EXPECT_TRUE(ParseQuant("nf4-dq")->double_quant);
  EXPECT_EQ(ParseQuant("gptq-8bit")->bits, 8u);
  EXPECT_EQ(ParseQuant("hqq")->group_size, 64u);
  EXPECT_TRUE(ParseQuant("dequantize")->dequantize_stored);
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit
