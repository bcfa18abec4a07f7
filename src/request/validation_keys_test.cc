// `memfit validate` never ignores a setting: every key docs/accuracy.md ("Row settings") lists is
// fed to a row and is either applied (the plan's options, or the estimate, change as derived
// below) or the row is not expressed with the key and value named; unknown keys likewise.

#include <functional>
#include <map>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "memfit/validation.h"
#include "model/tensor_test_util.h"
#include "test_support.h"

namespace memfit {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

// The keys of docs/accuracy.md's "Row settings" table (rows "| `key` | ...").
std::set<std::string> DocumentedKeys() {
  auto text = testing::ReadFile(std::string(MEMFIT_SOURCE_DIR) + "/docs/accuracy.md");
  EXPECT_TRUE(text.has_value());
  std::set<std::string> keys;
  if (!text) return keys;
  const size_t start = text->find("## Row settings");
  EXPECT_NE(start, std::string::npos);
  const size_t end = text->find("\n## ", start + 1);
  const std::string section = text->substr(start, end - start);
  for (size_t at = section.find("\n| `"); at != std::string::npos;
       at = section.find("\n| `", at + 1)) {
    const size_t close = section.find('`', at + 4);
    keys.insert(section.substr(at + 4, close - at - 4));
  }
  return keys;
}

MeasuredRow Row(std::string task, std::map<std::string, std::string> settings,
                std::string measure = "max_memory_allocated") {
  MeasuredRow r;
  r.id = "k";
  r.model = "tiny";
  r.task = std::move(task);
  r.measure = std::move(measure);
  r.value = "100";
  r.unit = "MiB";
  r.settings = std::move(settings);
  return r;
}

// The base rows each key is added to: expressible as they are.
MeasuredRow BaseRow(const std::string& task) {
  if (task == "inference") return Row(task, {{"context", "256"}, {"batch", "1"}});
  if (task == "train") return Row(task, {{"method", "full"}, {"precision", "fp32"}, {"seq", "256"}});
  return Row(task, {});
}

// testing::TinyBf16Lm (model/tensor_test_util.h) as a Llama.
Model TinyLm() {
  Model m = testing::TinyBf16Lm();
  m.architecture = "LlamaForCausalLM";
  return m;
}

double LoadEstimate(std::map<std::string, std::string> settings) {
  ModelProvider tiny = [](std::string_view, const BuildOptions&) -> Result<Model> {
    return TinyLm();
  };
  RowResult r = EvaluateRow(Row("load", std::move(settings)), tiny);
  EXPECT_TRUE(r.expressed) << r.reason;
  return r.estimate;
}

// The row is not expressed and its reason names key=value.
void ExpectNamed(const MeasuredRow& row, const std::string& key_value) {
  RowPlan p = PlanRow(row);
  EXPECT_NE(p.unsupported.find(key_value), std::string::npos)
      << row.task << " row with " << key_value << ": \"" << p.unsupported << "\"";
}

// Adds key=value to the base row of `task`, checks the plan is expressible and hands it on.
RowPlan Applied(const std::string& task, const std::string& key, const std::string& value,
                std::map<std::string, std::string> more = {}) {
  MeasuredRow row = BaseRow(task);
  row.settings[key] = value;
  for (auto& [k, v] : more) row.settings[k] = v;
  RowPlan p = PlanRow(row);
  EXPECT_TRUE(p.unsupported.empty()) << task << " " << key << "=" << value << ": " << p.unsupported;
  return p;
}

// Each documented key's check: its value applied (the plan's options, or the estimate, change
// as derived) or the row not expressed with key=value named.
using KeyCheckMap = std::map<std::string, std::function<void()>>;

// The keys of train rows.
KeyCheckMap TrainKeyChecks() {
  return {
      {"alpha",
       [] {
         EXPECT_EQ(Applied("train", "alpha", "32", {{"method", "lora"}}).train.lora.alpha, 32);
         ExpectNamed(Row("train", {{"seq", "256"}, {"alpha", "x"}}), "alpha=x");
       }},
      {"checkpointing",
       [] {
         EXPECT_EQ(Applied("train", "checkpointing", "full").train.checkpointing,
                   Checkpointing::kFull);
         EXPECT_EQ(Applied("train", "checkpointing", "selective").train.checkpointing,
                   Checkpointing::kSelective);
         ExpectNamed(Row("train", {{"seq", "256"}, {"checkpointing", "half"}}), "checkpointing=half");
       }},
      {"decoder_tokens",
       [] { EXPECT_EQ(Applied("train", "decoder_tokens", "64").train.decoder_tokens, 64u); }},
      {"device",
       [] {
         RowPlan cpu = Applied("train", "device", "cpu");
         EXPECT_EQ(cpu.train.device, ComputeDevice::kCpu);
         EXPECT_EQ(cpu.train.zero_grad_set_to_none, std::optional<bool>(true));
         EXPECT_EQ(Applied("train", "device", "cuda").train.device, ComputeDevice::kCuda);
         ExpectNamed(Row("inference", {{"device", "tpu"}}), "device=tpu");
       }},
      {"dp",
       [] {
         // dp 2 x tp 2 x pp 1 = 4 GPUs.
         EXPECT_EQ(Applied("train", "dp", "2", {{"tp", "2"}}).train.gpus, 4u);
         ExpectNamed(Row("train", {{"seq", "256"}, {"dp", "2"}, {"gpus", "8"}}), "dp=2");
       }},
      {"foreach",
       [] {
         EXPECT_EQ(Applied("train", "foreach", "false").train.foreach_optimizer,
                   std::optional<bool>(false));
         ExpectNamed(Row("train", {{"seq", "256"}, {"foreach", "maybe"}}), "foreach=maybe");
       }},
      {"framework",
       [] {
         EXPECT_NE(PlanRow(Row("train", {{"framework", "megatron"}})).unsupported.find("Megatron"),
                   std::string::npos);
         ExpectNamed(Row("train", {{"seq", "256"}, {"framework", "deepspeed"}}),
                     "framework=deepspeed");
       }},
      {"gpus", [] { EXPECT_EQ(Applied("train", "gpus", "8").train.gpus, 8u); }},
      {"grad_accum", [] { EXPECT_EQ(Applied("train", "grad_accum", "4").train.grad_accum, 4u); }},
      {"method",
       [] {
         EXPECT_EQ(Applied("train", "method", "lora").train.method, TrainMethod::kLora);
         EXPECT_EQ(Applied("train", "method", "lora(r16)").train.lora.rank, 16u);
         RowPlan dpo = Applied("train", "method", "lora(r16) DPO (TRL)", {{"batch", "1"}});
         EXPECT_EQ(dpo.train.batch, 2u);  // chosen + rejected
         ExpectNamed(Row("train", {{"seq", "256"}, {"method", "prompt-tuning"}}),
                     "method=prompt-tuning");
       }},
      {"micro_batch",
       [] {
         EXPECT_EQ(Applied("train", "micro_batch", "3").train.batch, 3u);
         ExpectNamed(Row("train", {{"seq", "256"}, {"batch", "2"}, {"micro_batch", "3"}}),
                     "micro_batch=3");
       }},
      {"offload",
       [] {
         EXPECT_EQ(Applied("train", "offload", "optimizer", {{"strategy", "zero2"}}).train.offload,
                   Offload::kOptimizer);
         ExpectNamed(Row("train", {{"seq", "256"}, {"offload", "disk"}}), "offload=disk");
       }},
      {"optimizer",
       [] {
         EXPECT_EQ(Applied("train", "optimizer", "adafactor").train.optimizer, Optimizer::kAdafactor);
         ExpectNamed(Row("train", {{"seq", "256"}, {"optimizer", "newton"}}), "optimizer=newton");
       }},
      {"plain_pytorch",
       [] {
         Applied("train", "plain_pytorch", "");
         ExpectNamed(Row("train", {{"seq", "256"}, {"plain_pytorch", "yes"}}), "plain_pytorch=yes");
       }},
      {"pp", [] { EXPECT_EQ(Applied("train", "pp", "2", {{"gpus", "2"}}).train.pp, 2u); }},
      {"precision",
       [] {
         EXPECT_EQ(Applied("train", "precision", "bf16-mixed").train.precision, Precision::kBf16Mixed);
         ExpectNamed(Row("train", {{"seq", "256"}, {"precision", "fp64"}}), "precision=fp64");
       }},
      {"rank",
       [] { EXPECT_EQ(Applied("train", "rank", "64", {{"method", "lora"}}).train.lora.rank, 64u); }},
      {"seq",
       [] {
         EXPECT_EQ(Applied("train", "seq", "512").train.seq, 512u);
         ExpectNamed(Row("train", {{"seq", "long"}}), "seq=long");
       }},
      {"strategy",
       [] {
         EXPECT_EQ(Applied("train", "strategy", "zero2").train.strategy, Strategy::kZero2);
         ExpectNamed(Row("train", {{"seq", "256"}, {"strategy", "zero9"}}), "strategy=zero9");
       }},
      {"tp", [] { EXPECT_EQ(Applied("train", "tp", "2", {{"gpus", "2"}}).train.tp, 2u); }},
      {"trainer",
       [] {
         RowPlan hf = Applied("train", "trainer", "hf");
         EXPECT_EQ(hf.train.zero_grad_set_to_none, std::optional<bool>(false));
         EXPECT_EQ(hf.train.attn, AttnImpl::kEager);
         ExpectNamed(Row("train", {{"seq", "256"}, {"trainer", "lightning"}}), "trainer=lightning");
       }},
  };
}

// The keys of inference rows (llama.cpp's among them: named, not applied).
KeyCheckMap InferenceKeyChecks() {
  return {
      {"cache_type", [] { ExpectNamed(Row("inference", {{"cache_type", "q8_0"}}), "cache_type=q8_0"); }},
      {"context",
       [] {
         EXPECT_EQ(Applied("inference", "context", "1024").inference.context_tokens, 1024u);
         ExpectNamed(Row("train", {{"seq", "256"}, {"context", "512"}}), "context=512");
       }},
      {"ctx", [] { ExpectNamed(Row("inference", {{"ctx", "2048"}}), "ctx=2048"); }},
      {"decode",
       [] { EXPECT_EQ(Applied("inference", "decode", "4").inference.decoder_tokens, 4u); }},
      {"engine",
       [] {
         EXPECT_EQ(Applied("inference", "engine", "vllm").kind, "inference-weights");
         EXPECT_EQ(Applied("inference", "engine", "transformers").kind, "inference");
         ExpectNamed(Row("inference", {{"engine", "sglang"}}), "engine=sglang");
         ExpectNamed(Row("inference", {{"engine", "foo"}}), "engine=foo");
         EXPECT_NE(PlanRow(Row("inference", {{"engine", "llama.cpp"}})).unsupported.find("GGUF"),
                   std::string::npos);
       }},
      {"gpu_memory_total",
       [] {
         EXPECT_EQ(Applied("inference", "gpu_memory_total", "80GiB").inference.gpu_memory_bytes,
                   80ull << 30);
         ExpectNamed(Row("inference", {{"gpu_memory_total", "lots"}}), "gpu_memory_total=lots");
       }},
      {"ngl", [] { ExpectNamed(Row("inference", {{"ngl", "57/57"}}), "ngl=57/57"); }},
  };
}

// The keys several tasks read, and those of load and context rows.
KeyCheckMap SharedKeyChecks() {
  return {
      {"attn",
       [] {
         EXPECT_EQ(Applied("inference", "attn", "eager").inference.attn, AttnImpl::kEager);
         EXPECT_EQ(Applied("train", "attn", "flash2").train.attn, AttnImpl::kFlash);
         ExpectNamed(Row("inference", {{"attn", "magic"}}), "attn=magic");
       }},
      {"batch",
       [] {
         EXPECT_EQ(Applied("inference", "batch", "2").inference.batch, 2u);
         EXPECT_EQ(Applied("train", "batch", "4").train.batch, 4u);
         ExpectNamed(Row("train", {{"seq", "256"}, {"batch", "0"}}), "batch=0");
         ExpectNamed(Row("load", {{"batch", "4"}}), "batch=4");
       }},
      {"dtype",
       [] {
         // The weights in the row's dtype: 17024 x 2 bytes in bfloat16; without a dtype
         // from_pretrained's float32, 17024 x 4.
         EXPECT_EQ(LoadEstimate({{"dtype", "bfloat16"}}), 17024.0 * 2);
         EXPECT_EQ(LoadEstimate({}), 17024.0 * 4);
         EXPECT_EQ(Applied("inference", "dtype", "bfloat16").inference.dtype, Dtype::kBF16);
         RowPlan fp16 = PlanRow(Row("train", {{"seq", "256"}, {"dtype", "float16"}}));
         EXPECT_EQ(fp16.train.precision, Precision::kFp16Mixed) << fp16.unsupported;
         ExpectNamed(Row("load", {{"dtype", "float33"}}), "dtype=float33");
       }},
      {"format",
       [] {
         EXPECT_NE(PlanRow(Row("load", {{"format", "gguf"}})).unsupported.find("GGUF"),
                   std::string::npos);
         ExpectNamed(Row("load", {{"format", "safetensors"}}), "format=safetensors");
       }},
      {"gpu",
       [] {
         // Recorded: the same weights on any GPU.
         EXPECT_EQ(LoadEstimate({{"gpu", "V100-16GB"}}), LoadEstimate({}));
         Applied("train", "gpu", "A100-80GB");
       }},
      {"head",
       [] {
         // The tiny model is a LlamaForCausalLM.
         EXPECT_EQ(LoadEstimate({{"head", "causal-lm"}}), 17024.0 * 4);
         ModelProvider tiny = [](std::string_view, const BuildOptions&) -> Result<Model> {
           return TinyLm();
         };
         RowResult r = EvaluateRow(Row("load", {{"head", "sequence-classification"}}), tiny);
         EXPECT_FALSE(r.expressed);
         EXPECT_NE(r.reason.find("head=sequence-classification"), std::string::npos) << r.reason;
         EXPECT_NE(r.reason.find("LlamaForCausalLM"), std::string::npos) << r.reason;
         EXPECT_EQ(Applied("train", "head", "sequence-classification").train.head,
                   TaskHead::kSequenceClassification);
         ExpectNamed(Row("load", {{"head", "tail"}}), "head=tail");
       }},
      {"op",
       [] {
         EXPECT_TRUE(PlanRow(Row("context", {{"op", "torch.ones((1,1)).cuda()"}})).unsupported.empty());
         ExpectNamed(Row("load", {{"op", "x"}}), "op=x");
       }},
      {"quant",
       [] {
         // bitsandbytes NF4 (no double quant) of the one linear layer, block 64: 4096 / 2 packed
         // + 64 fp32 absmax + the 16-entry fp32 code (64) = 2368; the rest in float16, as
         // transformers' bnb quantizers set it without a dtype: (6400 + 64 + 64 + 6400) x 2 =
         // 25856.
         EXPECT_EQ(LoadEstimate({{"quant", "bnb-nf4"}}), 2368.0 + 25856);
         // LLM.int8 with bfloat16: 4096 + 64 fp32 row scales = 4352, plus 25856.
         EXPECT_EQ(LoadEstimate({{"quant", "bnb-int8"}, {"dtype", "bfloat16"}}), 4352.0 + 25856);
         ExpectNamed(Row("load", {{"quant", "foo"}}), "quant=foo");
         EXPECT_EQ(Applied("inference", "quant", "nf4").inference.quant.scheme, QuantScheme::kBnbNf4);
         RowPlan qlora = Applied("train", "quant", "bnb-nf4", {{"method", "qlora"}});
         EXPECT_EQ(qlora.train.qlora_quant.scheme, QuantScheme::kBnbNf4);
         EXPECT_FALSE(qlora.train.qlora_quant.double_quant);
         ExpectNamed(Row("train", {{"seq", "256"}, {"quant", "nf4"}}), "quant=nf4");
       }},
  };
}

// Every key's check, from the groups above; a key in two groups is a failure.
KeyCheckMap KeyChecks() {
  KeyCheckMap all;
  for (KeyCheckMap group : {TrainKeyChecks(), InferenceKeyChecks(), SharedKeyChecks()}) {
    for (auto& [key, check] : group) {
      EXPECT_TRUE(all.emplace(key, std::move(check)).second) << key << " is in two groups";
    }
  }
  return all;
}

TEST(ValidationKeys, EveryDocumentedKeyIsCheckedHere) {
  std::set<std::string> checked;
  for (const auto& [key, check] : KeyChecks()) checked.insert(key);
  EXPECT_EQ(DocumentedKeys(), checked)
      << "docs/accuracy.md \"Row settings\" and KeyChecks() list different keys";
}

TEST(ValidationKeys, EveryDocumentedKeyIsAppliedOrNamed) {
  for (const auto& [key, check] : KeyChecks()) {
    SCOPED_TRACE(key);
    check();
  }
}

TEST(ValidationKeys, UnknownKeysAreNamedOnEveryTask) {
  for (const char* task : {"context", "load", "inference", "train"}) {
    MeasuredRow row = BaseRow(task);
    row.settings["colour"] = "blue";
    row.settings["sparkle"] = "";
    RowPlan p = PlanRow(row);
    EXPECT_NE(p.unsupported.find("not expressible: colour=blue, sparkle"), std::string::npos)
        << task << ": " << p.unsupported;
  }
  // The memory after load of a measured run: its run's keys are checked too.
  MeasuredRow loaded = BaseRow("inference");
  loaded.measure = "memory_after_load";
  loaded.settings["colour"] = "blue";
  ExpectNamed(loaded, "colour=blue");
}

// The published QLoRA-style case: a load row with quant=bnb-nf4 was estimated in float32
// (the quantization dropped); it is now the quantized load, and quant=foo is refused.
TEST(ValidationKeys, QuantizedLoadRowIsNoLongerFloat32) {
  const double fp32 = LoadEstimate({});
  const double nf4 = LoadEstimate({{"quant", "bnb-nf4"}});
  EXPECT_LT(nf4, fp32 / 2);  // 28224 against 68096
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit
