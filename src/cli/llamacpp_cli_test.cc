// llama.cpp's flags (cli/llamacpp_cli.cc): the second stage of flag parsing
// (ResolveLlamaCppArgs), the mapping of `inference` / `fit` requests onto them, and `memfit gguf
// inference` end to end on a tiny GGUF (2 layers, 4 KV heads of 64: 256 K and 256 V elements per
// token and layer).

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>

#include "cli/command_test_util.h"
#include "cli/llamacpp_cli.h"
#include "gguf_models.h"  // tests/

namespace memfit::cli {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

using api::LlamaCppArgsFor;
using api::LlamaCppFitArgsFor;
using api::ResolveLlamaCppArgs;
using cli_test::RunMemfit;

constexpr uint64_t kGiB = uint64_t{1} << 30;

TEST(LlamaCppCliTest, DefaultsAreLlamaCpps) {
  auto o = ResolveLlamaCppArgs({});
  ASSERT_TRUE(o) << o.error().message;
  EXPECT_EQ(o->flash_attn, FlashAttn::kAuto);
  EXPECT_EQ(o->ngl_semantics, NglSemantics::kCurrent);
  EXPECT_TRUE(o->mmap);
  EXPECT_TRUE(o->op_offload);
  EXPECT_EQ(o->cuda_context_bytes, 250u << 20);  // "250MiB" = 262,144,000 B
  EXPECT_EQ(o->num_gpus, 0u);                     // CPU only
  EXPECT_EQ(o->parallel, 1u);
}

TEST(LlamaCppCliTest, WordsBecomeOptions) {
  LlamaCppCliArgs a;
  a.flash_attn = "1";
  a.legacy_ngl = true;
  a.no_mmap = true;
  a.gpus = {"2x24GiB", "rtx4090"};  // a count of sizes and a catalog GPU (its 24 GB)
  a.tensor_split = "3,1,1";
  a.batch_given = true;
  a.batch_sequences = 4;
  a.cuda_context = "300MiB";
  auto o = ResolveLlamaCppArgs(a);
  ASSERT_TRUE(o) << o.error().message;
  EXPECT_EQ(o->flash_attn, FlashAttn::kOn);
  EXPECT_EQ(o->ngl_semantics, NglSemantics::kLegacy);
  EXPECT_FALSE(o->mmap);
  EXPECT_EQ(o->gpu_free_bytes, (std::vector<uint64_t>{24 * kGiB, 24 * kGiB, 24 * kGiB}));
  EXPECT_EQ(o->tensor_split, (std::vector<double>{3, 1, 1}));
  EXPECT_EQ(o->num_gpus, 3u);  // the most of --gpus, --gpu's devices and the split's entries
  EXPECT_EQ(o->parallel, 4u);  // --batch is sequences: llama.cpp's --parallel
  EXPECT_EQ(o->cuda_context_bytes, 300u << 20);
  a.flash_attn = "off";
  EXPECT_EQ(ResolveLlamaCppArgs(a)->flash_attn, FlashAttn::kOff);
}

TEST(LlamaCppCliTest, BadWordsNameTheirFlag) {
  auto message = [](LlamaCppCliArgs a) {
    auto o = ResolveLlamaCppArgs(a);
    return o ? std::string("(no error)") : o.error().message;
  };
  EXPECT_EQ(message({.flash_attn = "maybe"}), "--flash-attn maybe: expected on, off or auto");
  LlamaCppCliArgs k;
  k.options.cache_type_v = "q9_9";
  EXPECT_EQ(message(k), "--cache-type-v q9_9: unknown type (f16, bf16, f32, q8_0, q4_0, q4_1, "
                        "iq4_nl, q5_0, q5_1)");
  EXPECT_EQ(message({.tensor_split = "3,x"}), "--tensor-split 3,x: \"x\" is not a non-negative number");
  EXPECT_EQ(message({.tensor_split = "1,-1"}), "--tensor-split 1,-1: \"-1\" is not a non-negative number");
  LlamaCppCliArgs zero;
  zero.batch_given = true;
  zero.batch_sequences = 0;
  EXPECT_EQ(message(zero), "--batch 0: expected 1 or more sequences");
  LlamaCppCliArgs gpu;
  gpu.gpus = {"potato"};
  EXPECT_NE(message(gpu).find("potato"), std::string::npos) << message(gpu);
}

TEST(LlamaCppCliTest, InferenceAndFitRequestsMapOntoLlamaCppsFlags) {
  InferenceRequest r{.context = 0, .batch = 3, .gpus = 2, .gpu = "h100", .curve = true,
                     .curve_gpus = {"24GiB"}};
  LlamaCppCliArgs a = LlamaCppArgsFor(r);
  EXPECT_EQ(a.options.context_tokens, 0u);  // 0: the model's training context, as llama.cpp
  EXPECT_FALSE(a.ctx_given);
  EXPECT_EQ(a.options.parallel, 3u);
  EXPECT_EQ(a.options.num_gpus, 2u);
  EXPECT_EQ(a.gpus, (std::vector<std::string>{"h100"}));
  EXPECT_TRUE(a.curve);
  EXPECT_EQ(a.curve_gpus, (std::vector<std::string>{"24GiB"}));
  r.context = 8192;
  EXPECT_TRUE(LlamaCppArgsFor(r).ctx_given);

  FitCommandRequest f{.ram = "64GiB", .context = 8192};
  LlamaCppCliArgs fit = LlamaCppFitArgsFor(f, {"24GiB", "24GiB"});
  EXPECT_EQ(fit.gpus, (std::vector<std::string>{"24GiB", "24GiB"}));
  EXPECT_EQ(fit.ram, "64GiB");
  EXPECT_EQ(fit.options.context_tokens, 8192u);
  EXPECT_TRUE(fit.ctx_given);
  EXPECT_FALSE(LlamaCppFitArgsFor({}, {}).ctx_given);
}

std::string TinyGguf() {
  testing::GgufShape s;  // llama, 2 layers, 4 KV heads x 64, F16 weights, context 4096
  const std::string path = testing::TempDir() + "/tiny.gguf";
  std::ofstream(path, std::ios::binary) << testing::MakeGgufWriter(s).Build();
  return path;
}

TEST(LlamaCppCliTest, GgufInferenceBindsTheCacheTypeAndContext) {
  cli_test::OfflineEnv env;
  const std::string gguf = TinyGguf();
  // f16 cache, -c 1024: K = 2 layers x 1,024 cells x 256 elements x 2 B = 1,048,576 B; V alike.
  auto f16 = RunMemfit({"gguf", "inference", gguf, "-c", "1024", "--format", "json"});
  ASSERT_EQ(f16.code, 0) << f16.err;
  const auto j = nlohmann::json::parse(f16.out);
  EXPECT_EQ(j["n_ctx"], 1024);
  EXPECT_EQ(j["kv_k_bytes"], 1048576);
  EXPECT_EQ(j["kv_v_bytes"], 1048576);
  // --ctk q8_0: 34 B per block of 32 elements: 2 x 1,024 x 256 / 32 x 34 = 557,056 B.
  auto q8 = RunMemfit({"gguf", "inference", gguf, "--ctx-size", "1024", "--ctk", "q8_0",
                       "--format", "json"});
  ASSERT_EQ(q8.code, 0) << q8.err;
  EXPECT_EQ(nlohmann::json::parse(q8.out)["kv_k_bytes"], 557056);
  EXPECT_EQ(nlohmann::json::parse(q8.out)["kv_v_bytes"], 1048576);
  // --batch is sequences: two of 512 tokens in the 1,024 cells, and a note saying so.
  auto two = RunMemfit({"gguf", "inference", gguf, "-c", "1024", "--batch", "2", "--format", "json"});
  ASSERT_EQ(two.code, 0) << two.err;
  EXPECT_EQ(nlohmann::json::parse(two.out)["n_seq"], 2);
  EXPECT_EQ(nlohmann::json::parse(two.out)["n_ctx_seq"], 512);
  EXPECT_EQ(two.err, "memfit: --batch counts sequences (llama.cpp --parallel); llama.cpp's "
                     "logical batch in tokens is -b/--batch-size\n");
}

TEST(LlamaCppCliTest, GgufBadInputIsOneLine) {
  cli_test::OfflineEnv env;
  const std::string gguf = TinyGguf();
  auto format = RunMemfit({"gguf", "inference", gguf, "--format", "yaml"});
  EXPECT_EQ(format.code, 1);
  EXPECT_EQ(format.err,
            "memfit: error: unknown format \"yaml\" (expected table, json, csv or markdown)\n");
  auto fit = RunMemfit({"gguf", "fit", gguf});
  EXPECT_EQ(fit.code, 1);
  EXPECT_EQ(fit.err, "memfit: error: fit: give each GPU with --gpu (a size such as 24GiB, or a "
                     "catalog name)\n");
  auto curve = RunMemfit({"gguf", "inference", gguf, "--curve-gpu", "24GiB"});
  EXPECT_EQ(curve.code, 1);
  EXPECT_EQ(curve.err, "memfit: error: --curve-gpu needs --curve\n");
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit::cli
