// llama.cpp memory per device: placement, model buffers, KV/RS, compute and output buffers.
// See memfit/llamacpp.h and docs/estimates.md ("GGUF / llama.cpp").

#include <algorithm>

#include "estimate/llamacpp_internal.h"
#include "memfit/checked_math.h"
#include "memfit/context_default.h"
#include "memfit/gguf_model.h"

namespace memfit {
namespace {

using llamacpp::Pad;

bool IsAttnWeight(const std::string& n) { return n.find(".attn_") != std::string::npos && n.find("norm") == std::string::npos; }
bool IsFfnWeight(const std::string& n) {
  return n.find(".ffn_") != std::string::npos && n.find("norm") == std::string::npos &&
         n.find("_exps") == std::string::npos && n.find("gate_inp") == std::string::npos;
}

}  // namespace

Result<LlamaCppEstimate> EstimateLlamaCpp(const Model& model, const LlamaCppOptions& o) {
  const Hyperparameters& hp = model.hp;
  if (hp.num_layers == 0 || hp.layers.size() != hp.num_layers) {
    return MakeError("{}: no layer structure (is this a GGUF language model?)", model.name);
  }
  if (o.ubatch_tokens == 0 || o.batch_tokens == 0) return MakeError("batch sizes must be positive");
  if (o.parallel == 0) return MakeError("--parallel must be at least 1");
  // llama.cpp's own limits (llama_context_params: 32-bit counts; LLAMA_MAX_SEQ; one CUDA device
  // per GPU, GGML_CUDA_MAX_DEVICES). They also keep every product below within 64 bits or checked.
  if (o.batch_tokens > UINT32_MAX || o.ubatch_tokens > UINT32_MAX) {
    return MakeError("batch sizes must be at most {} (llama.cpp's 32-bit n_batch/n_ubatch)", UINT32_MAX);
  }
  if (o.parallel > kLlamaMaxSequences) {
    return MakeError("--parallel {}: llama.cpp allows at most {} sequences", o.parallel, kLlamaMaxSequences);
  }
  const size_t gpus = std::max<size_t>(o.num_gpus, std::max(o.tensor_split.size(), o.gpu_free_bytes.size()));
  if (gpus > kLlamaMaxGpus) return MakeError("{} GPUs: llama.cpp's CUDA backend drives at most {}", gpus, kLlamaMaxGpus);
  LlamaCppEstimate est;
  const uint32_t G = static_cast<uint32_t>(gpus);
  if (!o.context_tokens && !hp.max_position_embeddings) {
    return MakeError("{}: no context length in the file: give --context", model.name);
  }
  const ContextChoice context =
      ChooseContext(o.context_tokens, hp.max_position_embeddings, ContextUse::kLlamaCpp);
  const uint64_t n_ctx = context.tokens;
  if (n_ctx > UINT32_MAX) {
    return MakeError("context of {} tokens: llama.cpp's n_ctx is a 32-bit count (at most {})", n_ctx, UINT32_MAX);
  }
  if (!context.assumption.empty()) est.assumptions.push_back(context.assumption);
  est.n_seq = o.parallel;
  // Flash attention: auto resolves to on where the backend supports it (CUDA and CPU do for the
  // head sizes of current models); memfit assumes it does.
  est.flash_attn = o.flash_attn != FlashAttn::kOff;
  if (o.flash_attn == FlashAttn::kAuto) {
    est.assumptions.push_back("flash attention auto: assumed to resolve to on (supported by the device)");
  }
  const uint64_t ubatch = std::min(o.ubatch_tokens, o.batch_tokens);
  MEMFIT_ASSIGN_OR_RETURN(llamacpp::KvLayout kv,
                          llamacpp::ComputeKv(model, o, o.parallel, n_ctx, ubatch, est.flash_attn));
  est.n_ctx = kv.n_ctx;
  est.n_ctx_seq = kv.n_ctx_seq;
  est.n_ubatch = std::min(kv.n_ctx, ubatch);
  est.kv_cells_full = kv.cells_full;
  est.kv_cells_swa = kv.cells_swa;

  llamacpp::Placement place = llamacpp::PlaceLayers(hp.num_layers, o, G);
  est.offloaded_layers = place.offloaded;
  est.total_layers = static_cast<uint32_t>(hp.num_layers + 1);

  est.devices.resize(G + 1);
  for (uint32_t g = 0; g < G; ++g) {
    est.devices[g].name = fmt::format("CUDA{}", g);
    est.devices[g].context_bytes = o.cuda_context_bytes;
  }
  LlamaCppDevice& host = est.devices[G];
  host.name = "Host";
  host.is_host = true;
  auto dev_of = [&](int d) -> LlamaCppDevice& { return d < 0 ? est.devices[G] : est.devices[d]; };

  // Weights. Sums are checked: a Model within CheckModelBounds cannot overflow them, but the
  // estimator does not rely on its caller for that.
  std::vector<CheckedU64> model_bytes(G + 1);
  CheckedU64 file_bytes;
  auto model_bytes_of = [&](int d) -> CheckedU64& { return model_bytes[d < 0 ? G : d]; };
  std::vector<uint64_t> host_layer_peak(hp.num_layers, 0), attn_sum(hp.num_layers, 0), ffn_sum(hp.num_layers, 0);
  uint64_t host_output_weight = 0;
  const Tensor* token_embd = nullptr;
  for (const auto& t : model.tensors) {
    if (t.name == "token_embd.weight") token_embd = &t;
    int d = llamacpp::TensorDevice(t, place, o);
    model_bytes_of(d) += d < 0 ? t.bytes : llamacpp::CudaAllocBytes(t);
    file_bytes += t.bytes;
    int64_t il = GgufLayerOf(t.name);
    if (d < 0 && il >= 0 && static_cast<uint64_t>(il) < hp.num_layers) {
      if (IsAttnWeight(t.name)) attn_sum[il] += t.bytes;
      else if (IsFfnWeight(t.name)) ffn_sum[il] += t.bytes;
      else if (t.name.find("_exps") != std::string::npos) host_layer_peak[il] = std::max(host_layer_peak[il], t.bytes);
    }
    if (d < 0 && il < 0 && t.name == "output.weight") host_output_weight = t.bytes;
  }
  for (uint64_t il = 0; il < hp.num_layers; ++il) {
    host_layer_peak[il] = std::max({host_layer_peak[il], attn_sum[il], ffn_sum[il]});
  }
  if (hp.tie_word_embeddings && token_embd) {
    if (place.output_device >= 0) {
      // llama.cpp duplicates token_embd as the output matrix on the output device.
      model_bytes[place.output_device] += llamacpp::CudaAllocBytes(*token_embd);
      est.notes.push_back("tied embeddings: token_embd is duplicated on the output device");
    } else {
      host_output_weight = token_embd->bytes;
    }
  }
  if (file_bytes.overflowed()) return MakeError("{}: tensor bytes overflow 64 bits", model.name);
  est.model_file_tensor_bytes = file_bytes.value();
  for (uint32_t d = 0; d <= G; ++d) {
    if (model_bytes[d].overflowed()) return MakeError("{}: model buffer of {} overflows 64 bits", model.name, est.devices[d].name);
    est.devices[d].model_bytes = model_bytes[d].value();
  }
  for (uint64_t il = 0; il < hp.num_layers; ++il) {
    if (place.layer_device[il] >= 0) est.devices[place.layer_device[il]].layers++;
    else host.layers++;
  }
  dev_of(place.output_device).output_layer = true;

  // KV cache and recurrent state: on the device of their layer, or the host with -nkvo.
  for (uint64_t il = 0; il < hp.num_layers; ++il) {
    LlamaCppDevice& d = o.no_kv_offload ? host : dev_of(place.layer_device[il]);
    d.kv_bytes += kv.k_bytes[il] + kv.v_bytes[il];
    d.rs_bytes += kv.rs_bytes[il];
    est.kv_k_bytes += kv.k_bytes[il];
    est.kv_v_bytes += kv.v_bytes[il];
    est.rs_bytes += kv.rs_bytes[il];
  }

  // Compute buffers.
  llamacpp::ComputeInputs ci{.model = &model, .placement = &place, .kv = &kv, .num_gpus = G,
                             .n_ubatch = est.n_ubatch, .n_seq = o.parallel, .flash_attn = est.flash_attn,
                             .options = &o, .host_layer_weight_peak = {}, .host_output_weight = 0};
  for (uint64_t il = 0; il < hp.num_layers; ++il) {
    if (place.layer_device[il] < 0 || o.n_cpu_moe > il) ci.host_layer_weight_peak.push_back(host_layer_peak[il]);
  }
  ci.host_output_weight = host_output_weight;
  auto cb = llamacpp::ComputeBuffers(ci);
  if (!cb) return Wrap(cb.error(), model.name);
  for (uint32_t g = 0; g < G; ++g) est.devices[g].compute_bytes = cb->gpu[g];
  host.compute_bytes = cb->host;

  // Output buffer: logits (and embeddings) for n_seq outputs, in pinned host memory.
  const CheckedU64 output = CheckedU64(4) * (CheckedU64(hp.vocab_size) + (o.embeddings ? hp.hidden_size : 0)) * o.parallel;
  if (output.overflowed()) return MakeError("{}: output buffer size overflows 64 bits", model.name);
  host.output_bytes = output.value();
  // Each device's total() is a plain sum: check it once here.
  for (const auto& d : est.devices) {
    const CheckedU64 total = CheckedU64(d.model_bytes) + d.kv_bytes + d.rs_bytes + d.compute_bytes +
                             d.output_bytes + d.context_bytes;
    if (total.overflowed()) return MakeError("{}: memory of {} overflows 64 bits", model.name, d.name);
  }

  if (o.mmap) {
    est.notes.push_back("host weights are memory-mapped (CPU_Mapped): page cache the kernel can reclaim");
  }
  if (G > 0 && place.offloaded < est.total_layers && o.op_offload) {
    est.notes.push_back("partial offload: the first GPU's compute buffer also holds host weights staged for "
                        "offloaded matrix multiplications");
  }
  return est;
}

std::vector<std::string> LlamaCppArguments(const Model& model, const LlamaCppOptions& o) {
  std::vector<std::string> a;
  const uint64_t ctx =
      ChooseContext(o.context_tokens, model.hp.max_position_embeddings, ContextUse::kLlamaCpp).tokens;
  a.push_back("-c");
  a.push_back(std::to_string(ctx));
  a.push_back("-ngl");
  a.push_back(o.gpu_layers < 0 ? std::to_string(model.hp.num_layers + 1) : std::to_string(o.gpu_layers));
  if (o.n_cpu_moe) {
    a.push_back("--n-cpu-moe");
    a.push_back(std::to_string(o.n_cpu_moe));
  }
  if (!o.tensor_split.empty() && o.tensor_split.size() > 1) {
    std::string ts;
    for (double v : o.tensor_split) {
      if (!ts.empty()) ts += ',';
      ts += fmt::format("{}", v);
    }
    a.push_back("-ts");
    a.push_back(ts);
  }
  if (o.ubatch_tokens != 512) { a.push_back("-ub"); a.push_back(std::to_string(o.ubatch_tokens)); }
  if (o.batch_tokens != 2048) { a.push_back("-b"); a.push_back(std::to_string(o.batch_tokens)); }
  if (o.parallel != 1) { a.push_back("-np"); a.push_back(std::to_string(o.parallel)); }
  if (o.kv_unified) a.push_back("--kv-unified");
  if (o.cache_type_k != "f16") { a.push_back("-ctk"); a.push_back(o.cache_type_k); }
  if (o.cache_type_v != "f16") { a.push_back("-ctv"); a.push_back(o.cache_type_v); }
  if (o.flash_attn != FlashAttn::kAuto) { a.push_back("-fa"); a.push_back(o.flash_attn == FlashAttn::kOn ? "on" : "off"); }
  if (o.no_kv_offload) a.push_back("-nkvo");
  if (!o.mmap) a.push_back("--no-mmap");
  if (o.swa_full) a.push_back("--swa-full");
  a.push_back("--fit");
  a.push_back("off");
  return a;
}

}  // namespace memfit
