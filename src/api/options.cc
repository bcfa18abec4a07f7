#include "api/options.h"

#include <charconv>
#include <cmath>
#include <optional>

#include <fmt/format.h>

#include "base/join_words.h"
#include "memfit/checked_math.h"
#include "memfit/engine.h"
#include "memfit/engine_release.h"
#include "memfit/estimate_inference.h"
#include "memfit/estimate_load.h"
#include "memfit/estimate_train.h"
#include "memfit/gpu.h"
#include "memfit/quantization.h"
#include "memfit/runtime_versions.h"
#include "memfit/suggest.h"
#include "memfit/units.h"

namespace memfit::api {
namespace {

// The library's parsers as checks: the values they accept (aliases included) are the values the
// option accepts, in the CLI, the API, Python and the page alike.
template <auto Parse>
Status Accepts(std::string_view value) {
  auto parsed = Parse(value);
  if (!parsed) return parsed.error();
  return Ok{};
}
Status AcceptsEngine(std::string_view v) { return Accepts<ParseEngine>(v); }
Status AcceptsDtype(std::string_view v) { return Accepts<ParseDtypeName>(v); }
Status AcceptsQuant(std::string_view v) { return Accepts<ParseQuant>(v); }
Status AcceptsKvDtype(std::string_view v) { return Accepts<ParseKvDtype>(v); }
Status AcceptsAttn(std::string_view v) { return Accepts<ParseAttnImpl>(v); }
Status AcceptsMethod(std::string_view v) { return Accepts<ParseTrainMethod>(v); }
Status AcceptsOptimizer(std::string_view v) { return Accepts<ParseOptimizer>(v); }
Status AcceptsPrecision(std::string_view v) { return Accepts<ParsePrecision>(v); }
Status AcceptsCheckpointing(std::string_view v) { return Accepts<ParseCheckpointing>(v); }
Status AcceptsStrategy(std::string_view v) { return Accepts<ParseStrategy>(v); }
Status AcceptsOffload(std::string_view v) { return Accepts<ParseOffload>(v); }
Status AcceptsHead(std::string_view v) { return Accepts<ParseTaskHead>(v); }
Status AcceptsLoss(std::string_view v) { return Accepts<ParseLossImpl>(v); }
Status AcceptsLoadDtype(std::string_view v) { return Accepts<ParseLoadDtype>(v); }
Status AcceptsVendor(std::string_view v) { return Accepts<ParseGpuVendor>(v); }
Status AcceptsMambaScan(std::string_view v) {
  auto parsed = ParseMamba2Scan(v, "--mamba-scan");
  if (!parsed) return parsed.error();
  return Ok{};
}
Status AcceptsSpeculativeAlgorithm(std::string_view v) {
  auto parsed = ParseSpeculativeAlgorithm(v);
  if (!parsed) return parsed.error();
  return Ok{};
}
Status AcceptsTorch(std::string_view v) {
  auto parsed = ParseLibraryVersion(v, "--torch-version");
  if (!parsed) return parsed.error();
  return Ok{};
}
Status AcceptsTransformers(std::string_view v) {
  auto parsed = ParseLibraryVersion(v, "--transformers-version");
  if (!parsed) return parsed.error();
  return Ok{};
}

constexpr double kMaxTokens = double(uint64_t{1} << 30);   // 1,073,741,824 tokens
constexpr double kMaxSequences = double(uint64_t{1} << 20);
constexpr double kMaxGpus = 65536;

const std::vector<std::string_view> kEngines = {"transformers", "vllm", "sglang", "llama.cpp"};
const std::vector<std::string_view> kQuants = {
    "stored", "none", "bnb-int8", "nf4", "nf4-dq", "fp4", "fp4-dq", "gptq", "gptq-8bit",
    "awq", "fp8", "fp8-block", "mxfp4", "hqq", "int8", "int4"};
const std::vector<std::string_view> kKvDtypes = {"model", "float16", "bfloat16", "fp8", "int8", "int4"};
const std::vector<std::string_view> kAttn = {"eager", "sdpa", "flash"};

// MODEL's flags, shared by every request that takes a MODEL.
void AddModelOptions(ModelQuery& q, std::vector<Option>& f) {
  f.push_back({.names = {"revision"}, .target = &q.revision,
               .help = "branch, tag or commit of a Hub model (default main)", .group = "model"});
  f.push_back({.names = {"offline"}, .target = &q.offline,
               .help = "use only local files and the cache (HF_HUB_OFFLINE=1)", .group = "model"});
  f.push_back({.names = {"token"}, .target = &q.token,
               .help = "Hugging Face token for gated or private repos (never printed)",
               .group = "model"});
  f.push_back({.names = {"gguf-file"}, .target = &q.gguf_file,
               .help = "the GGUF model to read from a Hub repository: a file (any file of a split), "
                       "or a part of one name such as Q4_K_M",
               .group = "model"});
}

Option Context(uint64_t& tokens, std::string_view help) {
  return {.names = {"context", "ctx-size", "ctx"}, .target = &tokens, .help = help,
          .unit = "tokens", .min = 1, .max = kMaxTokens, .short_name = "c"};
}

Option Batch(uint64_t& sequences, std::string_view help) {
  return {.names = {"batch"}, .target = &sequences, .help = help, .unit = "sequences", .min = 1,
          .max = kMaxSequences};
}

Option CudaContext(std::string& size, std::string_view help) {
  return {.names = {"cuda-context"}, .target = &size, .help = help, .unit = "bytes",
          .kind = ValueKind::kSize, .group = "overheads"};
}

Option AllocatorReserve(double& fraction) {
  return {.names = {"allocator-reserve"}, .target = &fraction,
          .help = "allocator cache as a fraction of the allocated peak (default 0)", .min = 0,
          .max = 10, .group = "overheads"};
}

void AddVersionOptions(std::string& torch, std::string& transformers, std::string& mamba_scan,
                       std::vector<Option>& f) {
  f.push_back({.names = {"torch-version"}, .target = &torch,
               .help = "torch release whose allocations to follow, major.minor (default: the "
                       "current release)",
               .parse = AcceptsTorch, .group = "runtime"});
  f.push_back({.names = {"transformers-version"}, .target = &transformers,
               .help = "transformers release whose allocations to follow, major.minor (default: "
                       "the current release)",
               .parse = AcceptsTransformers, .group = "runtime"});
  f.push_back({.names = {"mamba-scan"}, .target = &mamba_scan,
               .help = "Mamba layers in transformers: kernels (mamba_ssm installed, the default) "
                       "or torch (Mamba-2's chunked scan, Mamba-1's slow_forward: CPU, or no "
                       "mamba_ssm)",
               .choices = {"kernels", "torch"}, .parse = AcceptsMambaScan, .group = "runtime"});
}

// A serving engine's options, shared by inference and fit (vLLM's and SGLang's words).
// --engine-version's help: the releases memfit models, from their table.
std::string_view EngineVersionHelp() {
  static const std::string help =
      "the serving engine's release whose defaults apply (gpu_memory_utilization, "
      "mem_fraction_static, max_num_seqs, max_num_batched_tokens, KV dtypes): " +
      EngineReleaseSummary() + " (default: the newest)";
  return help;
}

template <typename Request>
void AddServingOptions(Request& r, std::vector<Option>& f) {
  f.push_back({.names = {"engine-version"}, .target = &r.engine_version,
               .help = EngineVersionHelp(), .group = "serving"});
  f.push_back({.names = {"gpu-memory-utilization", "mem-fraction-static"},
               .target = &r.gpu_memory_utilization,
               .help = "vLLM gpu_memory_utilization / SGLang mem_fraction_static (default: the "
                       "release's own; SGLang's from the GPU's memory)",
               .min = -1, .max = 1, .group = "serving"});
  f.push_back({.names = {"speculative-algorithm"}, .target = &r.speculative_algorithm,
               .help = "SGLang: speculative decoding; 0.5 reserves 2 GiB more (6 GiB for "
                       "STANDALONE, none for NGRAM) outside mem_fraction_static, 0.5.14 on puts "
                       "the draft inside it; NEXTN's draft (the checkpoint's MTP layers and their "
                       "KV cache) is counted, another checkpoint's draft is not",
               .choices = {"EAGLE", "EAGLE3", "NEXTN", "STANDALONE", "NGRAM"},
               .parse = AcceptsSpeculativeAlgorithm, .group = "serving"});
  f.push_back({.names = {"block-size"}, .target = &r.block_size,
               .help = "vLLM tokens per KV block", .unit = "tokens", .min = 1, .max = 65536,
               .group = "serving"});
  f.push_back({.names = {"max-num-seqs"}, .target = &r.max_num_seqs,
               .help = "vLLM max sequences at once (default: the release's for the GPU)",
               .unit = "sequences", .min = 1, .max = kMaxSequences, .group = "serving"});
  f.push_back({.names = {"max-batched-tokens"}, .target = &r.max_batched_tokens,
               .help = "vLLM max_num_batched_tokens, SGLang chunked_prefill_size: the profile "
                       "run (default: the release's for the GPU)",
               .unit = "tokens", .min = 1, .max = kMaxTokens, .group = "serving"});
  f.push_back({.names = {"tp"}, .target = &r.tp,
               .help = "tensor-parallel GPUs (default: from --gpus or --gpu NxKIND, else 1)",
               .unit = "GPUs", .min = 0, .max = kMaxGpus, .group = "parallelism"});
  f.push_back({.names = {"dp"}, .target = &r.dp,
               .help = "data-parallel ranks (vLLM --data-parallel-size; SGLang --dp)",
               .unit = "ranks", .min = 1, .max = kMaxGpus, .group = "parallelism"});
  f.push_back({.names = {"ep"}, .target = &r.ep,
               .help = "expert-parallel GPUs: vLLM tp x dp (--enable-expert-parallel), SGLang "
                       "--ep-size",
               .unit = "GPUs", .min = 1, .max = kMaxGpus, .group = "parallelism"});
  f.push_back({.names = {"pp"}, .target = &r.pp,
               .help = "pipeline stages (--pipeline-parallel-size)", .unit = "stages", .min = 1,
               .max = kMaxGpus, .group = "parallelism"});
  f.push_back({.names = {"enable-dp-attention"}, .target = &r.dp_attention,
               .help = "SGLang: attention data parallel over --dp inside --tp",
               .group = "parallelism"});
}

Status CheckText(const Option& o, const std::string& value) {
  if (value.empty()) return Ok{};
  const std::string flag = "--" + std::string(o.names[0]);
  std::vector<std::string> choices(o.choices.begin(), o.choices.end());
  if (o.kind == ValueKind::kGpu) {
    std::vector<DeviceSpec> devices;
    auto parsed = ParseDeviceArg(value, devices);
    if (!parsed) {
      std::string message = parsed.error().message;
      // ParseDeviceArg names --gpu; --curve-gpu and --gpu of other names are said as such.
      if (flag != "--gpu" && message.starts_with("--gpu ")) message = flag + message.substr(5);
      return Error{OneLine(message)};
    }
    return Ok{};
  }
  if (o.kind == ValueKind::kSize) {
    for (std::string_view c : o.choices) {
      if (value == c) return Ok{};
    }
    auto bytes = ParseByteSize(value);
    if (!bytes) return MakeError("{} {}: {}", flag, value, bytes.error().message);
    return Ok{};
  }
  Status accepted = Ok{};
  if (o.parse) {
    accepted = o.parse(value);
  } else if (!o.choices.empty()) {
    bool found = false;
    for (std::string_view c : o.choices) found = found || c == value;
    if (!found) accepted = MakeError("{} {}: expected {}", flag, value, JoinWords(o.choices, "or"));
  }
  if (accepted) return Ok{};
  std::string message = accepted.error().message;
  if (!message.starts_with("--")) {
    message = fmt::format("{} {}: {}", flag, value, message);
  } else if (!message.starts_with(flag + " ")) {
    // A shared check names its usual flag (AcceptsQuant: --quant); this option is another.
    message = flag + message.substr(std::min(message.find(' '), message.size()));
  }
  return Error{OneLine(message + DidYouMean(value, choices))};
}

}  // namespace

std::vector<Option> ModelOptions(ModelQuery& query) {
  std::vector<Option> f;
  AddModelOptions(query, f);
  return f;
}

std::vector<Option> Options(LoadRequest& r) {
  std::vector<Option> f;
  AddModelOptions(r.model, f);
  f.push_back({.names = {"dtypes"}, .target = &r.dtypes,
               .help = "dtypes to report (default: all)",
               .choices = {"float32", "float16", "bfloat16", "int8", "int4"},
               .parse = AcceptsLoadDtype});
  f.push_back({.names = {"accelerate"}, .target = &r.accelerate,
               .help = "reproduce `accelerate estimate-memory` (its table, rounding and MB/GB "
                       "labels)"});
  f.push_back({.names = {"library_name", "library-name"}, .target = &r.library_name,
               .help = "transformers or timm (accepted for accelerate compatibility)",
               .choices = {"transformers", "timm"}});
  f.push_back({.names = {"trust_remote_code", "trust-remote-code"}, .target = &r.trust_remote_code,
               .help = "accepted for compatibility; memfit never runs remote code"});
  return f;
}

std::vector<Option> Options(InferenceRequest& r) {
  std::vector<Option> f;
  AddModelOptions(r.model, f);
  f.push_back(Context(r.context, "tokens per sequence, prompt + generated (default: the model's "
                                 "maximum capped at 8192; GGUF: its training context, as "
                                 "llama.cpp)"));
  f.push_back(Batch(r.batch, "sequences at once"));
  f.push_back({.names = {"gpus"}, .target = &r.gpus,
               .help = "GPUs of the deployment: --tp is --gpus / (--dp x --pp) (the same as "
                       "--gpu NxKIND)",
               .unit = "GPUs", .min = 0, .max = kMaxGpus, .group = "parallelism"});
  f.push_back({.names = {"dtype"}, .target = &r.dtype,
               .help = "weights/activations dtype", .choices = {"bfloat16", "float16", "float32"},
               .parse = AcceptsDtype});
  f.push_back({.names = {"quant"}, .target = &r.quant,
               .help = "stored (the checkpoint's own quantization), none (dequantized to --dtype), "
                       "or a scheme to re-quantize to",
               .choices = kQuants, .parse = AcceptsQuant});
  f.push_back({.names = {"kv-dtype"}, .target = &r.kv_dtype, .help = "KV cache dtype",
               .choices = kKvDtypes, .parse = AcceptsKvDtype});
  f.push_back({.names = {"attn"}, .target = &r.attn, .help = "attention implementation",
               .choices = kAttn, .parse = AcceptsAttn});
  f.push_back({.names = {"engine"}, .target = &r.engine, .help = "the runtime that serves",
               .choices = kEngines, .parse = AcceptsEngine});
  f.push_back({.names = {"gpu-memory"}, .target = &r.gpu_memory,
               .help = "memory of one GPU for vLLM/SGLang's KV blocks (default: --gpu's)",
               .unit = "bytes", .kind = ValueKind::kSize, .group = "serving"});
  AddServingOptions(r, f);
  f.push_back({.names = {"gpu"}, .target = &r.gpu,
               .help = "the GPU: a catalog name (h200, rtx4090), NxNAME (8xh200) or a size "
                       "(24GiB); gives a verdict and whether FP8/MXFP4/NVFP4 run as stored",
               .kind = ValueKind::kGpu});
  f.push_back({.names = {"encoder-tokens"}, .target = &r.encoder_tokens,
               .help = "encoder length for cross-attention caches", .unit = "tokens", .min = 0,
               .max = kMaxTokens});
  f.push_back({.names = {"decoder-tokens"}, .target = &r.decoder_tokens,
               .help = "encoder-decoder models whose prompt is the encoder's (T5): tokens in the "
                       "decoder's self-attention cache (default: --context)",
               .unit = "tokens", .min = 0, .max = kMaxTokens});
  f.push_back({.names = {"new-tokens"}, .target = &r.new_tokens,
               .help = "transformers: tokens generate() adds (max_new_tokens); the prefill runs "
                       "over --context minus these (default 0: the whole context, the worst "
                       "case)",
               .unit = "tokens", .min = 0, .max = kMaxTokens});
  f.push_back(CudaContext(r.cuda_context, "CUDA context per GPU (default 1343MiB)"));
  f.push_back(AllocatorReserve(r.allocator_reserve));
  f.push_back({.names = {"all-logits"}, .target = &r.all_logits,
               .help = "logits for every prompt token (transformers < 4.45) instead of the last",
               .group = "runtime"});
  AddVersionOptions(r.torch_version, r.transformers_version, r.mamba_scan, f);
  f.push_back({.names = {"curve"}, .target = &r.curve,
               .help = "memory against context (256 tokens to the model's maximum) and the "
                       "longest context on each --curve-gpu"});
  f.push_back({.names = {"curve-gpu"}, .target = &r.curve_gpus,
               .help = "a GPU for --curve: catalog name or size (repeat for more; default --gpu)",
               .kind = ValueKind::kGpu});
  return f;
}

std::vector<Option> Options(TrainRequest& r) {
  std::vector<Option> f;
  AddModelOptions(r.model, f);
  f.push_back({.names = {"method"}, .target = &r.method, .help = "what is trained",
               .choices = {"full", "freeze", "lora", "qlora"}, .parse = AcceptsMethod});
  f.push_back({.names = {"optimizer"}, .target = &r.optimizer, .help = "the optimizer",
               .choices = {"adamw", "adam", "adamw-8bit", "paged-adamw", "paged-adamw-8bit",
                           "adafactor", "sgd", "sgd-momentum", "lion"},
               .parse = AcceptsOptimizer});
  f.push_back({.names = {"precision"}, .target = &r.precision, .help = "training precision",
               .choices = {"fp32", "fp16-mixed", "bf16-mixed", "bf16"}, .parse = AcceptsPrecision});
  Option batch = Batch(r.batch, "sequences per GPU per step (the micro-batch)");
  batch.names.push_back("micro-batch");
  f.push_back(batch);
  Option context = Context(r.context, "tokens per sequence (default: the model's maximum capped "
                                      "at 2048)");
  context.names.push_back("seq");  // the old spelling (the CLI notes it as deprecated)
  f.push_back(context);
  f.push_back({.names = {"decoder-tokens"}, .target = &r.decoder_tokens,
               .help = "encoder-decoder models (T5, BART): target tokens per sequence; --context "
                       "is the encoder's (default: --context)",
               .unit = "tokens", .min = 0, .max = kMaxTokens});
  f.push_back({.names = {"grad-accum"}, .target = &r.grad_accum,
               .help = "gradient accumulation steps", .unit = "steps", .min = 1, .max = 1e6});
  f.push_back({.names = {"checkpointing"}, .target = &r.checkpointing,
               .help = "activation (gradient) checkpointing", .choices = {"none", "full", "selective"},
               .parse = AcceptsCheckpointing});
  f.push_back({.names = {"attn"}, .target = &r.attn, .help = "attention implementation",
               .choices = kAttn, .parse = AcceptsAttn});
  f.push_back({.names = {"gpus"}, .target = &r.gpus,
               .help = "GPUs in total (the same as --gpu NxKIND)", .unit = "GPUs", .min = 1,
               .max = kMaxGpus, .group = "parallelism"});
  f.push_back({.names = {"gpu"}, .target = &r.gpu,
               .help = "the GPU: a catalog name (h100, rtx4090), NxNAME (2xh100) or a size "
                       "(24GiB); gives a verdict",
               .kind = ValueKind::kGpu});
  f.push_back({.names = {"strategy"}, .target = &r.strategy, .help = "data-parallel strategy",
               .choices = {"ddp", "zero1", "zero2", "zero3", "fsdp"}, .parse = AcceptsStrategy,
               .group = "parallelism"});
  f.push_back({.names = {"offload"}, .target = &r.offload, .help = "offload to CPU RAM",
               .choices = {"none", "optimizer", "params"}, .parse = AcceptsOffload});
  f.push_back({.names = {"tp"}, .target = &r.tp, .help = "tensor-parallel size", .unit = "GPUs",
               .min = 1, .max = kMaxGpus, .group = "parallelism"});
  f.push_back({.names = {"pp"}, .target = &r.pp,
               .help = "pipeline stages (1F1B: min(pp, grad-accum) micro-batches in flight on the "
                       "first stage)",
               .unit = "stages", .min = 1, .max = kMaxGpus, .group = "parallelism"});
  f.push_back({.names = {"lora-rank"}, .target = &r.lora_rank, .help = "LoRA rank r", .min = 1,
               .max = 65536, .group = "lora"});
  f.push_back({.names = {"lora-alpha"}, .target = &r.lora_alpha,
               .help = "LoRA alpha (no memory effect)", .min = 0, .max = 1e9, .group = "lora"});
  f.push_back({.names = {"lora-dropout"}, .target = &r.lora_dropout, .help = "LoRA dropout",
               .min = 0, .max = 1, .group = "lora"});
  f.push_back({.names = {"lora-targets"}, .target = &r.lora_targets,
               .help = "comma-separated module names or all-linear (default: PEFT's per model "
                       "type)",
               .group = "lora"});
  f.push_back({.names = {"qlora-quant"}, .target = &r.qlora_quant,
               .help = "QLoRA base quantization", .choices = {"nf4-dq", "nf4", "fp4", "fp4-dq"},
               .parse = AcceptsQuant, .group = "lora"});
  f.push_back({.names = {"freeze-layers"}, .target = &r.freeze_layers,
               .help = "--method freeze: trainable last layers", .unit = "layers", .min = 0,
               .max = 1e6});
  f.push_back({.names = {"head"}, .target = &r.head, .help = "the task head",
               .choices = {"auto", "causal-lm", "sequence-classification", "none"},
               .parse = AcceptsHead});
  f.push_back(CudaContext(r.cuda_context, "CUDA context per GPU (default 1343MiB)"));
  f.push_back(AllocatorReserve(r.allocator_reserve));
  f.push_back({.names = {"no-foreach"}, .target = &r.no_foreach,
               .help = "per-tensor optimizer step (no fp32 temp of all states; torch < 2.0's "
                       "default)",
               .group = "runtime"});
  f.push_back({.names = {"keep-grads"}, .target = &r.keep_grads,
               .help = "gradients stay allocated between steps (zero_grad(set_to_none=False); "
                       "torch < 2.0's default)",
               .group = "runtime"});
  AddVersionOptions(r.torch_version, r.transformers_version, r.mamba_scan, f);
  f.push_back({.names = {"loss"}, .target = &r.loss,
               .help = "hf (fp32 logits + log_softmax), fused (Liger/CCE), low-precision (TRL "
                       "selective_log_softmax)",
               .choices = {"hf", "fused", "low-precision"}, .parse = AcceptsLoss,
               .group = "runtime"});
  return f;
}

std::vector<Option> Options(FitCommandRequest& r) {
  std::vector<Option> f;
  AddModelOptions(r.model, f);
  f.push_back({.names = {"gpu"}, .target = &r.gpus,
               .help = "a catalog GPU (rtx4090, \"H100 SXM\"; `memfit gpus`), NxNAME (2xh100) or "
                       "a size (24GiB); repeat for several devices",
               .kind = ValueKind::kGpu});
  f.push_back({.names = {"ram"}, .target = &r.ram,
               .help = "CPU RAM for offloaded blocks (accelerate max_memory cpu), or unlimited",
               .unit = "bytes", .choices = {"unlimited"}, .kind = ValueKind::kSize,
               .group = "offload"});
  f.push_back({.names = {"disk"}, .target = &r.disk,
               .help = "disk for offloaded blocks, or unlimited", .unit = "bytes",
               .choices = {"unlimited"}, .kind = ValueKind::kSize, .group = "offload"});
  f.push_back({.names = {"reserve"}, .target = &r.reserve,
               .help = "memory kept free on every GPU (CUDA context)", .unit = "bytes",
               .kind = ValueKind::kSize, .group = "overheads"});
  f.push_back({.names = {"dtype"}, .target = &r.dtype, .help = "weights as loaded",
               .choices = {"stored", "float32", "float16", "bfloat16", "int8", "int4"},
               .parse = AcceptsLoadDtype});
  f.push_back({.names = {"task"}, .target = &r.task, .help = "what the GPUs must hold",
               .choices = {"load", "inference", "train"}});
  f.push_back({.names = {"method"}, .target = &r.method,
               .help = "--task train: what is trained (the advice searches from it)",
               .choices = {"full", "freeze", "lora", "qlora"}, .parse = AcceptsMethod});
  f.push_back(Context(r.context, "tokens per sequence (default: the model's maximum capped at "
                                 "8192 for inference, 2048 for training; GGUF: its training "
                                 "context)"));
  f.push_back(Batch(r.batch, "sequences at once (training: per GPU per step)"));
  f.push_back({.names = {"gpus"}, .target = &r.gpu_count,
               .help = "how many GPUs of the --gpu kind (the same as --gpu NxKIND)",
               .unit = "GPUs", .min = 0, .max = 1024, .group = "parallelism"});
  f.push_back({.names = {"strategy"}, .target = &r.strategy,
               .help = "balanced (transformers device_map=\"auto\") or sequential",
               .choices = {"balanced", "sequential"}, .group = "offload"});
  f.push_back({.names = {"pcie-gbps"}, .target = &r.pcie_gb_s,
               .help = "host-to-GPU GB/s for offloaded weights", .unit = "GB/s", .min = 0.001,
               .max = 1e6, .group = "offload"});
  f.push_back({.names = {"disk-gbps"}, .target = &r.disk_gb_s,
               .help = "disk read GB/s for disk-offloaded weights", .unit = "GB/s", .min = 0.001,
               .max = 1e6, .group = "offload"});
  f.push_back({.names = {"no-advice"}, .target = &r.no_advice, .help = "skip the advice"});
  f.push_back({.names = {"device-map"}, .target = &r.device_map_only,
               .help = "print only the device_map JSON for from_pretrained(device_map=...)"});
  f.push_back({.names = {"engine"}, .target = &r.engine,
               .help = "plan a serving deployment: vllm, sglang, transformers (tp_plan) or "
                       "llama.cpp (default: accelerate's device map)",
               .choices = kEngines, .parse = AcceptsEngine, .group = "serving"});
  f.push_back({.names = {"search"}, .target = &r.search,
               .help = "find the smallest deployment of --gpu's kind that fits (TP/EP/DP/PP "
                       "layouts)",
               .group = "serving"});
  f.push_back({.names = {"all-gpus"}, .target = &r.all_gpus,
               .help = "\"runs on\": every catalog GPU x 1/2/4/8", .group = "serving"});
  f.push_back({.names = {"max-gpus"}, .target = &r.max_gpus, .help = "--search: most GPUs to try",
               .unit = "GPUs", .min = 1, .max = 1024, .group = "serving"});
  f.push_back({.names = {"top"}, .target = &r.top, .help = "--search: deployments to print",
               .min = 1, .max = 1000, .group = "serving"});
  f.push_back({.names = {"quant"}, .target = &r.quant,
               .help = "stored (default), none (dequantize), or a scheme to quantize to",
               .choices = kQuants, .parse = AcceptsQuant});
  f.push_back({.names = {"kv-dtype"}, .target = &r.kv_dtype, .help = "KV cache dtype",
               .choices = kKvDtypes, .parse = AcceptsKvDtype});
  AddServingOptions(r, f);
  return f;
}

std::vector<Option> Options(InspectRequest& r) {
  std::vector<Option> f;
  AddModelOptions(r.model, f);
  f.push_back({.names = {"depth"}, .target = &r.depth,
               .help = "module depth to group by (numbered layers merge)", .min = 1, .max = 16});
  return f;
}

std::vector<Option> Options(GpusRequest& r) {
  return {{.names = {"min-memory"}, .target = &r.min_memory,
           .help = "only GPUs with at least this memory (24GiB)", .unit = "bytes",
           .kind = ValueKind::kSize},
          {.names = {"vendor"}, .target = &r.vendor, .help = "only this vendor's GPUs",
           .choices = {"nvidia", "amd", "apple", "intel"}, .parse = AcceptsVendor}};
}

// --export-configs writes files: the CLI's alone.
std::vector<Option> Options(ModelsRequest& r) {
  return {{.names = {"family"}, .target = &r.family,
           .help = "only this family (llama, bert, ...)"}};
}

// A token count with vLLM's --max-model-len suffixes (vllm/engine/arg_utils.py human_readable_int):
// k = 1,000, K = 1,024, m = 1,000,000, M = 1,048,576, on a whole or decimal number ("128K" =
// 131,072, "25.6k" = 25,600); nullopt without a suffix. Parsed by hand: the WebAssembly build's
// libc++ has no floating-point from_chars.
std::optional<Result<uint64_t>> ParseTokenSuffix(const Option& o, std::string_view text) {
  if (o.unit != "tokens" || text.size() < 2) return std::nullopt;
  const char suffix = text.back();
  const uint64_t scale = suffix == 'k' ? 1000 : suffix == 'K' ? 1024 : suffix == 'm' ? 1000000
                         : suffix == 'M' ? 1048576 : 0;
  if (scale == 0) return std::nullopt;
  const std::string_view number = text.substr(0, text.size() - 1);
  const auto bad = [&] {
    return Result<uint64_t>(MakeError(
        "--{} {}: expected a whole number of tokens, or one with k (1,000), K (1,024), m or M: "
        "128K = 131,072", o.names[0], text));
  };
  uint64_t digits = 0, divisor = 1;
  bool dot = false, any = false;
  for (const char ch : number) {
    if (ch == '.' && !dot) {
      dot = true;
      continue;
    }
    if (ch < '0' || ch > '9' || (dot && divisor >= 1'000'000)) return bad();
    auto next = CheckedMul(digits, 10);
    if (!next || !(next = CheckedAdd(*next, static_cast<uint64_t>(ch - '0')))) return bad();
    digits = *next;
    if (dot) divisor *= 10;
    any = true;
  }
  const auto scaled = CheckedMul(digits, scale);
  if (!any || !scaled || *scaled % divisor != 0) return bad();
  return Result<uint64_t>(*scaled / divisor);
}

Result<uint64_t> ParseCount(const Option& o, std::string_view text) {
  if (auto suffixed = ParseTokenSuffix(o, text)) return std::move(*suffixed);
  uint64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) {
    return MakeError("--{} {}: expected a whole number{}", o.names[0], text,
                     o.min >= 1 ? " of 1 or more" : "");
  }
  return value;
}

Status CheckOption(const Option& o) {
  const std::string flag = "--" + std::string(o.names[0]);
  if (auto* u = std::get_if<uint64_t*>(&o.target)) {
    const double v = static_cast<double>(**u);
    if (v < o.min || v > o.max) {
      // 0 where 0 is not "the default": say what to give instead.
      if (**u == 0) {
        return MakeError("{} 0: give {} or more{}, or leave it out for the default", flag,
                         static_cast<uint64_t>(o.min), o.unit.empty() ? "" : " " + std::string(o.unit));
      }
      return MakeError("{} {}: expected {} to {}{}", flag, **u, static_cast<uint64_t>(o.min),
                       FormatGrouped(static_cast<uint64_t>(o.max)),
                       o.unit.empty() ? "" : " " + std::string(o.unit));
    }
  } else if (auto* d = std::get_if<double*>(&o.target)) {
    const double v = **d;
    if (!std::isfinite(v) || v < o.min || v > o.max) {
      return MakeError("{} {}: expected a number from {} to {}", flag, v, o.min, o.max);
    }
  } else if (auto* s = std::get_if<std::string*>(&o.target)) {
    return CheckText(o, **s);
  } else if (auto* list = std::get_if<std::vector<std::string>*>(&o.target)) {
    for (const std::string& item : **list) MEMFIT_RETURN_IF_ERROR(CheckText(o, item));
  }
  return Ok{};
}

std::string_view TypeName(const Option& o) {
  if (o.kind == ValueKind::kSize) return "size";
  if (o.kind == ValueKind::kGpu) return std::holds_alternative<std::string*>(o.target) ? "gpu" : "gpus";
  if (std::holds_alternative<uint64_t*>(o.target)) return "count";
  if (std::holds_alternative<double*>(o.target)) return "number";
  if (std::holds_alternative<std::string*>(o.target)) return o.choices.empty() ? "text" : "choice";
  if (std::holds_alternative<bool*>(o.target)) return "flag";
  return "list";
}

std::vector<std::string> OptionNames(const std::vector<Option>& options) {
  std::vector<std::string> names;
  for (const Option& o : options) {
    for (std::string_view n : o.names) names.emplace_back(n);
  }
  return names;
}

}  // namespace memfit::api
