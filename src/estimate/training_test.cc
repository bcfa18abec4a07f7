#include <map>
#include <optional>
#include <tuple>

#include <gtest/gtest.h>

#include "estimate/activations.h"
#include "memfit/architecture.h"
#include "memfit/catalog.h"
#include "memfit/estimate_train.h"
#include "memfit/hf_config.h"
#include "model/tensor_test_util.h"

namespace memfit {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

using testing::ShapedTensor;

TEST(OptimizerStateTest, BytesPerTensor) {
  Tensor w = ShapedTensor("w", {1000});
  EXPECT_EQ(OptimizerStateBytes(Optimizer::kAdamW, w, 4), 8000u);   // m, v fp32
  EXPECT_EQ(OptimizerStateBytes(Optimizer::kAdamW, w, 2), 4000u);   // pure bf16
  EXPECT_EQ(OptimizerStateBytes(Optimizer::kSgd, w, 4), 0u);
  EXPECT_EQ(OptimizerStateBytes(Optimizer::kSgdMomentum, w, 4), 4000u);
  EXPECT_EQ(OptimizerStateBytes(Optimizer::kLion, w, 4), 4000u);
  // bnb 8-bit: under 4096 elements stays 32-bit (2 x 4 bytes); at 4096: 2 bytes + 2 fp32
  // absmax per 256-block (16 blocks).
  EXPECT_EQ(OptimizerStateBytes(Optimizer::kAdamW8bit, ShapedTensor("s", {4095}), 4), 4095u * 8);
  EXPECT_EQ(OptimizerStateBytes(Optimizer::kAdamW8bit, ShapedTensor("b", {4096}), 4),
            4096u * 2 + 16 * 8);
  EXPECT_EQ(OptimizerStateBytes(Optimizer::kPagedAdamW8bit, ShapedTensor("b", {4097}), 4),
            4097u * 2 + 17 * 8);
  // Adafactor on [1024, 4096]: row stats 1024 + column stats 4096, fp32.
  EXPECT_EQ(OptimizerStateBytes(Optimizer::kAdafactor, ShapedTensor("m", {1024, 4096}), 4),
            5120u * 4);
  EXPECT_EQ(OptimizerStateBytes(Optimizer::kAdafactor, ShapedTensor("b", {1024}), 4), 4096u);
}

// One layer of linears only (no norms), lm_head absent: parameters P = 3 x 64 x 64.
Model LinearOnly() {
  Model m;
  m.name = "lin";
  m.model_type = "llama";
  m.tensors = {ShapedTensor("model.layers.0.self_attn.q_proj.weight", {64, 64}),
               ShapedTensor("model.layers.0.self_attn.v_proj.weight", {64, 64}),
               ShapedTensor("model.layers.0.mlp.down_proj.weight", {64, 64})};
  m.hp = testing::OneLlamaLayer(
      {.hidden = 64, .heads = 4, .kv_heads = 4, .head_dim = 16, .intermediate = 64});
  return m;
}

TEST(TrainingTest, ModelStateBytesPerParameter) {
  const uint64_t P = 3 * 64 * 64;
  TrainOptions o{.head = TaskHead::kNone, .overhead = {.cuda_context_bytes = 0}};
  o.precision = Precision::kFp32;  // 4 + 4 + 8 = 16
  auto fp32 = EstimateTraining(LinearOnly(), o);
  ASSERT_TRUE(fp32.has_value()) << fp32.error().message;
  EXPECT_EQ(fp32->weights_bytes + fp32->gradients_bytes + fp32->optimizer_bytes +
            fp32->master_weights_bytes, 16 * P);
  o.precision = Precision::kBf16Mixed;  // HF AMP: 4 + 2 (autocast copy) + 4 + 8 = 18
  auto amp = EstimateTraining(LinearOnly(), o);
  ASSERT_TRUE(amp.has_value());
  EXPECT_EQ(amp->weights_bytes + amp->gradients_bytes + amp->optimizer_bytes +
            amp->master_weights_bytes, 18 * P);
  o.precision = Precision::kBf16;  // 2 + 2 + 4 = 8
  auto bf16 = EstimateTraining(LinearOnly(), o);
  ASSERT_TRUE(bf16.has_value());
  EXPECT_EQ(bf16->weights_bytes + bf16->gradients_bytes + bf16->optimizer_bytes, 8 * P);
  // ZeRO-3 over 4 GPUs, bf16 mixed (DeepSpeed): (2 + 2 + 4 + 8 + 4) / 4 = 5 B/param.
  o.precision = Precision::kBf16Mixed;
  o.strategy = Strategy::kZero3;
  o.gpus = 4;
  auto z3 = EstimateTraining(LinearOnly(), o);
  ASSERT_TRUE(z3.has_value());
  EXPECT_EQ(z3->weights_bytes + z3->gradients_bytes + z3->optimizer_bytes +
            z3->master_weights_bytes, 5 * P);
  // Optimizer offload moves master + states + fp32 grad partition to CPU RAM.
  o.offload = Offload::kOptimizer;
  auto off = EstimateTraining(LinearOnly(), o);
  ASSERT_TRUE(off.has_value());
  EXPECT_EQ(off->optimizer_bytes, 0u);
  EXPECT_EQ(off->cpu_bytes, 16 * P / 4);
}

// A stored-only tensor (an MTP layer transformers does not load) is neither resident nor trained:
// adding one 64 x 64 of them changes nothing (P = 3 x 64 x 64, 16 B each in fp32).
TEST(TrainingTest, StoredOnlyTensorsAreNeitherLoadedNorTrained) {
  TrainOptions o{.precision = Precision::kFp32, .head = TaskHead::kNone,
                 .overhead = {.cuda_context_bytes = 0}};
  Model with_mtp = LinearOnly();
  with_mtp.tensors.push_back(ShapedTensor("model.layers.1.mlp.down_proj.weight", {64, 64}));
  with_mtp.tensors.back().loaded = false;
  auto plain = EstimateTraining(LinearOnly(), o);
  auto mtp = EstimateTraining(with_mtp, o);
  ASSERT_TRUE(plain.has_value() && mtp.has_value());
  EXPECT_EQ(mtp->trainable_params, 3u * 64 * 64);
  EXPECT_EQ(mtp->weights_bytes, plain->weights_bytes);
  EXPECT_EQ(mtp->gradients_bytes + mtp->optimizer_bytes, 12u * 3 * 64 * 64);
}

TEST(TrainingTest, LoraTrainsOnlyAdaptersOnPeftDefaultTargets) {
  TrainOptions o{.method = TrainMethod::kLora, .precision = Precision::kBf16,
                 .head = TaskHead::kNone};
  o.lora.rank = 8;
  auto e = EstimateTraining(LinearOnly(), o);
  ASSERT_TRUE(e.has_value()) << e.error().message;
  // llama default q_proj, v_proj: each r x (64 + 64) = 1024 adapter params.
  EXPECT_EQ(e->trainable_params, 2048u);
  EXPECT_EQ(e->gradients_bytes, 2048u * 4);   // fp32 adapters
  EXPECT_EQ(e->optimizer_bytes, 2048u * 8);
  EXPECT_EQ(e->weights_bytes, 3u * 4096 * 2 + 2048 * 4);  // bf16 base + fp32 adapters
  // A model_type PEFT has no default for: q_proj and v_proj where the model has them (the same
  // adapters as above), and the assumption says PEFT itself would ask for target_modules.
  Model unknown = LinearOnly();
  unknown.model_type = "mystery";
  auto u = EstimateTraining(unknown, o);
  ASSERT_TRUE(u.has_value()) << u.error().message;
  EXPECT_EQ(u->trainable_params, 2048u);
  bool said = false;
  for (const auto& a : u->assumptions) said = said || a.find("target_modules") != std::string::npos;
  EXPECT_TRUE(said);
}

TEST(TrainingTest, PeakStageAndContext) {
  TrainOptions o{.precision = Precision::kFp32, .head = TaskHead::kNone};
  o.overhead.cuda_context_bytes = 1000;
  auto e = EstimateTraining(LinearOnly(), o);
  ASSERT_TRUE(e.has_value());
  ASSERT_EQ(e->stages.size(), 4u);
  uint64_t max_stage = 0;
  for (const auto& s : e->stages) max_stage = std::max(max_stage, s.bytes);
  EXPECT_EQ(e->peak_bytes, max_stage + 1000);
  EXPECT_FALSE(e->peak_stage.empty());
}

// Each stage names the parts alive at its peak, and they sum to the stage's bytes: the web page
// draws them as the stage's bar. fp32 AdamW, no head: the optimizer step holds the weights, two
// fp32 states per parameter, the gradients and foreach AdamW's one state-sized temporary; the
// gradients are alive in the forward only with gradient accumulation (zero_grad frees them).
TEST(TrainingTest, StagePartsSumToTheStageAndNameWhatIsAlive) {
  auto parts_of = [](const StageMemory& s) {
    std::map<std::string, uint64_t> m;
    uint64_t sum = 0;
    for (const auto& p : s.parts) {
      EXPECT_GT(p.bytes, 0u) << s.stage << " " << p.name;
      m[p.name] += p.bytes;
      sum += p.bytes;
    }
    EXPECT_EQ(sum, s.bytes) << s.stage;
    return m;
  };
  for (uint64_t accum : {1, 4}) {
    TrainOptions o{.precision = Precision::kFp32, .grad_accum = accum, .head = TaskHead::kNone};
    auto e = EstimateTraining(LinearOnly(), o);
    ASSERT_TRUE(e.has_value()) << e.error().message;
    ASSERT_EQ(e->stages.size(), 4u);
    const uint64_t w = e->weights_bytes;
    EXPECT_EQ(parts_of(e->stages[0]), (std::map<std::string, uint64_t>{{"weights", w}}));
    auto forward = parts_of(e->stages[1]);
    EXPECT_EQ(forward["weights"], w);
    EXPECT_EQ(forward["optimizer states"], 2 * w);
    EXPECT_EQ(forward.count("gradients"), accum > 1 ? 1u : 0u);
    EXPECT_EQ(forward["activations"], e->activation_bytes);
    parts_of(e->stages[2]);
    EXPECT_EQ(parts_of(e->stages[3]),
              (std::map<std::string, uint64_t>{{"weights", w}, {"optimizer states", 2 * w},
                                               {"gradients", w}, {"optimizer temporaries", w}}));
  }
}

// The torch version decides AdamW's foreach default, its temporaries and zero_grad's default
// (memfit/runtime_versions.h). LinearOnly in fp32: w = weight bytes = gradient bytes, states 2w.
TEST(TrainingTest, TorchVersionDecidesAdamwTemporariesAndZeroGrad) {
  auto step_and_forward = [](RuntimeVersions v, std::optional<bool> foreach) {
    TrainOptions o{.precision = Precision::kFp32, .head = TaskHead::kNone, .versions = v,
                   .foreach_optimizer = foreach};
    auto e = EstimateTraining(LinearOnly(), o);
    EXPECT_TRUE(e.has_value());
    std::map<std::string, uint64_t> step, forward;
    for (const auto& p : e->stages[3].parts) step[p.name] = p.bytes;
    for (const auto& p : e->stages[1].parts) forward[p.name] = p.bytes;
    return std::tuple{e->weights_bytes, step["optimizer temporaries"], forward["gradients"]};
  };
  const RuntimeVersions torch25{};  // the default: torch 2.5
  const RuntimeVersions torch113{.torch = {1, 13}};
  // torch 2.x: foreach by default, one temporary the size of one state (w), the gradients
  // freed by zero_grad.
  auto [w, tmp, grads] = step_and_forward(torch25, std::nullopt);
  EXPECT_EQ(tmp, w);
  EXPECT_EQ(grads, 0u);
  // torch 1.13 with foreach=True: _foreach_sqrt and the out-of-place _foreach_add: two.
  std::tie(w, tmp, grads) = step_and_forward(torch113, true);
  EXPECT_EQ(tmp, 2 * w);
  // torch 1.13's defaults: single-tensor AdamW (two temporaries of the largest tensor, 64 x 64
  // fp32) and zero_grad(set_to_none=False): the gradients stay through the forward.
  std::tie(w, tmp, grads) = step_and_forward(torch113, std::nullopt);
  EXPECT_EQ(tmp, 2u * 64 * 64 * 4);
  EXPECT_EQ(grads, w);
}

// transformers < 4.50's ForCausalLMLoss copies the shifted logits in fp32: b x (T - 1) x V x 4
// more in the forward; the loss backward still holds three fp32 T x V tensors.
TEST(TrainingTest, TransformersVersionDecidesTheShiftedLogitsCopy) {
  Model m = LinearOnly();
  m.hp.vocab_size = 1000;
  auto logits = [&](LibraryVersion tf) {
    TrainOptions o{.precision = Precision::kBf16, .batch = 2, .seq = 16,
                   .head = TaskHead::kCausalLm, .versions = {.transformers = tf}};
    auto e = EstimateTraining(m, o);
    EXPECT_TRUE(e.has_value());
    return e->logits_bytes;
  };
  // bf16: logits 2 + fp32 upcast 4 + log_softmax 4 = 10 B per logit over 2 x 16 x 1000.
  EXPECT_EQ(logits({4, 50}), 2u * 16 * 1000 * 10);
  EXPECT_EQ(logits({4, 48}), 2u * 16 * 1000 * 10 + 2u * 15 * 1000 * 4);
}

// One sequence: logits[..., :-1, :] is already contiguous and the shifted copy is free
// (measured on CPU: c-gm-lora-bf16, validation/FINDINGS.md 2o). Gemma-2's final-logit
// soft-capping keeps tanh's output (compute dtype) from the forward through the loss backward.
TEST(TrainingTest, OneSequenceHasNoShiftedCopyAndGemma2KeepsTheSoftcapTanh) {
  Model m = LinearOnly();
  m.hp.vocab_size = 1000;
  auto logits = [&](uint64_t batch) {
    TrainOptions o{.precision = Precision::kBf16, .batch = batch, .seq = 16,
                   .head = TaskHead::kCausalLm, .versions = {.transformers = {4, 48}}};
    auto e = EstimateTraining(m, o);
    EXPECT_TRUE(e.has_value());
    return e->logits_bytes;
  };
  EXPECT_EQ(logits(1), 1u * 16 * 1000 * 10);  // 10 B per logit, no copy
  EXPECT_EQ(logits(2), 2u * 16 * 1000 * 10 + 2u * 15 * 1000 * 4);
  m.model_type = "gemma2";  // + tanh's saved output, 2 B per logit in bf16
  EXPECT_EQ(logits(1), 1u * 16 * 1000 * (10 + 2));
  EXPECT_EQ(logits(2), 2u * 16 * 1000 * (10 + 2) + 2u * 15 * 1000 * 4);
}

TEST(RuntimeVersionsTest, ParsesMajorMinor) {
  EXPECT_EQ(*ParseLibraryVersion("2.5", "--torch-version"), (LibraryVersion{2, 5}));
  EXPECT_EQ(*ParseLibraryVersion("1.13.0a0", "torch"), (LibraryVersion{1, 13}));
  EXPECT_EQ(*ParseLibraryVersion("4.48.3", "transformers"), (LibraryVersion{4, 48}));
  EXPECT_EQ(*ParseLibraryVersion("2.6.0+cu124", "torch"), (LibraryVersion{2, 6}));
  EXPECT_FALSE(ParseLibraryVersion("2", "--torch-version").has_value());
  EXPECT_FALSE(ParseLibraryVersion("docs", "transformers").has_value());
  EXPECT_FALSE(ParseLibraryVersion("2.x", "--torch-version").has_value());
  EXPECT_EQ(ParseLibraryVersion("two", "--torch-version").error().message,
            "--torch-version two: expected a version major.minor such as 2.5");
}

// An encoder's layers keep no KV cache (AttentionKind::kNone) but mix with attention: training
// counts their attention block (eager keeps b x heads x s x s scores per layer), not the three
// channel-wide tensors of a recurrent mixer. A regression of stop 20 counted no attention for
// BERT: the published bert-large rows (measured.csv bl-02 ...) fell to -32% .. -40%.
TEST(TrainingTest, EncoderLayersCountTheirAttention) {
  const CatalogEntry* entry = FindCatalogEntry("google-bert/bert-base-uncased");
  ASSERT_NE(entry, nullptr);
  auto config = HfConfig::Parse(entry->config_json, "bert");
  ASSERT_TRUE(config);
  auto model = BuildFromConfig(*config);
  ASSERT_TRUE(model) << model.error().message;
  ASSERT_EQ(model->hp.layers.front().attention, AttentionKind::kNone);
  TrainOptions eager{.precision = Precision::kFp32, .batch = 2, .seq = 256, .attn = AttnImpl::kEager};
  TrainOptions sdpa = eager;
  sdpa.attn = AttnImpl::kSdpa;
  auto e = EstimateTraining(*model, eager);
  auto s = EstimateTraining(*model, sdpa);
  ASSERT_TRUE(e && s);
  // Eager's scores: 12 layers x 2 x 12 heads x 256 x 256 positions, at least the fp32 softmax
  // output (4 B) and the bool dropout mask (1 B) of each score.
  EXPECT_GE(e->activation_bytes - s->activation_bytes, uint64_t{12} * 2 * 12 * 256 * 256 * 5);
}

TEST(ActivationTest, LlamaLayerFlashBf16ByHand) {
  // h 64, 4 heads, 2 KV heads, head_dim 16, f 128, pure bf16, FlashAttention, b 1, s 8.
  Model m;
  m.hp.hidden_size = 64;
  m.hp.intermediate_size = 128;
  m.hp.gated_mlp = true;
  m.hp.norm = "rmsnorm";
  LayerInfo info{.num_heads = 4, .num_kv_heads = 2, .head_dim_k = 16, .head_dim_v = 16,
                 .intermediate_size = 128};
  estimate::ActivationParams p{.batch = 1, .seq = 8, .compute_bytes = 2, .stream_bytes = 2,
                               .attn = AttnImpl::kFlash};
  auto a = estimate::LayerSavedBytes(m, info, {}, p);
  // Per token: RMSNorm 4h + 2h = 384 (twice); q/k/v input 2h = 128; flash q 128 + k,v 128 +
  // out 128 + lse 16 = 400; gate/up input 128; gate, act, up 3 x 2f = 768; product 256.
  EXPECT_EQ(a.saved_bytes, (384u * 2 + 128 + 400 + 128 + 768 + 256) * 8);
  EXPECT_EQ(a.input_bytes, 2u * 64 * 8);
  EXPECT_EQ(a.eager_scores_bytes, 0u);
  // Eager adds per key position 4 heads x (fp32 softmax 4 + cast 2) bytes, x s^2.
  p.attn = AttnImpl::kEager;
  auto eager = estimate::LayerSavedBytes(m, info, {}, p);
  EXPECT_EQ(eager.eager_scores_bytes, 4u * 6 * 8 * 8);
  // Gemma-2 (validation/FINDINGS.md 2o): attention soft-capping saves tanh's output, 2 B more
  // per head and score; the post-attention and post-feedforward norms save 384 B per token each.
  p.attn_softcap = true;
  p.extra_norms = 2;
  auto gemma2 = estimate::LayerSavedBytes(m, info, {}, p);
  EXPECT_EQ(gemma2.eager_scores_bytes, 4u * (6 + 2) * 8 * 8);
  EXPECT_EQ(gemma2.saved_bytes - gemma2.eager_scores_bytes,
            eager.saved_bytes - eager.eager_scores_bytes + 2u * 384 * 8);
}

// GPT-J's eager attention (modeling_gptj.py `_attn`) upcasts q and k to float32: in pure bf16
// the matmul saves their float32 copies and the softmax is float32, cast back for the value
// matmul. A LayerNorm layer, h 64, 4 heads of 16, MLP 256, LoRA-like (nothing trains), b 1,
// s 8: against GPT-NeoX's layer (softmax in the model dtype, 2 B per score and head), GPT-J's
// scores are 4 heads x (4 + 2) B per pair, and q and k 2 x 4 x 16 x (4 - 2) = 256 B more per token.
TEST(ActivationTest, GptjUpcastsQueryAndKeyInItsEagerAttention) {
  Model m;
  m.architecture = "GPTJForCausalLM";
  m.hp.hidden_size = 64;
  m.hp.intermediate_size = 256;
  m.hp.norm = "layernorm";
  LayerInfo info{.num_heads = 4, .num_kv_heads = 4, .head_dim_k = 16, .head_dim_v = 16,
                 .intermediate_size = 256};
  estimate::ActivationParams p{.batch = 1, .seq = 8, .compute_bytes = 2, .stream_bytes = 2,
                               .attn = AttnImpl::kEager};
  estimate::LayerTraining frozen;
  frozen.trainable = false;
  frozen.save_all_linear_inputs = false;
  m.model_type = "gptj";
  const auto gptj = estimate::LayerSavedBytes(m, info, frozen, p);
  m.model_type = "gpt_neox";
  m.architecture = "GPTNeoXForCausalLM";
  const auto neox = estimate::LayerSavedBytes(m, info, frozen, p);
  EXPECT_EQ(gptj.eager_scores_bytes, 4u * 6 * 8 * 8);
  EXPECT_EQ(neox.eager_scores_bytes, 4u * 2 * 8 * 8);
  EXPECT_EQ(gptj.saved_bytes - gptj.eager_scores_bytes,
            neox.saved_bytes - neox.eager_scores_bytes + 256u * 8);
}

// A MoE layer in transformers' expert loop, trained in full: h 64, 4 heads (2 KV) of 16, 8
// experts of width 32, top 2, a shared expert of width 48 (Qwen2-MoE's layout), pure bf16,
// flash, b 1, s 8. Per token, against the dense layer of LlamaLayerFlashBf16ByHand (attention
// part 384 + 128 + 400 = 912, MLP norm 384):
//   gate/up input 128; 2 experts x (gate, act, up 3 x 2 x 32 + product 2 x 32) = 512;
//   router 2 x 4 x 8 = 64; the two experts' outputs 2 x 2 x 64 = 256; their weighted outputs,
//   which index_add_ keeps as its source, 2 x 2 x 64 = 256; their gathered inputs 2 x 2 x 64 =
//   256; the shared expert's gate, act, up 3 x 2 x 48 + product 2 x 48 = 384 and its output
//   2 x 64 = 128.
TEST(ActivationTest, MoeExpertLoopWithASharedExpertByHand) {
  Model m;
  m.hp.hidden_size = 64;
  m.hp.gated_mlp = true;
  m.hp.norm = "rmsnorm";
  m.hp.num_experts = 8;
  m.hp.experts_per_token = 2;
  m.hp.moe_intermediate_size = 32;
  m.hp.shared_expert_intermediate_size = 48;
  LayerInfo info{.num_heads = 4, .num_kv_heads = 2, .head_dim_k = 16, .head_dim_v = 16,
                 .moe = true};
  estimate::ActivationParams p{.batch = 1, .seq = 8, .compute_bytes = 2, .stream_bytes = 2,
                               .attn = AttnImpl::kFlash};
  const uint64_t per_token = 912 + 384 + 128 + 512 + 64 + 256 + 256 + 256 + 384 + 128;
  EXPECT_EQ(estimate::LayerSavedBytes(m, info, {}, p).saved_bytes, per_token * 8);
  // DeepSeek's layout names a count of shared experts of the routed width instead: 1 x 32.
  m.hp.shared_expert_intermediate_size = 0;
  m.hp.num_shared_experts = 1;
  EXPECT_EQ(estimate::LayerSavedBytes(m, info, {}, p).saved_bytes,
            (per_token - 4 * 2 * (48 - 32)) * 8);
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit

namespace memfit {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

// A decoder layer with cross-attention (T5 layer.1.EncDecAttention): h 8, 2 heads of 4, relu
// MLP of 16, RMSNorm, fp32, eager, no dropout, full fine-tuning; batch 1, 3 decoder tokens
// attending to 5 encoder tokens.
TEST(ActivationTest, CrossAttentionByHand) {
  Model m;
  m.hp.hidden_size = 8;
  m.hp.intermediate_size = 16;
  m.hp.norm = "rmsnorm";
  m.hp.activation = "relu";
  LayerInfo info{.num_heads = 2, .num_kv_heads = 2, .head_dim_k = 4, .head_dim_v = 4,
                 .intermediate_size = 16, .cross_attention = true};
  estimate::ActivationParams p{.batch = 1, .seq = 3, .cross_seq = 5, .compute_bytes = 4,
                               .stream_bytes = 4, .attn = AttnImpl::kEager};
  auto a = estimate::LayerSavedBytes(m, info, {}, p);
  // Per decoder token: self-attention = RMSNorm 4h + 4h = 64, q/k/v input 4h = 32, q 32, k+v
  // 64, o input 32 = 224; MLP = norm 64, wi input 32, relu output 4f = 64, wo input 64 = 224.
  // Self scores: 2 heads x 4 B (fp32 softmax) per (query, key) pair, 3 x 3 pairs = 72.
  // Cross-attention: per decoder token norm 64 + q input 32 + q 32 + o input 32 = 160; per
  // encoder token k + v = 64 (their input, the encoder output, is shared by every layer and
  // counted once by the caller); scores 8 B per pair, 3 x 5 pairs = 120.
  EXPECT_EQ(a.saved_bytes, (224u + 224) * 3 + 72 + 160 * 3 + 64 * 5 + 120);
  EXPECT_EQ(a.eager_scores_bytes, 72u + 120);
  // Selective recomputation drops both attention cores (q, k, v and the scores).
  EXPECT_EQ(a.selective_bytes, (448u - 96) * 3 + (160 - 32) * 3);
  EXPECT_EQ(a.input_bytes, 4u * 8 * 3);
  // Without encoder tokens the layer is a plain decoder layer.
  p.cross_seq = 0;
  EXPECT_EQ(estimate::LayerSavedBytes(m, info, {}, p).saved_bytes, (224u + 224) * 3 + 72);
}

// T5 (modeling_t5.py) trained: the encoder's layers over --context tokens, the decoder's over
// --decoder-tokens with cross-attention over the encoder's, the LM loss over decoder tokens.
TEST(TrainingTest, EncoderDecoderCountsBothStacksAndCrossAttention) {
  auto config = HfConfig::Parse(R"({"model_type": "t5", "architectures":
      ["T5ForConditionalGeneration"], "vocab_size": 100, "d_model": 8, "d_kv": 4, "num_heads": 2,
      "d_ff": 16, "num_layers": 1, "num_decoder_layers": 1, "dropout_rate": 0.0,
      "feed_forward_proj": "relu"})", "t5");
  ASSERT_TRUE(config);
  auto model = BuildFromConfig(*config);
  ASSERT_TRUE(model) << model.error().message;
  TrainOptions o{.precision = Precision::kFp32, .batch = 1, .seq = 5, .decoder_tokens = 3,
                 .attn = AttnImpl::kEager};
  auto e = EstimateTraining(*model, o);
  ASSERT_TRUE(e) << e.error().message;
  // Encoder layer at 5 tokens: (224 + 224) x 5 + scores 8 x 5 x 5 = 2440 (per-token terms as in
  // ActivationTest.CrossAttentionByHand). Decoder layer: 2336 (that test's layer). Token ids,
  // 8 B for each of the 5 + 3 tokens = 64. Each stack's final RMSNorm (4h + 4h) and its output
  // kept (the encoder's for k/v, the decoder's for lm_head), 96 B per token x 8 = 768.
  EXPECT_EQ(e->activation_bytes, 2440u + 2336 + 64 + 768);
  // The tied LM head's loss over the 3 decoder tokens: fp32 logits + log_softmax, no shift.
  EXPECT_EQ(e->logits_bytes, 3u * 100 * 8);
  // Without --decoder-tokens the decoder reads --context tokens.
  o.decoder_tokens = 0;
  auto same = EstimateTraining(*model, o);
  ASSERT_TRUE(same);
  EXPECT_EQ(same->logits_bytes, 5u * 100 * 8);
  EXPECT_GT(same->activation_bytes, e->activation_bytes);
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit
