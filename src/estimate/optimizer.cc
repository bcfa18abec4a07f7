// Option names, optimizer state bytes per tensor, PEFT default LoRA targets.
// docs/estimates.md, "Optimizer states" and "LoRA".

#include <array>
#include <utility>

#include "base/enum_names.h"
#include "memfit/checked_math.h"
#include "memfit/estimate_train.h"

namespace memfit {
namespace {

constexpr std::array<std::pair<std::string_view, TrainMethod>, 4> kMethods{{
    {"full", TrainMethod::kFull}, {"freeze", TrainMethod::kFreeze}, {"lora", TrainMethod::kLora},
    {"qlora", TrainMethod::kQlora}}};
constexpr std::array<std::pair<std::string_view, Optimizer>, 9> kOptimizers{{
    {"adamw", Optimizer::kAdamW}, {"adam", Optimizer::kAdam}, {"adamw-8bit", Optimizer::kAdamW8bit},
    {"paged-adamw", Optimizer::kPagedAdamW}, {"paged-adamw-8bit", Optimizer::kPagedAdamW8bit},
    {"adafactor", Optimizer::kAdafactor}, {"sgd", Optimizer::kSgd},
    {"sgd-momentum", Optimizer::kSgdMomentum}, {"lion", Optimizer::kLion}}};
constexpr std::array<std::pair<std::string_view, Precision>, 4> kPrecisions{{
    {"fp32", Precision::kFp32}, {"fp16-mixed", Precision::kFp16Mixed},
    {"bf16-mixed", Precision::kBf16Mixed}, {"bf16", Precision::kBf16}}};
constexpr std::array<std::pair<std::string_view, Checkpointing>, 3> kCheckpointing{{
    {"none", Checkpointing::kNone}, {"full", Checkpointing::kFull},
    {"selective", Checkpointing::kSelective}}};
constexpr std::array<std::pair<std::string_view, Strategy>, 5> kStrategies{{
    {"ddp", Strategy::kDdp}, {"zero1", Strategy::kZero1}, {"zero2", Strategy::kZero2},
    {"zero3", Strategy::kZero3}, {"fsdp", Strategy::kFsdp}}};
constexpr std::array<std::pair<std::string_view, Offload>, 3> kOffloads{{
    {"none", Offload::kNone}, {"optimizer", Offload::kOptimizer}, {"params", Offload::kParams}}};
constexpr std::array<std::pair<std::string_view, TaskHead>, 4> kHeads{{
    {"auto", TaskHead::kAuto}, {"causal-lm", TaskHead::kCausalLm},
    {"sequence-classification", TaskHead::kSequenceClassification}, {"none", TaskHead::kNone}}};

constexpr std::array<std::pair<std::string_view, LossImpl>, 3> kLosses{{
    {"hf", LossImpl::kHf}, {"fused", LossImpl::kFused}, {"low-precision", LossImpl::kLowPrecision}}};

}  // namespace

std::string_view TrainMethodName(TrainMethod v) { return NameOf(v, kMethods); }
std::string_view OptimizerName(Optimizer v) { return NameOf(v, kOptimizers); }
std::string_view PrecisionName(Precision v) { return NameOf(v, kPrecisions); }
std::string_view CheckpointingName(Checkpointing v) { return NameOf(v, kCheckpointing); }
std::string_view StrategyName(Strategy v) { return NameOf(v, kStrategies); }
std::string_view OffloadName(Offload v) { return NameOf(v, kOffloads); }
Result<TrainMethod> ParseTrainMethod(std::string_view s) { return ParseWord(s, kMethods, "--method"); }
Result<Optimizer> ParseOptimizer(std::string_view s) {
  if (s == "adamw_8bit" || s == "adam8bit" || s == "adamw8bit") return Optimizer::kAdamW8bit;
  if (s == "adamw_torch" || s == "adamw_hf") return Optimizer::kAdamW;
  return ParseWord(s, kOptimizers, "--optimizer");
}
Result<Precision> ParsePrecision(std::string_view s) {
  if (s == "fp16") return Precision::kFp16Mixed;
  if (s == "float32") return Precision::kFp32;
  return ParseWord(s, kPrecisions, "--precision");
}
Result<Checkpointing> ParseCheckpointing(std::string_view s) {
  return ParseWord(s, kCheckpointing, "--checkpointing");
}
Result<Strategy> ParseStrategy(std::string_view s) { return ParseWord(s, kStrategies, "--strategy"); }
Result<Offload> ParseOffload(std::string_view s) { return ParseWord(s, kOffloads, "--offload"); }
Result<LossImpl> ParseLossImpl(std::string_view s) { return ParseWord(s, kLosses, "--loss"); }
std::string_view LossImplName(LossImpl v) { return NameOf(v, kLosses); }
Result<TaskHead> ParseTaskHead(std::string_view s) { return ParseWord(s, kHeads, "--head"); }

uint64_t OptimizerStateBytes(Optimizer optimizer, const Tensor& t, uint32_t state_bytes) {
  const uint64_t n = t.numel;
  auto mul = [](uint64_t a, uint64_t b) { return CheckedMul(a, b).value_or(UINT64_MAX); };
  switch (optimizer) {
    case Optimizer::kAdamW:
    case Optimizer::kAdam:
    case Optimizer::kPagedAdamW:
      return mul(n, 2 * state_bytes);  // exp_avg, exp_avg_sq in the parameter's dtype
    case Optimizer::kAdamW8bit:
    case Optimizer::kPagedAdamW8bit:
      // bitsandbytes Optimizer2State: tensors under min_8bit_size (4096) keep fp32 states;
      // otherwise two uint8 states + fp32 absmax per 256-element block each.
      if (n < 4096) return mul(n, 8);
      return CheckedAdd(mul(n, 2), mul(CeilDiv(n, 256), 8)).value_or(UINT64_MAX);
    case Optimizer::kAdafactor: {
      // transformers Adafactor (beta1 None): factored row and column second moments for >= 2-D
      // tensors (shape[:-1] and shape[:-2] + shape[-1:]), a full one for 1-D; in grad dtype.
      if (t.shape.size() >= 2) {
        uint64_t last = t.shape.back();
        uint64_t rows = last ? n / last : 0;
        uint64_t second = t.shape[t.shape.size() - 2];
        uint64_t cols = second ? n / second : 0;
        return mul(rows + cols, state_bytes);
      }
      return mul(n, state_bytes);
    }
    case Optimizer::kSgd:
      return 0;
    case Optimizer::kSgdMomentum:
    case Optimizer::kLion:
      return mul(n, state_bytes);  // momentum buffer / exp_avg
  }
  return 0;
}

std::vector<std::string> PeftDefaultTargets(std::string_view model_type) {
  // peft/utils/constants.py TRANSFORMERS_MODELS_TO_LORA_TARGET_MODULES_MAPPING.
  static const std::array<std::pair<std::string_view, std::vector<std::string>>, 34> kMap{{
      {"t5", {"q", "v"}}, {"mt5", {"q", "v"}}, {"bart", {"q_proj", "v_proj"}},
      {"gpt2", {"c_attn"}}, {"bloom", {"query_key_value"}}, {"opt", {"q_proj", "v_proj"}},
      {"gptj", {"q_proj", "v_proj"}}, {"gpt_neox", {"query_key_value"}},
      {"gpt_neo", {"q_proj", "v_proj"}}, {"bert", {"query", "value"}},
      {"roberta", {"query", "value"}}, {"xlm-roberta", {"query", "value"}},
      {"electra", {"query", "value"}}, {"deberta-v2", {"query_proj", "value_proj"}},
      {"deberta", {"in_proj"}}, {"layoutlm", {"query", "value"}}, {"llama", {"q_proj", "v_proj"}},
      {"chatglm", {"query_key_value"}}, {"gpt_bigcode", {"c_attn"}}, {"mpt", {"Wqkv"}},
      {"RefinedWebModel", {"query_key_value"}}, {"RefinedWeb", {"query_key_value"}},
      {"falcon", {"query_key_value"}}, {"btlm", {"c_proj", "c_attn"}}, {"codegen", {"qkv_proj"}},
      {"mistral", {"q_proj", "v_proj"}}, {"mixtral", {"q_proj", "v_proj"}},
      {"stablelm", {"q_proj", "v_proj"}}, {"phi", {"q_proj", "v_proj", "fc1", "fc2"}},
      {"gemma", {"q_proj", "v_proj"}}, {"gemma2", {"q_proj", "v_proj"}},
      {"qwen2", {"q_proj", "v_proj"}}, {"qwen3", {"q_proj", "v_proj"}},
      {"qwen3_moe", {"q_proj", "v_proj"}}}};
  for (const auto& [k, v] : kMap) {
    if (k == model_type) return v;
  }
  return {};
}

}  // namespace memfit
