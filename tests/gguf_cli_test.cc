// `memfit gguf ...`, `inspect`/`estimate-memory` on .gguf files, split files, errors.

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "cli/app.h"
#include "gguf_models.h"
#include "memfit/local_source.h"
#include "test_support.h"

namespace memfit {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

using namespace memfit::testing;  // NOLINT

struct Out {
  int code;
  std::string out, err;
};

Out RunCli(std::vector<std::string> args) {
  std::ostringstream out, err;
  int code = cli::Run(args, out, err);
  return {code, out.str(), err.str()};
}

std::string WriteFile(const std::string& name, const std::string& bytes) {
  std::string path = TempDir() + "/" + name;
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

TEST(GgufCli, InferenceAndFitOnASmallModel) {
  GgufShape s;  // 2 layers, 256 hidden, F16
  std::string path = WriteFile("tiny.gguf", MakeGgufWriter(s).Build());
  Out inf = RunCli({"gguf", "inference", path, "--gpu", "8GiB", "-c", "1024", "--ctk", "q8_0", "--ctv", "q8_0", "--fa", "on"});
  EXPECT_EQ(inf.code, 0) << inf.err;
  EXPECT_NE(inf.out.find("CUDA0"), std::string::npos);
  EXPECT_NE(inf.out.find("offloaded 3/3 layers"), std::string::npos) << inf.out;
  Out json = RunCli({"gguf", "inference", path, "--format", "json"});
  EXPECT_EQ(json.code, 0) << json.err;
  EXPECT_NE(json.out.find("\"kv_k_bytes\""), std::string::npos);
  Out fit = RunCli({"gguf", "fit", path, "--gpu", "2GiB", "--ram", "8GiB"});
  EXPECT_EQ(fit.code, 0) << fit.err;
  EXPECT_NE(fit.out.find("llama-server -m " + path + " -c 4096 -ngl 3"), std::string::npos) << fit.out;
  Out none = RunCli({"gguf", "fit", path, "--gpu", "100MiB"});
  EXPECT_EQ(none.code, 1);
  EXPECT_NE(none.out.find("does NOT fit"), std::string::npos);
  // Other commands read .gguf files too.
  Out inspect = RunCli({"inspect", path});
  EXPECT_EQ(inspect.code, 0) << inspect.err;
  EXPECT_NE(inspect.out.find("blk"), std::string::npos) << inspect.out;
  Out est = RunCli({"estimate-memory", path});
  EXPECT_EQ(est.code, 0) << est.err;
}

// --gpu takes what `memfit fit` takes: a catalog name is that GPU's whole memory (an RTX 4090:
// 24 GiB), a count repeats it.
TEST(GgufCli, CatalogGpuNamesAreTheirMemory) {
  GgufShape s;
  std::string path = WriteFile("named.gguf", MakeGgufWriter(s).Build());
  for (const char* command : {"fit", "inference"}) {
    Out by_name = RunCli({"gguf", command, path, "--gpu", "rtx4090", "--format", "json"});
    Out by_size = RunCli({"gguf", command, path, "--gpu", "24GiB", "--format", "json"});
    EXPECT_EQ(by_name.code, 0) << by_name.err;
    EXPECT_EQ(by_name.out, by_size.out) << command;
    Out two = RunCli({"gguf", command, path, "--gpu", "2xrtx4090", "--format", "json"});
    Out sizes = RunCli({"gguf", command, path, "--gpu", "24GiB", "--gpu", "24GiB", "--format", "json"});
    EXPECT_EQ(two.code, 0) << two.err;
    EXPECT_EQ(two.out, sizes.out) << command;
  }
  // `memfit fit X.gguf` routes here with the same --gpu.
  Out fit = RunCli({"fit", path, "--gpu", "rtx4090", "--format", "json"});
  EXPECT_EQ(fit.code, 0) << fit.err;
  Out unknown = RunCli({"gguf", "fit", path, "--gpu", "voodoo5"});
  EXPECT_EQ(unknown.code, 1);
  EXPECT_NE(unknown.err.find("voodoo5"), std::string::npos) << unknown.err;
}

TEST(GgufCli, ErrorsAreOneLine) {
  GgufShape s;
  std::string path = WriteFile("e.gguf", MakeGgufWriter(s).Build());
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"gguf", "inference", path, "--fa", "maybe"},
           {"gguf", "inference", path, "--ctk", "q9_9"},
           {"gguf", "inference", path, "--ctv", "q4_0", "--fa", "off"},
           {"gguf", "fit", path},
           {"gguf", "inference", WriteFile("trunc.gguf", MakeGgufWriter(s).Build().substr(0, 100))},
           {"gguf", "inference", WriteFile("cfg.json", "{\"model_type\": \"llama\"}")}}) {
    Out r = RunCli(args);
    EXPECT_EQ(r.code, 1) << args.back();
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_TRUE(r.err.starts_with("memfit: error: ")) << r.err;
  }
}

TEST(GgufSplitFiles, ResolvedAndMergedFromAnyShard) {
  std::string dir = TempDir();
  auto shard = [&](uint16_t no, bool meta, std::vector<std::string> names) {
    GgufWriter w;
    if (meta) {
      w.Str("general.architecture", "llama").U32("llama.block_count", 2).U32("llama.context_length", 2048)
          .U32("llama.embedding_length", 64).U32("llama.feed_forward_length", 128)
          .U32("llama.attention.head_count", 4).U32("llama.vocab_size", 100);
    }
    w.U16("split.no", no).U16("split.count", 2).I32("split.tensors.count", 4);
    for (const auto& n : names) w.Tensor(n, {64, 64}, kQ8_0);
    std::ofstream(GgufSplitPath(dir + "/m", no + 1, 2), std::ios::binary) << w.Build();
  };
  shard(0, true, {"token_embd.weight", "blk.0.attn_q.weight"});
  shard(1, false, {"blk.1.attn_q.weight", "output.weight"});
  auto r = ResolveLocalModel(dir + "/m-00002-of-00002.gguf", {});
  ASSERT_TRUE(r) << r.error().message;
  ASSERT_EQ(r->inputs.gguf.size(), 2u);
  auto m = DescribeModel(r->inputs);
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(m->tensors.size(), 4u);
  EXPECT_EQ(m->tensors[0].bytes, 64u * 64 * 34 / 32);  // Q8_0
  EXPECT_EQ(m->tensors[0].dtype_label, "Q8_0");
  EXPECT_EQ(m->no_split_patterns, std::vector<std::string>{"blk.*"});
  // A missing shard is an error naming it.
  std::filesystem::remove(dir + "/m-00002-of-00002.gguf");
  auto missing = ResolveLocalModel(dir + "/m-00001-of-00002.gguf", {});
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("m-00002-of-00002.gguf"), std::string::npos);
}

TEST(GgufSplitFiles, InconsistentSplitKeysRejected) {
  GgufWriter a;
  a.Str("general.architecture", "llama").U32("llama.block_count", 1).U16("split.no", 0).U16("split.count", 3);
  MemoryByteSource src(a.Build());
  auto f = ReadGgufHeader(src);
  ASSERT_TRUE(f);
  auto m = ModelFromGguf({GgufShard{"a", *f}, GgufShard{"b", *f}}, "x");
  ASSERT_FALSE(m);
  EXPECT_NE(m.error().message.find("split.count is 3 but 2 shard files"), std::string::npos);
  GgufWriter dup;
  dup.Str("general.architecture", "llama").U32("llama.block_count", 1).Tensor("t", {32}, kF32);
  MemoryByteSource src2(dup.Build());
  auto g = ReadGgufHeader(src2);
  ASSERT_TRUE(g);
  GgufFile g0 = *g, g1 = *g;
  g0.metadata.clear();
  auto add = [](GgufFile& f, const std::string& k, uint64_t v) {
    GgufValue val;
    val.type = GgufValueType::kUint16;
    val.uint_value = v;
    f.key_index[k] = f.metadata.size();
    f.metadata.emplace_back(k, val);
  };
  g0 = *g;
  add(g0, "split.no", 0);
  add(g0, "split.count", 2);
  add(g1, "split.no", 1);
  add(g1, "split.count", 2);
  auto d = ModelFromGguf({GgufShard{"a", g0}, GgufShard{"b", g1}}, "x");
  ASSERT_FALSE(d);
  EXPECT_NE(d.error().message.find("more than one split file"), std::string::npos);
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit
