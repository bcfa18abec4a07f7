// Parsing a Qwen2-sized GGUF header: 151,936-token vocabulary (tokens, scores, token types,
// 151,387 merges) and 1,000 tensor infos, read in 1 MiB chunks through a ByteSource.

#include <benchmark/benchmark.h>

#include "gguf_writer.h"
#include "memfit/gguf.h"

namespace {

std::string MakeHeader() {
  memfit::testing::GgufWriter w;
  constexpr uint32_t kVocab = 151936;
  std::vector<std::string> tokens, merges;
  std::vector<float> scores;
  std::vector<int32_t> types;
  tokens.reserve(kVocab);
  for (uint32_t i = 0; i < kVocab; ++i) {
    tokens.push_back("tok_" + std::to_string(i));
    scores.push_back(static_cast<float>(i));
    types.push_back(1);
  }
  for (uint32_t i = 0; i < 151387; ++i) merges.push_back("a" + std::to_string(i) + " b");
  w.Str("general.architecture", "qwen2").U32("qwen2.block_count", 28).Str("tokenizer.ggml.model", "gpt2")
      .StrArray("tokenizer.ggml.tokens", tokens).F32Array("tokenizer.ggml.scores", scores)
      .I32Array("tokenizer.ggml.token_type", types).StrArray("tokenizer.ggml.merges", merges);
  for (int i = 0; i < 1000; ++i) {
    w.Tensor("blk." + std::to_string(i / 36) + ".t" + std::to_string(i) + ".weight", {3584, 512}, 12);
  }
  return w.Header();
}

void BM_ParseGgufHeader152kVocab1000Tensors(benchmark::State& state) {
  static const std::string header = MakeHeader();
  memfit::testing::GgufWriter sizes;
  const uint64_t data = 1000ull * 3584 * 512 * 144 / 256;
  for (auto _ : state) {
    memfit::testing::VirtualGgufSource source(header, data);
    auto file = memfit::ReadGgufHeader(source);
    if (!file) state.SkipWithError(file.error().message.c_str());
    benchmark::DoNotOptimize(file);
  }
  state.counters["header_MiB"] = static_cast<double>(header.size()) / (1 << 20);
}
BENCHMARK(BM_ParseGgufHeader152kVocab1000Tensors)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
