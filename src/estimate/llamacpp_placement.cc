// Layer and tensor placement for llama.cpp (src/llama-model.cpp load_tensors):
//   current: i_gpu_start = max(n_layer + 1 - ngl, 0): the output layer goes first, then blocks
//            from the last one down;
//   legacy:  i_gpu_start = max(n_layer - ngl, 0), act_gpu_layers = min(ngl, n_layer + 1): the
//            output layer is offloaded only when ngl > n_layer.
// An offloaded layer il goes to GPU upper_bound(splits, (il - i_gpu_start) / act_gpu_layers),
// splits being the cumulative, normalised -ts (default: free memory per device). The input layer
// (token_embd) always stays on the host.

#include <algorithm>

#include "estimate/llamacpp_internal.h"
#include "memfit/gguf_model.h"

namespace memfit::llamacpp {

Placement PlaceLayers(uint64_t n_layer, const LlamaCppOptions& o, uint32_t num_gpus) {
  Placement p;
  p.layer_device.assign(n_layer + 1, -1);
  const int64_t all = static_cast<int64_t>(n_layer) + 1;
  int64_t ngl = o.gpu_layers < 0 ? all : std::min(o.gpu_layers, all);
  if (num_gpus == 0) ngl = 0;
  int64_t start = 0, act = 0;
  if (o.ngl_semantics == NglSemantics::kCurrent) {
    start = std::max<int64_t>(all - ngl, 0);
    act = all - start;
  } else {
    start = std::max<int64_t>(static_cast<int64_t>(n_layer) - ngl, 0);
    act = std::min(ngl, all);
  }
  std::vector<double> split;
  if (!o.tensor_split.empty()) split = o.tensor_split;
  else if (!o.gpu_free_bytes.empty()) split.assign(o.gpu_free_bytes.begin(), o.gpu_free_bytes.end());
  split.resize(num_gpus, split.empty() ? 1.0 : 0.0);
  double sum = 0;
  for (double& s : split) {
    sum += s;
    s = sum;
  }
  if (sum <= 0) {
    for (size_t i = 0; i < split.size(); ++i) split[i] = static_cast<double>(i + 1);
    sum = static_cast<double>(split.size());
  }
  for (double& s : split) s /= sum;
  for (int64_t il = 0; il < all; ++il) {
    if (il < start || il - start >= act) continue;
    float frac = static_cast<float>(il - start) / static_cast<float>(act);  // llama.cpp uses float
    auto it = std::upper_bound(split.begin(), split.end(), frac);
    int dev = static_cast<int>(std::min<size_t>(it - split.begin(), num_gpus - 1));
    p.layer_device[il] = dev;
    ++p.offloaded;
  }
  p.output_device = p.layer_device[n_layer];
  return p;
}

int TensorDevice(const Tensor& t, const Placement& p, const LlamaCppOptions& o) {
  int64_t il = GgufLayerOf(t.name);
  if (il >= 0) {
    if (static_cast<uint64_t>(il) < o.n_cpu_moe && t.name.find("_exps") != std::string::npos) return -1;
    return static_cast<size_t>(il) < p.layer_device.size() ? p.layer_device[il] : -1;
  }
  // Input layer: token embeddings and friends (llama.cpp LLM_TENSOR_LAYER_INPUT).
  if (t.name.starts_with("token_embd") || t.name.starts_with("position_embd") ||
      t.name.starts_with("token_types")) {
    return -1;
  }
  return p.output_device;  // output, output_norm, cls*, rope_freqs, ...
}

CheckedU64 CudaAllocBytes(const Tensor& t) {
  CheckedU64 bytes = t.bytes;
  if (t.dtype == Dtype::kBlockQuantized && !t.shape.empty()) {
    const GgmlTypeInfo* type = FindGgmlTypeByName(t.dtype_label);
    uint64_t ne0 = t.shape.back();
    if (type && ne0 % 512 != 0) {
      auto pad = GgmlRowBytes(*type, 512 - ne0 % 512);
      if (pad) bytes += *pad;
    }
  }
  bytes += 127;
  if (bytes.overflowed()) return bytes;
  return bytes.value() / 128 * 128;
}

}  // namespace memfit::llamacpp
