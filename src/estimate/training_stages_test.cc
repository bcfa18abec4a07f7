// One test per stage function of the training estimate (estimate/training_stages.h), on a tiny
// Llama-shaped model whose numbers are derived by hand below.

#include "estimate/training_stages.h"

#include <gtest/gtest.h>

#include "model/tensor_test_util.h"

namespace memfit::estimate {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

using testing::ShapedTensor;

// One layer, h 8, vocabulary 16, 2 heads of 4 (no GQA), gated MLP of width 16, RMSNorm, the
// head tied to the embedding. Parameters: embedding 16 x 8 = 128; q, k, v, o 4 x 64 = 256;
// gate, up, down 3 x 128 = 384; two layer norms 16; the final norm 8: P = 792. The layer's
// weights: 256 + 384 + 16 = 656 parameters.
Model Tiny() {
  Model m;
  m.name = "tiny";
  m.model_type = "llama";
  m.architecture = "LlamaForCausalLM";
  m.tensors = {ShapedTensor("model.embed_tokens.weight", {16, 8}),
               ShapedTensor("model.layers.0.self_attn.q_proj.weight", {8, 8}),
               ShapedTensor("model.layers.0.self_attn.k_proj.weight", {8, 8}),
               ShapedTensor("model.layers.0.self_attn.v_proj.weight", {8, 8}),
               ShapedTensor("model.layers.0.self_attn.o_proj.weight", {8, 8}),
               ShapedTensor("model.layers.0.mlp.gate_proj.weight", {16, 8}),
               ShapedTensor("model.layers.0.mlp.up_proj.weight", {16, 8}),
               ShapedTensor("model.layers.0.mlp.down_proj.weight", {8, 16}),
               ShapedTensor("model.layers.0.input_layernorm.weight", {8}),
               ShapedTensor("model.layers.0.post_attention_layernorm.weight", {8}),
               ShapedTensor("model.norm.weight", {8}),
               ShapedTensor("lm_head.weight", {16, 8})};
  m.tensors.back().in_head = true;
  m.tensors.back().tied_to = "model.embed_tokens.weight";
  m.hp = testing::OneLlamaLayer(
      {.hidden = 8, .heads = 2, .kv_heads = 2, .head_dim = 4, .intermediate = 16});
  m.hp.vocab_size = 16;
  m.hp.tie_word_embeddings = true;
  return m;
}

// TrainOptions with the fields a test sets (designated initializers would leave the members
// without defaults to -Wmissing-field-initializers).
struct Opts {
  TrainOptions o;
  Opts& Method(TrainMethod v) { o.method = v; return *this; }
  Opts& Prec(Precision v) { o.precision = v; return *this; }
  Opts& Gpus(uint64_t v) { o.gpus = v; return *this; }
  Opts& Strat(Strategy v) { o.strategy = v; return *this; }
  Opts& Seq(uint64_t v) { o.seq = v; return *this; }
  Opts& Tp(uint64_t v) { o.tp = v; return *this; }
  Opts& Batch(uint64_t v) { o.batch = v; return *this; }
  operator const TrainOptions&() const { return o; }
};

TrainRegime RegimeOf(const TrainOptions& o) {
  auto r = TrainRegimeFor(o);
  EXPECT_TRUE(r.has_value()) << r.error().message;
  return r.has_value() ? r.value() : TrainRegime{};
}

TrainableTensors TrainableOf(const Model& m, const TrainOptions& o) {
  auto t = CountTrainableTensors(m, o, RegimeOf(o));
  EXPECT_TRUE(t.has_value()) << t.error().message;
  return t.has_value() ? std::move(t.value()) : TrainableTensors{};
}

TEST(TrainingStagesTest, RegimeBytesPerElement) {
  // fp32: everything 4 bytes.
  TrainRegime fp32 = RegimeOf(Opts().Prec(Precision::kFp32));
  EXPECT_EQ(fp32.compute_bytes, 4u);
  EXPECT_EQ(fp32.base_weight_bytes, 4u);
  EXPECT_EQ(fp32.grad_bytes, 4u);
  EXPECT_EQ(fp32.state_bytes, 4u);
  EXPECT_FALSE(fp32.autocast);
  // HF AMP: fp32 weights, gradients and states, bf16 matmuls under autocast.
  TrainRegime amp = RegimeOf(Opts().Prec(Precision::kBf16Mixed));
  EXPECT_EQ(amp.compute_bytes, 2u);
  EXPECT_EQ(amp.base_weight_bytes, 4u);
  EXPECT_EQ(amp.grad_bytes, 4u);
  EXPECT_TRUE(amp.autocast);
  // DeepSpeed mixed over 4 GPUs: 16-bit weights and gradients, an fp32 master, no autocast.
  TrainRegime ds = RegimeOf(Opts().Prec(Precision::kBf16Mixed).Gpus(4).Strat(Strategy::kZero2));
  EXPECT_EQ(ds.base_weight_bytes, 2u);
  EXPECT_EQ(ds.grad_bytes, 2u);
  EXPECT_TRUE(ds.ds_master);
  EXPECT_FALSE(ds.autocast);
  EXPECT_EQ(ds.dp, 4u);
  // Pure bf16: 2 bytes for weights, gradients and states.
  TrainRegime bf16 = RegimeOf(Opts().Prec(Precision::kBf16));
  EXPECT_EQ(bf16.base_weight_bytes + bf16.grad_bytes + bf16.state_bytes, 6u);
  // LoRA in bf16: a bf16 base, fp32 adapters with fp32 gradients and states.
  TrainRegime lora = RegimeOf(Opts().Method(TrainMethod::kLora).Prec(Precision::kBf16));
  EXPECT_EQ(lora.base_weight_bytes, 2u);
  EXPECT_EQ(lora.train_weight_bytes + lora.grad_bytes + lora.state_bytes, 12u);
  // tp x pp must divide the GPUs; counts must be at least 1.
  EXPECT_FALSE(TrainRegimeFor(Opts().Gpus(3).Tp(2)).has_value());
  EXPECT_FALSE(TrainRegimeFor(Opts().Batch(0)).has_value());
}

TEST(TrainingStagesTest, TrainableTensorsPerMethod) {
  // Full fp32: all 792 parameters train; gradients 792 x 4 = 3168 B, AdamW states 792 x 8 =
  // 6336 B; the largest tensor 128 elements; the tied head is the embedding's 128; the layer's
  // 656 parameters weigh 2624 B.
  TrainableTensors full = TrainableOf(Tiny(), Opts().Prec(Precision::kFp32));
  EXPECT_EQ(full.trainable_numel, 792u);
  EXPECT_EQ(full.grad_bytes, 3168u);
  EXPECT_EQ(full.state_bytes, 6336u);
  EXPECT_EQ(full.weight_bytes, 3168u);
  EXPECT_EQ(full.largest_numel, 128u);
  EXPECT_EQ(full.tied_head_numel, 128u);
  EXPECT_EQ(full.largest_block_bytes, 2624u);
  EXPECT_EQ(full.frozen_params, 0u);
  EXPECT_EQ(full.autocast_copy_bytes, 0u);
  // HF AMP: a bf16 copy of every fp32 matmul weight (the seven linears' 640 elements) and of the
  // tied head (128): (640 + 128) x 2 = 1536 B.
  TrainableTensors amp = TrainableOf(Tiny(), Opts().Prec(Precision::kBf16Mixed));
  EXPECT_EQ(amp.autocast_copy_bytes, 1536u);
  // Freeze (the last 2 layers train: the only layer): the layer's 656 parameters train, the
  // embedding and the final norm (136) do not; the tied head does not count as trained.
  TrainableTensors freeze = TrainableOf(Tiny(), Opts().Method(TrainMethod::kFreeze).Prec(Precision::kFp32));
  EXPECT_EQ(freeze.trainable_numel, 656u);
  EXPECT_EQ(freeze.frozen_params, 136u);
  EXPECT_EQ(freeze.tied_head_numel, 0u);
  // LoRA r 2 on PEFT's llama default (q_proj, v_proj): 2 x r x (8 + 8) = 64 adapter parameters;
  // the base in bf16 (792 x 2 = 1584 B) plus fp32 adapters (64 x 4 = 256 B).
  TrainOptions lo = Opts().Method(TrainMethod::kLora).Prec(Precision::kBf16);
  lo.lora.rank = 2;
  TrainableTensors lora = TrainableOf(Tiny(), lo);
  EXPECT_EQ(lora.trainable_numel, 64u);
  EXPECT_EQ(lora.weight_bytes, 1584u + 256u);
  EXPECT_EQ(lora.frozen_params, 792u);
  ASSERT_EQ(lora.layer_train.size(), 1u);
  EXPECT_EQ(lora.layer_train[0].lora_in_dims, (std::vector<uint64_t>{8, 8}));
  EXPECT_FALSE(lora.messages.assumptions.empty());  // which targets
  // Targets that match nothing are an error.
  lo.lora.targets = {"nothing"};
  EXPECT_FALSE(CountTrainableTensors(Tiny(), lo, RegimeOf(lo)).has_value());
}

TEST(TrainingStagesTest, ModelStatesPerGpuPerStrategy) {
  // fp32 DDP over 2 GPUs: nothing is sharded; DDP's buckets copy the gradients (3168 B).
  const TrainOptions ddp = Opts().Prec(Precision::kFp32).Gpus(2);
  TrainableTensors t = TrainableOf(Tiny(), ddp);
  auto s = ModelStatesFor(t, ddp, RegimeOf(ddp));
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->weights.weights, 3168u);
  EXPECT_EQ(s->gradients.gradients, 3168u);
  EXPECT_EQ(s->optimizer, 6336u);
  EXPECT_EQ(s->comm, 3168u);
  // ZeRO-3, bf16-mixed, 4 GPUs: bf16 weights 1584 / 4 = 396; fp32 master 3168 / 4 = 792; bf16
  // gradients 396 and the fp32 partition 792; states 6336 / 4 = 1584; the gathered layer and
  // its gradients: 2 x (656 x 2) = 2624.
  TrainOptions z3 = Opts().Prec(Precision::kBf16Mixed).Gpus(4).Strat(Strategy::kZero3);
  t = TrainableOf(Tiny(), z3);
  EXPECT_EQ(WeightsAndMasterPerGpu(t, z3, RegimeOf(z3)).weights, 396u);
  EXPECT_EQ(WeightsAndMasterPerGpu(t, z3, RegimeOf(z3)).master, 792u);
  EXPECT_EQ(GradientBytesPerGpu(t, z3, RegimeOf(z3)).gradients, 396u);
  EXPECT_EQ(GradientBytesPerGpu(t, z3, RegimeOf(z3)).fp32_partition, 792u);
  EXPECT_EQ(OptimizerStatesPerGpu(t, z3, RegimeOf(z3)), 1584u);
  EXPECT_EQ(CommunicationBytesPerGpu(t, z3, RegimeOf(z3), 396), 2624u);
  // Parameter offload moves all of it but the communication buffers to CPU RAM:
  // 396 + 792 + 396 + 792 + 1584 = 3960.
  z3.offload = Offload::kParams;
  s = ModelStatesFor(t, z3, RegimeOf(z3));
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->cpu, 3960u);
  EXPECT_EQ(s->weights.weights + s->weights.master + s->gradients.gradients +
            s->gradients.fp32_partition + s->optimizer, 0u);
  // FSDP, bf16-mixed, 4 GPUs: fp32 weights, gradients and states / 4 (792, 792, 1584); the
  // autocast copies 1536 / 4 = 384; two units of 656 parameters in bf16 and one unit's fp32
  // gradients: 656 x 2 x 2 + 656 x 4 = 5248.
  const TrainOptions fsdp = Opts().Prec(Precision::kBf16Mixed).Gpus(4).Strat(Strategy::kFsdp);
  t = TrainableOf(Tiny(), fsdp);
  s = ModelStatesFor(t, fsdp, RegimeOf(fsdp));
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->weights.weights, 792u);
  EXPECT_EQ(s->weights.autocast_copy, 384u);
  EXPECT_EQ(s->gradients.gradients, 792u);
  EXPECT_EQ(s->optimizer, 1584u);
  EXPECT_EQ(s->comm, 5248u);
  // Offload needs a sharding strategy.
  TrainOptions bad;
  bad.offload = Offload::kOptimizer;
  EXPECT_FALSE(ModelStatesFor(TrainableOf(Tiny(), bad), bad, RegimeOf(bad)).has_value());
}

TEST(TrainingStagesTest, ForwardActivationsOfTheTinyLayer) {
  // fp32, SDPA, 1 x 4 tokens. Per token of the layer (c = s_b = 4, h 8, 2 heads of 4, f 16):
  // attention: RMSNorm 4h + s_b h = 64, the q/k/v input 32, q + out + lse 4x2x4 + 4x2x4 + 4x2 =
  // 72, k and v 4x2x8 = 64, o's input 32: 264; MLP: RMSNorm 64, gate/up input 32, gate, act and
  // up outputs 3 x 4 x 16 = 192, the product 64: 352. 616 B per token x 4 tokens = 2464 B. The
  // embedding keeps the token ids, 8 B per token: 32 B.
  TrainOptions o;
  o.precision = Precision::kFp32;
  o.seq = 4;
  const TrainableTensors t = TrainableOf(Tiny(), o);
  ForwardActivations a = ForwardActivationsFor(Tiny(), o, RegimeOf(o), t, Mamba2Scan::kKernels);
  EXPECT_EQ(a.per_layer_max_bytes, 2464u);
  EXPECT_EQ(a.saved_bytes, 2464u + 32u);
  EXPECT_EQ(a.tokens, 4u);
  EXPECT_EQ(a.in_flight, 1u);
  // Full checkpointing keeps the layer's input only (s_b h = 32 B per token): 128 + 32.
  o.checkpointing = Checkpointing::kFull;
  a = ForwardActivationsFor(Tiny(), o, RegimeOf(o), t, Mamba2Scan::kKernels);
  EXPECT_EQ(a.saved_bytes, 128u + 32u);
  EXPECT_EQ(a.per_layer_max_bytes, 2464u);
}

// QLoRA over bitsandbytes >= 0.43.2 saves what LoRA saves: MatMul4Bit keeps no input
// (`ctx.tensors = (None, B)`). bf16, SDPA, LoRA r 2 on q_proj and v_proj, 1 x 4 tokens; per
// token (c = s_b = 2): attention: RMSNorm 4h + s_b h = 48, q + out + lse 2x8 + 2x8 + 4x2 = 40,
// k and v 2x2x8 = 32: 120; MLP: RMSNorm 48, gate, act and up outputs 3 x 2 x 16 = 96: 144;
// LoRA: two adapters, each its fp32 input 4 x 8 and A's fp32 output 4 x 2: 80. 344 B x 4 tokens
// = 1376 B; the token ids 32 B. (bitsandbytes < 0.43.2 kept the linears' inputs too: + 80 B per
// token.) The backward dequantizes one weight at a time: the largest quantized linear (gate, up,
// down: 128 elements) in bf16, 256 B, joins the layer's working set.
TEST(TrainingStagesTest, QloraSavesWhatLoraSavesAndOneDequantizedWeight) {
  TrainOptions o;
  o.method = TrainMethod::kQlora;
  o.precision = Precision::kBf16;
  o.lora.rank = 2;
  o.seq = 4;
  const TrainableTensors q = TrainableOf(Tiny(), o);
  EXPECT_EQ(q.dequantized_weight_numel, 128u);
  const ForwardActivations qa = ForwardActivationsFor(Tiny(), o, RegimeOf(o), q, Mamba2Scan::kKernels);
  EXPECT_EQ(qa.per_layer_max_bytes, 1376u);
  EXPECT_EQ(qa.saved_bytes, 1376u + 32u);
  EXPECT_EQ(BackwardWorkingSetFor(o, RegimeOf(o), q, qa).layer_bytes, 1376u + 256u);
  TrainOptions lo = o;
  lo.method = TrainMethod::kLora;
  const TrainableTensors l = TrainableOf(Tiny(), lo);
  EXPECT_EQ(l.dequantized_weight_numel, 0u);
  const ForwardActivations la = ForwardActivationsFor(Tiny(), lo, RegimeOf(lo), l, Mamba2Scan::kKernels);
  EXPECT_EQ(la.saved_bytes, qa.saved_bytes);
  EXPECT_EQ(BackwardWorkingSetFor(lo, RegimeOf(lo), l, la).layer_bytes, 1376u);
  bool said = false;
  for (const auto& a : q.messages.assumptions) said = said || a.find("0.43.2") != std::string::npos;
  EXPECT_TRUE(said) << "the bitsandbytes release is an assumption";
}

// StarCoder2's layer loop in transformers 4.48-4.50 never calls the checkpoint function: the
// tiny layer keeps all it saves (2464 + 32 B, as without checkpointing) and its backward
// recomputes nothing (one layer's 2464 B, not two); from 4.51 the layer input only, 128 + 32.
TEST(TrainingStagesTest, CheckpointingFollowsTheTransformersRelease) {
  Model sc2 = Tiny();
  sc2.model_type = "starcoder2";
  TrainOptions o;
  o.precision = Precision::kFp32;
  o.seq = 4;
  o.checkpointing = Checkpointing::kFull;
  auto saved_and_layer = [&](LibraryVersion transformers) {
    o.versions.transformers = transformers;
    StageMessages messages;
    TrainRegime r = RegimeOf(o);
    r.checkpointing = CheckpointingInEffect(sc2, o, messages);
    const TrainableTensors t = TrainableOf(sc2, o);
    const ForwardActivations a = ForwardActivationsFor(sc2, o, r, t, Mamba2Scan::kKernels);
    return std::pair{a.saved_bytes, BackwardWorkingSetFor(o, r, t, a).layer_bytes};
  };
  EXPECT_EQ(saved_and_layer({4, 48}), (std::pair<uint64_t, uint64_t>{2496, 2464}));
  EXPECT_EQ(saved_and_layer({4, 50}), (std::pair<uint64_t, uint64_t>{2496, 2464}));
  EXPECT_EQ(saved_and_layer({4, 51}), (std::pair<uint64_t, uint64_t>{160, 4928}));
  EXPECT_EQ(saved_and_layer({4, 47}), (std::pair<uint64_t, uint64_t>{160, 4928}));
  // Other families checkpoint under every release; the ignored flag is said.
  StageMessages messages;
  o.versions.transformers = {4, 48};
  EXPECT_EQ(CheckpointingInEffect(Tiny(), o, messages), Checkpointing::kFull);
  EXPECT_TRUE(messages.assumptions.empty());
  EXPECT_EQ(CheckpointingInEffect(sc2, o, messages), Checkpointing::kNone);
  EXPECT_EQ(messages.assumptions.size(), 1u);
}

// Dropout masks on CUDA are 1 byte per element (native_dropout's bool mask). A residual dropout
// (StarCoder2's residual_dropout, read as hidden_dropout) adds two per layer, after the attention
// and after the MLP, 2 x 8 B x 4 tokens = 64 B, and one on the embedding output, 8 x 4 = 32 B.
// Attention dropout keeps a mask only in eager attention: under SDPA, nothing more; in eager, per
// head and (query, key) pair of the 4 x 4 scores its bool mask (1 B) and its fp32 output (4 B):
// 2 heads x 16 pairs x 5 B = 160 B.
TEST(TrainingStagesTest, DropoutMasksPerSite) {
  TrainOptions o;
  o.precision = Precision::kFp32;
  o.seq = 4;
  const uint64_t none = 2464 + 32;  // ForwardActivationsOfTheTinyLayer
  auto saved = [&](const Model& m) {
    return ForwardActivationsFor(m, o, RegimeOf(o), TrainableOf(m, o), Mamba2Scan::kKernels)
        .saved_bytes;
  };
  Model m = Tiny();
  m.hp.hidden_dropout = 0.1;
  EXPECT_EQ(saved(m), none + 64 + 32);
  m.hp.hidden_dropout = 0;
  m.hp.attention_dropout = 0.1;
  EXPECT_EQ(saved(m), none);
  o.attn = AttnImpl::kEager;
  const uint64_t eager = saved(Tiny());
  EXPECT_EQ(saved(m), eager + 160);
}

TEST(TrainingStagesTest, LogitsAndLossPerImplementation) {
  // fp32, transformers 4.50, 1 x 4 tokens, V 16: n = 64 logits. Forward: logits and the saved
  // log_softmax, 8 B each: 512; at the loss backward three fp32 tensors (768): 256 more.
  TrainOptions o;
  o.precision = Precision::kFp32;
  o.seq = 4;
  LogitsAndLoss l = LogitsAndLossFor(Tiny(), o, RegimeOf(o), 4);
  EXPECT_EQ(l.forward_bytes, 512u);
  EXPECT_EQ(l.at_backward_bytes.value_or(0), 512u);
  EXPECT_EQ(l.backward_extra_bytes, 256u);
  // transformers 4.48 with 2 sequences: n = 128; + the shifted fp32 copy 2 x 3 x 16 x 4 = 384:
  // 1024 + 384 = 1408; at the backward still three fp32 tensors: 1536, 128 more.
  o.batch = 2;
  o.versions.transformers = {4, 48};
  l = LogitsAndLossFor(Tiny(), o, RegimeOf(o), 8);
  EXPECT_EQ(l.forward_bytes, 1408u);
  EXPECT_EQ(l.backward_extra_bytes, 128u);
  // bf16-mixed, 4.50, 64 logits: bf16 logits, fp32 upcast, fp32 log_softmax: 10 B each.
  TrainOptions amp;
  amp.precision = Precision::kBf16Mixed;
  amp.seq = 4;
  EXPECT_EQ(LogitsAndLossFor(Tiny(), amp, RegimeOf(amp), 4).forward_bytes, 640u);
  // GPT-J upcasts in its forward (`lm_head(h).to(torch.float32)`): the bf16 logits are a
  // temporary, so the fp32 upcast and log_softmax remain: 8 B each, 512.
  Model gptj = Tiny();
  gptj.model_type = "gptj";
  EXPECT_EQ(LogitsAndLossFor(gptj, amp, RegimeOf(amp), 4).forward_bytes, 512u);
  // A fused loss keeps no vocabulary-sized tensor; a classification head b x labels x 12.
  amp.loss = LossImpl::kFused;
  EXPECT_EQ(LogitsAndLossFor(Tiny(), amp, RegimeOf(amp), 4).forward_bytes, 0u);
  TrainOptions cls;
  cls.seq = 4;
  cls.head = TaskHead::kSequenceClassification;
  cls.num_labels = 3;
  EXPECT_EQ(LogitsAndLossFor(Tiny(), cls, RegimeOf(cls), 4).forward_bytes, 36u);
}

TEST(TrainingStagesTest, BackwardWorkingSet) {
  TrainOptions o;
  o.precision = Precision::kFp32;
  const TrainableTensors t = TrainableOf(Tiny(), o);
  ForwardActivations a;
  a.per_layer_max_bytes = 1000;
  // One layer's gradients of its saved tensors; under checkpointing the recomputed layer too.
  EXPECT_EQ(BackwardWorkingSetFor(o, RegimeOf(o), t, a).layer_bytes, 1000u);
  // The tied embedding's backward: the head's gradient, the dense one and their sum, which
  // becomes .grad: 2 x 128 x 4 = 1024 beyond the gradients. With the gradients kept (torch
  // 1.13's zero_grad, or a second micro-batch) .grad is already counted: all three, 3 x 128 x 4.
  EXPECT_EQ(BackwardWorkingSetFor(o, RegimeOf(o), t, a).tied_embedding_bytes, 1024u);
  TrainOptions kept = o;
  kept.zero_grad_set_to_none = false;
  EXPECT_EQ(BackwardWorkingSetFor(kept, RegimeOf(kept), t, a).tied_embedding_bytes, 1536u);
  kept.versions.torch = {1, 13};  // zero_grad's default there: set_to_none=False
  kept.zero_grad_set_to_none.reset();
  EXPECT_EQ(BackwardWorkingSetFor(kept, RegimeOf(kept), t, a).tied_embedding_bytes, 1536u);
  TrainOptions accum = o;
  accum.grad_accum = 2;
  EXPECT_EQ(BackwardWorkingSetFor(accum, RegimeOf(accum), t, a).tied_embedding_bytes, 1536u);
  o.checkpointing = Checkpointing::kFull;
  EXPECT_EQ(BackwardWorkingSetFor(o, RegimeOf(o), t, a).layer_bytes, 2000u);
}

uint64_t SumOf(const std::vector<StagePart>& parts) {
  uint64_t total = 0;
  for (const auto& p : parts) total += p.bytes;
  return total;
}

// The loss's buffers are freed before the first layer's backward: the backward's peak is the
// larger of the two moments, not their sum (issue 31: checkpointing at 2 x 1,024 was counted
// +11% to +17% over in four families).
TEST(TrainingStagesTest, BackwardPeakIsTheLargerMomentNotTheirSum) {
  BackwardBytes b;
  b.activations = 100;
  b.logits_at_loss_backward = 50;
  b.loss_backward = 30;
  b.gradients = b.gradients_before_encoder = 200;
  b.layer_backward = 60;
  b.gradients_persist = true;
  // Loss backward: 100 + 50 + 30 + 200 kept gradients = 380; the top layer's backward:
  // 100 + 200 + 60 = 360; the end: 200 (no tied head). Not 100 + 50 + 30 + 200 + 60 = 440.
  std::vector<StagePart> peak = BackwardPeakParts(b);
  EXPECT_EQ(SumOf(peak), 380u);
  // Checkpointed: 10 B of layer inputs, the recomputed layer and its backward 120: the layer's
  // moment, 10 + 200 + 120 = 330, over the loss's 10 + 50 + 30 + 200 = 290.
  b.activations = 10;
  b.layer_backward = 120;
  peak = BackwardPeakParts(b);
  EXPECT_EQ(SumOf(peak), 330u);
  bool layer_part = false;
  for (const auto& p : peak) layer_part = layer_part || p.name == "layer backward and recompute";
  EXPECT_TRUE(layer_part);
  // Gradients freed between steps: the end, every gradient plus one layer's backward, 320,
  // over the layer's moment without kept gradients (130) and the loss's (90).
  b.gradients_persist = false;
  EXPECT_EQ(SumOf(BackwardPeakParts(b)), 320u);
  // A tied head whose gradient sum (500) outweighs the layer's backward: 200 + 500.
  b.tied_embedding = 500;
  EXPECT_EQ(SumOf(BackwardPeakParts(b)), 700u);
}

TEST(TrainingStagesTest, OptimizerStepTransients) {
  TrainOptions o;
  o.precision = Precision::kFp32;
  const TrainableTensors t = TrainableOf(Tiny(), o);
  // torch 2.5 foreach AdamW: one state-sized copy, 792 x 4 = 3168; torch 1.13 foreach: two.
  EXPECT_EQ(OptimizerStepTransients(o, RegimeOf(o), t), 3168u);
  o.versions.torch = {1, 13};
  o.foreach_optimizer = true;
  EXPECT_EQ(OptimizerStepTransients(o, RegimeOf(o), t), 6336u);
  // Per tensor: sqrt and the quotient of the largest tensor, 2 x 128 x 4 = 1024.
  o.foreach_optimizer = false;
  EXPECT_EQ(OptimizerStepTransients(o, RegimeOf(o), t), 1024u);
  o.optimizer = Optimizer::kSgd;
  EXPECT_EQ(OptimizerStepTransients(o, RegimeOf(o), t), 0u);
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit::estimate
