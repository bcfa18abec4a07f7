// llama.cpp estimate against hand-derived figures and the llama.cpp log figures quoted in
// docs/reference/gguf-and-llamacpp.md (sections 2.1, 5 and 6).

#include <filesystem>

#include <gtest/gtest.h>

#include "base/error_test_util.h"
#include "gguf_models.h"
#include "memfit/llamacpp.h"
#include "test_support.h"

namespace memfit {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

using namespace memfit::testing;  // NOLINT

constexpr double kMiBd = 1024.0 * 1024.0;
double MiB(uint64_t b) { return static_cast<double>(b) / kMiBd; }

uint64_t TotalParams(const Model& m) {
  uint64_t n = 0;
  for (const auto& t : m.tensors) n += t.numel;
  return n;
}

TEST(LlamaCppWeights, Llama31_8B_QuantizeReadmeSizes) {
  // tools/quantize/README.md: Q4_K_M 4.58 GiB 4.8944 bpw, Q8_0 7.95 GiB 8.5008, F16 14.96 GiB 16.0005.
  struct Case {
    std::function<uint32_t(const std::string&, int)> type_of;
    double gib, bpw;
  };
  for (const Case& c : {Case{Q4KM, 4.58, 4.8944}, Case{[](const std::string&, int) { return kQ8_0; }, 7.95, 8.5008},
                        Case{[](const std::string&, int) { return kF16; }, 14.96, 16.0005}}) {
    auto m = MakeGgufModel(Llama31_8B(c.type_of));
    ASSERT_TRUE(m) << m.error().message;
    uint64_t bytes = 0;
    for (const auto& t : m->tensors) bytes += t.bytes;
    EXPECT_NEAR(static_cast<double>(bytes) / (kMiBd * 1024), c.gib, 0.005);
    EXPECT_NEAR(8.0 * static_cast<double>(bytes) / static_cast<double>(TotalParams(*m)), c.bpw, 0.00005);
  }
}

TEST(LlamaCppWeights, Llama31_8B_Q4KM_FullOffloadBuffers) {
  // Log (reference 2.1): CPU_Mapped 281.81 MiB, CUDA0 4403.49 MiB, 33/33 layers, KV 512.00 MiB at
  // n_ctx 4096. CPU_Mapped = token_embd Q4_K = 128256*4096*144/256 B exactly.
  auto m = MakeGgufModel(Llama31_8B(Q4KM));
  ASSERT_TRUE(m) << m.error().message;
  auto e = EstimateLlamaCpp(*m, LlamaCppOptions{.context_tokens = 4096, .num_gpus = 1});
  ASSERT_TRUE(e) << e.error().message;
  EXPECT_EQ(e->offloaded_layers, 33u);
  EXPECT_EQ(e->host().model_bytes, 128256ull * 4096 * 144 / 256);
  EXPECT_NEAR(MiB(e->host().model_bytes), 281.81, 0.005);
  EXPECT_NEAR(MiB(e->devices[0].model_bytes) / 4403.49, 1.0, 0.005);
  EXPECT_EQ(e->devices[0].kv_bytes, 512 * kMiB);  // 32 layers * 4096 * 1024 * (2+2) B
  EXPECT_EQ(e->host().output_bytes, 128256u * 4);
  // Host compute: embeddings 4*4096*512 + F32 mask 4*4096*512 + tokens/positions = 16.004 MiB
  // (log: CUDA_Host compute 16.01 MiB).
  EXPECT_NEAR(MiB(e->host().compute_bytes), 16.01, 0.01);
  // The log's 296.00 MiB CUDA0 compute matches the no-FA graph (KQ = 4*4096*512*32 B = 256 MiB);
  // the model gives 300 MiB (+1.4%, documented).
  auto nofa = EstimateLlamaCpp(*m, LlamaCppOptions{.context_tokens = 4096, .num_gpus = 1,
                                                   .flash_attn = FlashAttn::kOff});
  ASSERT_TRUE(nofa);
  EXPECT_NEAR(MiB(nofa->devices[0].compute_bytes) / 296.0, 1.0, 0.02);
}

Result<Model> LlamaSpmVocabModel() {
  auto eval = EvalDir();
  std::string path = eval ? *eval + "/gguf/ggml-vocab-llama-spm.gguf" : "";
  if (path.empty() || !std::filesystem::exists(path)) return MakeError("absent");
  auto source = OpenFileByteSource(path);
  MEMFIT_ASSIGN_OR_RETURN(GgufFile f, ReadGgufHeader(*source));
  return ModelFromGguf({GgufShard{"ggml-vocab-llama-spm.gguf", std::move(f)}}, "llama-spm");
}

TEST(LlamaCppKv, LlamaSpmVocabFileHasLlama2_7BShape) {
  auto m = LlamaSpmVocabModel();
  if (!m && m.error().message == "absent") GTEST_SKIP() << "shared/eval/gguf not available";
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(m->hp.num_layers, 32u);
  EXPECT_EQ(m->hp.hidden_size, 4096u);
  EXPECT_EQ(m->hp.intermediate_size, 11008u);
  EXPECT_EQ(m->hp.num_kv_heads, 32u);
  EXPECT_EQ(m->hp.vocab_size, 32000u);
  EXPECT_EQ(m->hp.max_position_embeddings, 4096u);
  // 32 layers * 4096 cells * 4096 kv-dim * (K+V): f16 2 B -> 2048 MiB; q8_0 34/32 B -> 1088 MiB;
  // q4_0 18/32 B -> 576 MiB.
  struct Case {
    const char* type;
    uint64_t mib;
  };
  for (const Case& c : {Case{"f16", 2048}, Case{"q8_0", 1088}, Case{"q4_0", 576}}) {
    auto e = EstimateLlamaCpp(*m, {.cache_type_k = c.type, .cache_type_v = c.type, .flash_attn = FlashAttn::kOn});
    ASSERT_TRUE(e) << e.error().message;
    EXPECT_EQ(e->n_ctx, 4096u);
    EXPECT_EQ(e->kv_k_bytes + e->kv_v_bytes, c.mib * kMiB) << c.type;
    EXPECT_EQ(e->host().kv_bytes, c.mib * kMiB);  // no GPU: everything on the host
  }
  auto bad = EstimateLlamaCpp(*m, {.cache_type_v = "q8_0", .flash_attn = FlashAttn::kOff});
  testing::ExpectErrorContains(bad, "requires flash attention");
  // Context padding to 256: 4000 -> 4096.
  auto padded = EstimateLlamaCpp(*m, {.context_tokens = 4000});
  ASSERT_TRUE(padded);
  EXPECT_EQ(padded->n_ctx, 4096u);
}

TEST(LlamaCppKv, EmbeddingModelsHaveNoKvCache) {
  auto eval = EvalDir();
  if (!eval || !std::filesystem::exists(*eval + "/gguf/ggml-vocab-bert-bge.gguf")) GTEST_SKIP() << "shared/eval absent";
  auto source = OpenFileByteSource(*eval + "/gguf/ggml-vocab-bert-bge.gguf");
  auto f = ReadGgufHeader(*source);
  ASSERT_TRUE(f);
  auto m = ModelFromGguf({GgufShard{"bge", std::move(*f)}}, "bge");
  ASSERT_TRUE(m);
  auto e = EstimateLlamaCpp(*m, {});
  ASSERT_TRUE(e) << e.error().message;
  EXPECT_EQ(e->n_ctx, 512u);
  EXPECT_EQ(e->kv_k_bytes + e->kv_v_bytes, 0u);
}

TEST(LlamaCppKv, MixtralAtContext512) {
  // llama.cpp #5137: Mixtral-8x7B all-CPU, n_ctx 512: KV 64 MiB (f16) = 32 * 512 * 1024 * 4 B.
  GgufShape s{.arch = "llama", .n_layer = 32, .n_embd = 4096, .n_head = 32, .n_head_kv = 8, .head_dim = 128,
              .n_ff = 14336, .n_vocab = 32000, .ctx = 32768, .n_expert = 8, .n_expert_used = 2, .n_ff_exp = 14336};
  GgufWriter w = MakeGgufWriter(s);
  auto m = MakeGgufModel(s);
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_TRUE(m->hp.layers[0].moe);
  auto e = EstimateLlamaCpp(*m, {.context_tokens = 512});
  ASSERT_TRUE(e);
  EXPECT_EQ(e->host().kv_bytes, 64 * kMiB);
}

// Mistral-Small-Instruct-2409 (22B) shape: 56 layers, hidden 6144, 48 heads, 8 KV heads, head 128,
// FFN 16384, vocab 32768 (its config.json).
GgufShape MistralSmall22B() {
  return GgufShape{.arch = "llama", .n_layer = 56, .n_embd = 6144, .n_head = 48, .n_head_kv = 8, .head_dim = 128,
                   .n_ff = 16384, .n_vocab = 32768, .ctx = 131072,
                   .type_of = [](const std::string&, int) { return kQ4_0; }};
}

TEST(LlamaCppKv, MistralSmall22BOllamaLog) {
  // ollama #6160: num_ctx 49152, 57/57 layers, KV 5712 MiB (q8_0 = 56*49152*2048*34/32 B),
  // output 0.15 MiB, CUDA0 compute 192 MiB, CUDA_Host compute 108.01 MiB.
  auto m = MakeGgufModel(MistralSmall22B());
  ASSERT_TRUE(m) << m.error().message;
  LlamaCppOptions o{.context_tokens = 49152, .num_gpus = 1, .cache_type_k = "q8_0", .cache_type_v = "q8_0",
                    .flash_attn = FlashAttn::kOn, .embeddings = true};
  auto e = EstimateLlamaCpp(*m, o);
  ASSERT_TRUE(e) << e.error().message;
  EXPECT_EQ(e->offloaded_layers, 57u);
  EXPECT_EQ(e->devices[0].kv_bytes, 5712 * kMiB);
  // Output: (n_vocab + n_embd) floats for one sequence = 155648 B = 0.148 MiB, printed 0.15.
  EXPECT_NEAR(MiB(e->host().output_bytes), 0.15, 0.005);
  // Host compute: inputs only = embeddings 4*E*T + F32 mask 4*n_kv*T + tokens/positions.
  EXPECT_NEAR(MiB(e->host().compute_bytes) / 108.01, 1.0, 0.001);
  // GPU compute: documented model error -6.3% (docs/estimates.md).
  EXPECT_NEAR(MiB(e->devices[0].compute_bytes) / 192.0, 1.0, 0.07);
}

TEST(LlamaCppKv, DeepSeekV3UncompressedMlaLegacyNgl) {
  // ollama #8447 (old llama.cpp, decompressed MLA cache): n_ctx 2048, "1/62 layers" offloaded:
  // KV 9600 MiB on CPU + 160 MiB on CUDA0; per layer 2048 * (128*192 + 128*128) * 2 B = 160 MiB.
  GgufWriter w;
  w.Str("general.architecture", "deepseek2").U32("deepseek2.block_count", 61).U32("deepseek2.context_length", 163840)
      .U32("deepseek2.embedding_length", 7168).U32("deepseek2.feed_forward_length", 18432)
      .U32("deepseek2.attention.head_count", 128).U32("deepseek2.attention.head_count_kv", 128)
      .U32("deepseek2.attention.key_length", 192).U32("deepseek2.attention.value_length", 128)
      .U32("deepseek2.attention.kv_lora_rank", 512).U32("deepseek2.rope.dimension_count", 64)
      .U32("deepseek2.expert_count", 256).U32("deepseek2.expert_used_count", 8)
      .U32("deepseek2.leading_dense_block_count", 3).U32("deepseek2.vocab_size", 129280);
  MemoryByteSource src(w.Build());
  auto f = ReadGgufHeader(src);
  ASSERT_TRUE(f) << f.error().message;
  auto m = ModelFromGguf({GgufShard{"ds3", std::move(*f)}}, "ds3");
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(m->hp.layers[0].attention, AttentionKind::kMla);
  EXPECT_FALSE(m->hp.layers[2].moe);
  EXPECT_TRUE(m->hp.layers[3].moe);
  auto e = EstimateLlamaCpp(*m, {.context_tokens = 2048, .gpu_layers = 1, .ngl_semantics = NglSemantics::kLegacy,
                                 .num_gpus = 1});
  ASSERT_TRUE(e) << e.error().message;
  EXPECT_EQ(e->offloaded_layers, 1u);
  EXPECT_EQ(e->total_layers, 62u);
  EXPECT_EQ(e->host().kv_bytes, 9600 * kMiB);
  EXPECT_EQ(e->devices[0].kv_bytes, 160 * kMiB);
  EXPECT_FALSE(e->devices[0].output_layer);
  // Current semantics: -ngl 1 offloads only the output layer, no KV on the GPU.
  auto cur = EstimateLlamaCpp(*m, {.context_tokens = 2048, .gpu_layers = 1, .num_gpus = 1});
  ASSERT_TRUE(cur);
  EXPECT_TRUE(cur->devices[0].output_layer);
  EXPECT_EQ(cur->devices[0].kv_bytes, 0u);
  EXPECT_EQ(cur->host().kv_bytes, 9760 * kMiB);
}

TEST(LlamaCppKv, Qwen3NextHybridContextBreakdown) {
  // Breakdown log (reference 2.1): Qwen3-Coder-Next, -c 4096, llama-server (4 slots, unified KV):
  // context 397 MiB. Qwen3-Next config: 48 layers, every 4th full attention (12 layers, 2 KV heads
  // x 256); linear attention: conv kernel 4, 16 key heads x 128, 32 value heads x 128.
  // KV: 12 * 4096 * 2*256 * 2 B * (K+V) = 96 MiB. RS per sequence and layer: r = 3*(4096 + 2*16*128)
  // floats, s = 128*4096 floats -> 2195456 B; 36 layers x 4 sequences = 301.5 MiB. Sum 397.5 MiB.
  GgufWriter w;
  const std::string a = "qwen3next";
  w.Str("general.architecture", a).U32(a + ".block_count", 48).U32(a + ".context_length", 262144)
      .U32(a + ".embedding_length", 2048).U32(a + ".feed_forward_length", 5120)
      .U32(a + ".attention.head_count", 16).U32(a + ".attention.head_count_kv", 2)
      .U32(a + ".attention.key_length", 256).U32(a + ".attention.value_length", 256)
      .U32(a + ".ssm.conv_kernel", 4).U32(a + ".ssm.state_size", 128).U32(a + ".ssm.group_count", 16)
      .U32(a + ".ssm.inner_size", 4096).U32(a + ".ssm.time_step_rank", 32).U32(a + ".full_attention_interval", 4)
      .U32(a + ".expert_count", 512).U32(a + ".expert_used_count", 10).U32(a + ".vocab_size", 151936);
  MemoryByteSource src(w.Build());
  auto f = ReadGgufHeader(src);
  ASSERT_TRUE(f);
  auto m = ModelFromGguf({GgufShard{"q3n", std::move(*f)}}, "q3n");
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_TRUE(m->hp.layers[0].recurrent);
  EXPECT_FALSE(m->hp.layers[3].recurrent);
  auto e = EstimateLlamaCpp(*m, {.context_tokens = 4096, .parallel = 4, .kv_unified = true, .num_gpus = 1});
  ASSERT_TRUE(e) << e.error().message;
  EXPECT_EQ(e->kv_k_bytes + e->kv_v_bytes, 96 * kMiB);
  EXPECT_EQ(e->rs_bytes, 36ull * 4 * 2195456);
  EXPECT_EQ((e->devices[0].kv_bytes + e->devices[0].rs_bytes) / kMiB, 397u);  // printed as integer MiB
}

TEST(LlamaCppKv, SlidingWindowCacheSize) {
  // gemma2-style: window 4096, pattern 2 (even layers SWA). n_ctx 32768, ubatch 512:
  // SWA cells = pad256(min(32768, 4096 + 512)) = 4608.
  GgufShape s{.arch = "gemma2", .n_layer = 4, .n_embd = 256, .n_head = 4, .n_head_kv = 2, .head_dim = 64};
  s.ctx = 32768;
  s.extra_keys = [](GgufWriter& w) { w.U32("gemma2.attention.sliding_window", 4096); };
  auto m = MakeGgufModel(s);
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(m->hp.layers[0].attention, AttentionKind::kSliding);
  EXPECT_EQ(m->hp.layers[1].attention, AttentionKind::kFull);
  auto e = EstimateLlamaCpp(*m, {});
  ASSERT_TRUE(e);
  EXPECT_EQ(e->kv_cells_swa, 4608u);
  // 2 SWA layers * 4608 + 2 full layers * 32768 cells, 128 kv-dim, f16 K+V (4 B per element pair).
  EXPECT_EQ(e->kv_k_bytes + e->kv_v_bytes, (2ull * 4608 + 2ull * 32768) * 128 * 4);
  auto full = EstimateLlamaCpp(*m, {.swa_full = true});
  ASSERT_TRUE(full);
  EXPECT_EQ(full->kv_k_bytes + full->kv_v_bytes, 4ull * 32768 * 128 * 4);
}

// Qwen3-0.6B shape (config.json: 28 layers, hidden 1024, 16 heads, 8 KV heads, head 128, FFN 3072,
// vocab 151936, tied), Q8_0 weights.
GgufShape Qwen3_06B() {
  return GgufShape{.arch = "qwen3", .n_layer = 28, .n_embd = 1024, .n_head = 16, .n_head_kv = 8, .head_dim = 128,
                   .n_ff = 3072, .n_vocab = 151936, .ctx = 40960, .tied = true,
                   .type_of = [](const std::string&, int) { return kQ8_0; }};
}

TEST(LlamaCppCompute, Qwen3_06B_FullAndPartialOffload) {
  // gguf-parser-go #45 (FA, q8_0 KV, ctx 4096, ub 512): compute 32.09 MiB at full offload,
  // 41.64 MiB at partial offload. Partial surcharge = one host layer's FFN (gate+up+down Q8_0:
  // 3 * 3072*1024*34/32 B = 9.5625 MiB; measured difference 9.55 MiB).
  auto m = MakeGgufModel(Qwen3_06B());
  ASSERT_TRUE(m) << m.error().message;
  LlamaCppOptions o{.context_tokens = 4096, .num_gpus = 1, .cache_type_k = "q8_0", .cache_type_v = "q8_0",
                    .flash_attn = FlashAttn::kOn};
  auto full = EstimateLlamaCpp(*m, o);
  ASSERT_TRUE(full);
  o.gpu_layers = 20;
  auto partial = EstimateLlamaCpp(*m, o);
  ASSERT_TRUE(partial);
  const double f = MiB(full->devices[0].compute_bytes), p = MiB(partial->devices[0].compute_bytes);
  EXPECT_NEAR(p - f, 9.5625, 1e-9);
  EXPECT_NEAR(f / 32.09, 1.0, 0.14);  // documented: -12.7%
  EXPECT_NEAR(p / 41.64, 1.0, 0.10);  // documented: -9.8%
  // Tied embeddings: the output matrix is duplicated on the GPU (token_embd stays on the host too).
  uint64_t embd = 151936ull * 1024 * 34 / 32;
  EXPECT_EQ(full->host().model_bytes, embd);
}

TEST(LlamaCppCompute, OlmoeFullOffload) {
  // OLMoE-1B-7B (config.json: 16 layers, hidden 2048, 16 heads, FFN per expert 1024, 64 experts,
  // top-8, vocab 50304). gguf-parser-go #45: 64.09 MiB at full offload (FA, q8_0, ctx 4096, ub 512).
  GgufShape s{.arch = "olmoe", .n_layer = 16, .n_embd = 2048, .n_head = 16, .n_head_kv = 16, .head_dim = 128,
              .n_ff = 1024, .n_vocab = 50304, .ctx = 4096, .n_expert = 64, .n_expert_used = 8, .n_ff_exp = 1024};
  s.type_of = [](const std::string&, int) { return kQ8_0; };
  auto m = MakeGgufModel(s);
  ASSERT_TRUE(m) << m.error().message;
  auto e = EstimateLlamaCpp(*m, {.context_tokens = 4096, .num_gpus = 1, .cache_type_k = "q8_0",
                                 .cache_type_v = "q8_0", .flash_attn = FlashAttn::kOn});
  ASSERT_TRUE(e);
  EXPECT_NEAR(MiB(e->devices[0].compute_bytes) / 64.09, 1.0, 0.01);  // documented: +0.3%
}

TEST(LlamaCppPlacement, TensorSplitAndNoKvOffload) {
  auto m = MakeGgufModel(Llama31_8B(Q4KM));
  ASSERT_TRUE(m);
  // Two equal GPUs, everything offloaded: 33 layers split by upper_bound on [0.5, 1.0]:
  // layers with il/33 < 0.5 (0..16) on CUDA0, the rest (17..31 + output) on CUDA1.
  auto e = EstimateLlamaCpp(*m, {.context_tokens = 4096, .num_gpus = 2});
  ASSERT_TRUE(e);
  EXPECT_EQ(e->devices[0].layers, 17u);
  EXPECT_EQ(e->devices[1].layers, 15u);
  EXPECT_TRUE(e->devices[1].output_layer);
  EXPECT_EQ(e->devices[0].kv_bytes, 17 * 16 * kMiB);  // 16 MiB per layer at 4096 tokens
  auto nkvo = EstimateLlamaCpp(*m, {.context_tokens = 4096, .num_gpus = 1, .no_kv_offload = true});
  ASSERT_TRUE(nkvo);
  EXPECT_EQ(nkvo->devices[0].kv_bytes, 0u);
  EXPECT_EQ(nkvo->host().kv_bytes, 512 * kMiB);
  // --n-cpu-moe on a dense model changes nothing; -ngl 0 keeps every weight on the host.
  auto cpu = EstimateLlamaCpp(*m, {.context_tokens = 4096, .gpu_layers = 0, .num_gpus = 1});
  ASSERT_TRUE(cpu);
  EXPECT_EQ(cpu->devices[0].model_bytes, 0u);
  EXPECT_EQ(cpu->host().model_bytes, cpu->model_file_tensor_bytes);
}

TEST(LlamaCppFit, ChoosesContextThenLayers) {
  auto m = MakeGgufModel(Llama31_8B(Q4KM));
  ASSERT_TRUE(m);
  auto fits = [&](const LlamaCppOptions& o, uint64_t gpu) {
    auto e = EstimateLlamaCpp(*m, o);
    return e && e->devices[0].total() + 1024 * kMiB <= gpu;
  };
  // 12 GiB: full offload; context reduced below 131072 but the next 256 tokens would not fit.
  auto plan = FitLlamaCpp(*m, {.gpu_bytes = {12ull << 30}});
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_TRUE(plan->fits);
  EXPECT_EQ(plan->options.gpu_layers, -1);
  uint64_t ctx = plan->options.context_tokens;
  EXPECT_GE(ctx, 4096u);
  EXPECT_LT(ctx, 131072u);
  EXPECT_TRUE(fits(plan->options, 12ull << 30));
  LlamaCppOptions more = plan->options;
  more.context_tokens = ctx + 256;
  EXPECT_FALSE(fits(more, 12ull << 30));
  // 4 GiB: context 4096 and fewer layers; one more layer would not fit.
  auto small = FitLlamaCpp(*m, {.gpu_bytes = {4ull << 30}});
  ASSERT_TRUE(small);
  EXPECT_TRUE(small->fits);
  EXPECT_EQ(small->options.context_tokens, 4096u);
  EXPECT_GT(small->options.gpu_layers, 0);
  EXPECT_LT(small->options.gpu_layers, 33);
  EXPECT_TRUE(fits(small->options, 4ull << 30));
  LlamaCppOptions one_more = small->options;
  one_more.gpu_layers += 1;
  EXPECT_FALSE(fits(one_more, 4ull << 30));
  // The command line realises the plan.
  std::string args;
  for (const auto& a : small->arguments) args += a + " ";
  EXPECT_NE(args.find(fmt::format("-c 4096 -ngl {} ", small->options.gpu_layers)), std::string::npos) << args;
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit
