// Compute buffer model for llama.cpp (see docs/estimates.md, "compute buffer model", for the
// derivation and its measured error). ggml-alloc reuses memory between layers, so a device's
// buffer is its graph inputs plus the peak of one layer (or the output head), in F32 activations
// of T = n_ubatch tokens:
//   inputs (GPU)  embeddings copy 4*E*T + KQ mask per cache kind: FA 2*n_kv*pad64(T) (F16 cast),
//                 no FA 4*n_kv*pad64(T)
//   inputs (host) 4*E*T (get_rows output) + F32 mask 4*n_kv*pad64(T) + 8*T (tokens, positions)
//   attention     FA: 4T(2E + Hq*Dk + 2*Hkv*Dk + Hq*Dv); no FA: 4T(2E + Hq*Dk + 2*Hkv*Dk)
//                 + 4*n_kv*T*Hq (KQ; soft_max runs in place)
//   dense FFN     4T(2E + 3F)
//   MoE FFN       4T(2E + 2*n_expert + n_used*max(3*F_exp, F_exp + E)) + shared 4T*3*F_shexp
//   recurrent     4T(2E + 3*d_inner)
//   output head   4*n_out*V + 8*E*T (n_out = n_seq; T in older llama.cpp)
// Partial offload: with op offload, matrix multiplications of host-resident layers run on the
// first GPU, whose compute buffer then also holds a copy of the largest weight group used at once
// (one layer's attention or FFN weights, one expert tensor, or the output matrix).
// Pipeline parallelism (several GPUs, everything offloaded): GPU inputs x4 (GGML_SCHED_MAX_COPIES).

#include <algorithm>

#include "estimate/llamacpp_internal.h"

namespace memfit::llamacpp {
namespace {

struct Shape {
  uint64_t E, V, T, n_out;
};

uint64_t LayerPeak(const Hyperparameters& hp, const LayerInfo& li, const Shape& s, uint64_t n_kv, bool fa) {
  const uint64_t E = s.E, T = s.T;
  uint64_t attn = 0;
  if (li.attention != AttentionKind::kNone && !li.recurrent) {
    const uint64_t q = li.num_heads * li.head_dim_k, kvk = li.num_kv_heads * li.head_dim_k;
    const uint64_t out = li.num_heads * li.head_dim_v;
    attn = fa ? 4 * T * (2 * E + q + 2 * kvk + out) : 4 * T * (2 * E + q + 2 * kvk) + 4 * n_kv * T * li.num_heads;
  }
  uint64_t ffn = 0;
  if (li.moe) {
    const uint64_t fe = hp.moe_intermediate_size;
    ffn = 4 * T * (2 * E + 2 * hp.num_experts + hp.experts_per_token * std::max(3 * fe, fe + E));
    if (hp.num_shared_experts) ffn += 4 * T * 3 * fe * hp.num_shared_experts;
  } else {
    ffn = 4 * T * (2 * E + 3 * li.intermediate_size);
  }
  uint64_t rec = li.recurrent ? 4 * T * (2 * E + 3 * std::max(hp.ssm_inner_size, E)) : 0;
  return std::max({attn, ffn, rec});
}

}  // namespace

ComputeBytes ComputeBuffers(const ComputeInputs& in) {
  const Model& m = *in.model;
  const Hyperparameters& hp = m.hp;
  const LlamaCppOptions& o = *in.options;
  const Shape s{hp.hidden_size, hp.vocab_size, in.n_ubatch,
                o.reserve_logits_for_ubatch ? in.n_ubatch : in.n_seq};
  const uint64_t T = s.T, E = s.E;
  const uint64_t Tp = Pad(T, 64);  // GGML_KQ_MASK_PAD
  const uint64_t n_kv_full = in.kv->cells_full / std::max<uint64_t>(in.kv->streams, 1);
  const uint64_t n_kv_swa = in.kv->cells_swa / std::max<uint64_t>(in.kv->streams, 1);
  bool any_full = false;
  for (const auto& li : hp.layers) any_full |= li.attention == AttentionKind::kFull || li.attention == AttentionKind::kMla;
  uint64_t mask_cells = (any_full ? n_kv_full : 0) + n_kv_swa;
  const uint64_t out_peak = 4 * s.n_out * s.V + 8 * E * T;

  ComputeBytes cb;
  cb.gpu.assign(in.num_gpus, 0);
  const auto& dev = in.placement->layer_device;
  const size_t L = hp.layers.size();
  std::vector<uint64_t> peak(in.num_gpus, 0);
  uint64_t host_peak = 0;
  bool host_has_layers = false;
  for (size_t il = 0; il < L; ++il) {
    const LayerInfo& li = hp.layers[il];
    uint64_t n_kv = li.attention == AttentionKind::kSliding ? n_kv_swa : n_kv_full;
    uint64_t p = LayerPeak(hp, li, s, n_kv, in.flash_attn);
    if (dev[il] < 0) {
      host_peak = std::max(host_peak, p);
      host_has_layers = true;
    } else {
      peak[dev[il]] = std::max(peak[dev[il]], p);
    }
  }
  if (in.placement->output_device < 0) host_peak = std::max(host_peak, out_peak);
  else peak[in.placement->output_device] = std::max(peak[in.placement->output_device], out_peak);

  const bool pipeline = in.num_gpus > 1 && in.placement->offloaded == L + 1 && !o.no_kv_offload &&
                        o.n_cpu_moe == 0;
  const uint64_t gpu_inputs = (4 * E * T + (in.flash_attn ? 2 : 4) * mask_cells * Tp) * (pipeline ? 4 : 1);
  for (uint32_t g = 0; g < in.num_gpus; ++g) {
    bool used = peak[g] > 0;
    if (g == 0 && in.num_gpus > 0 && o.op_offload && T >= 32) used = true;  // op offload target
    if (used) cb.gpu[g] = gpu_inputs + peak[g];
  }
  // Partial offload: host weights staged on the first GPU for offloaded matrix multiplications.
  if (in.num_gpus > 0 && o.op_offload && T >= 32) {
    uint64_t staged = in.host_output_weight;
    for (size_t il = 0; il < L && il < in.host_layer_weight_peak.size(); ++il) {
      staged = std::max(staged, in.host_layer_weight_peak[il]);
    }
    cb.gpu[0] += staged;
    if (staged > 0 && peak[0] == 0) cb.gpu[0] += std::max(host_peak, out_peak);
  }
  cb.host = 4 * E * T + 4 * mask_cells * Tp + 8 * T;
  if (host_has_layers || in.num_gpus == 0 || in.placement->output_device < 0) cb.host += host_peak;
  return cb;
}

}  // namespace memfit::llamacpp
