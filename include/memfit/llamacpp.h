#pragma once
// What llama.cpp allocates for a GGUF model: per device (each GPU and the host) the model buffer,
// KV cache (and recurrent state), compute buffer, output buffer and CUDA context, following
// llama.cpp's placement rules (src/llama-model.cpp load_tensors, src/llama-context.cpp,
// src/llama-kv-cache*.cpp). Pure functions over Model; formulas and sources in docs/estimates.md
// ("GGUF / llama.cpp"). The KV cache is exact; the compute buffer is a model with a documented
// error.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "memfit/gguf.h"
#include "memfit/model.h"
#include "memfit/result.h"

namespace memfit {

enum class FlashAttn : uint8_t { kAuto, kOn, kOff };
// -ngl semantics: kCurrent (llama.cpp 2026: the output layer is offloaded first, then the last
// ngl-1 blocks); kLegacy (until early 2026: the last ngl blocks, the output layer only when
// ngl > block_count).
enum class NglSemantics : uint8_t { kCurrent, kLegacy };

inline constexpr uint64_t kMiB = 1ull << 20;
// llama.cpp's limits, enforced by EstimateLlamaCpp: LLAMA_MAX_SEQ (src/llama-cparams.h) and
// GGML_CUDA_MAX_DEVICES (ggml-cuda). Context and batch sizes are 32-bit counts there too.
inline constexpr uint32_t kLlamaMaxSequences = 256;
inline constexpr size_t kLlamaMaxGpus = 16;

// llama.cpp's options, with its defaults (common/common.h, common/arg.cpp).
struct LlamaCppOptions {
  uint64_t context_tokens = 0;       // -c; 0: the model's training context (context_length)
  uint64_t batch_tokens = 2048;      // -b (n_batch)
  uint64_t ubatch_tokens = 512;      // -ub (n_ubatch)
  uint32_t parallel = 1;             // -np (n_seq_max)
  bool kv_unified = false;           // --kv-unified (llama-server turns it on for -np auto)
  int64_t gpu_layers = -1;           // -ngl; -1: all (every block and the output layer)
  NglSemantics ngl_semantics = NglSemantics::kCurrent;
  uint64_t n_cpu_moe = 0;            // --n-cpu-moe N: experts of the first N layers stay on the CPU
  uint32_t num_gpus = 0;             // devices; 0 = CPU only
  std::vector<double> tensor_split{};      // -ts; empty: proportional to gpu_free_bytes, else equal
  std::vector<uint64_t> gpu_free_bytes{};  // free memory per GPU (llama.cpp's default split)
  std::string cache_type_k = "f16";  // -ctk
  std::string cache_type_v = "f16";  // -ctv
  FlashAttn flash_attn = FlashAttn::kAuto;  // -fa
  bool no_kv_offload = false;        // -nkvo
  bool mmap = true;                  // --mmap / --no-mmap
  bool swa_full = false;             // --swa-full
  bool embeddings = false;           // --embeddings: output buffer also holds n_embd floats
  bool op_offload = true;            // --no-op-offload turns it off
  // Older llama.cpp (before output-only reserves) sized logits for the whole ubatch.
  bool reserve_logits_for_ubatch = false;
  uint64_t cuda_context_bytes = 250 * kMiB;  // per GPU: driver/runtime context (gguf-parser-go's 250 MiB)
};

struct LlamaCppDevice {
  std::string name;               // "CUDA0", ..., "Host"
  bool is_host = false;
  uint64_t model_bytes = 0;       // weights (GPU: CUDA allocation sizes with row padding)
  uint64_t kv_bytes = 0;          // K + V cache of the layers placed here
  uint64_t rs_bytes = 0;          // recurrent state (Mamba/RWKV/DeltaNet layers)
  uint64_t compute_bytes = 0;     // compute buffer (model, see docs/estimates.md)
  uint64_t output_bytes = 0;      // logits/embeddings buffer (host, pinned)
  uint64_t context_bytes = 0;     // CUDA context (GPUs only)
  uint32_t layers = 0;            // repeating layers whose weights are here
  bool output_layer = false;
  uint64_t total() const {
    return model_bytes + kv_bytes + rs_bytes + compute_bytes + output_bytes + context_bytes;
  }
};

struct LlamaCppEstimate {
  uint64_t n_ctx = 0;             // after padding to 256
  uint64_t n_ctx_seq = 0;
  uint32_t n_seq = 1;
  uint64_t n_ubatch = 0;          // tokens per micro-batch: min(n_ctx, ubatch, batch)
  bool flash_attn = false;
  uint64_t kv_cells_full = 0;     // cells of the full-attention cache (all streams)
  uint64_t kv_cells_swa = 0;      // cells of the sliding-window cache (0: none)
  uint64_t kv_k_bytes = 0;
  uint64_t kv_v_bytes = 0;
  uint64_t rs_bytes = 0;
  uint32_t offloaded_layers = 0;  // of block_count + 1 (the output layer counts as one)
  uint32_t total_layers = 0;
  uint64_t model_file_tensor_bytes = 0;
  std::vector<LlamaCppDevice> devices;  // GPUs in order, then the host
  std::vector<std::string> assumptions;
  std::vector<std::string> notes;
  const LlamaCppDevice& host() const { return devices.back(); }
};

Result<LlamaCppEstimate> EstimateLlamaCpp(const Model& model, const LlamaCppOptions& options);

// ---- fitting (like llama.cpp --fit) ---------------------------------------------------------

struct LlamaCppFitOptions {
  LlamaCppOptions base{};               // settings the user fixed (context, cache types, ...)
  bool context_fixed = false;           // the user gave -c: never change it
  bool gpu_layers_fixed = false;        // the user gave -ngl
  std::vector<uint64_t> gpu_bytes;      // memory per GPU (--gpu)
  uint64_t host_bytes = 0;              // RAM (--ram); 0: not checked (llama.cpp does not either)
  std::vector<uint64_t> margin_bytes = {1024 * kMiB};  // -fitt: per GPU, one value for all
  uint64_t min_context_tokens = 4096;   // -fitc
};

struct LlamaCppFitPlan {
  bool fits = false;
  LlamaCppOptions options;              // the chosen settings
  LlamaCppEstimate estimate;
  std::vector<std::string> arguments;   // llama.cpp flags that realise the plan
  std::vector<std::string> steps;       // what the search did
};

Result<LlamaCppFitPlan> FitLlamaCpp(const Model& model, const LlamaCppFitOptions& options);

// The llama.cpp flags for `options` ("-c 8192 -ngl 33 -fa on ...").
std::vector<std::string> LlamaCppArguments(const Model& model, const LlamaCppOptions& options);

}  // namespace memfit
