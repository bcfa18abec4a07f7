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
#include "memfit/checked_math.h"

namespace memfit::llamacpp {
namespace {

// Sizes are CheckedU64: the dimensions come from the file (each < 2^32, see gguf_hparams.h) and the
// options from the user, and products of three or four of them can exceed 64 bits.
using U = CheckedU64;

struct Shape {
  uint64_t E, V, T, n_out;
};

U LayerPeak(const Hyperparameters& hp, const LayerInfo& li, const Shape& s, uint64_t n_kv, bool fa) {
  const U E = s.E, T = s.T;
  U attn = 0;
  if (li.attention != AttentionKind::kNone && !li.recurrent) {
    const U q = U(li.num_heads) * li.head_dim_k, kvk = U(li.num_kv_heads) * li.head_dim_k;
    const U out = U(li.num_heads) * li.head_dim_v;
    attn = fa ? U(4) * T * (U(2) * E + q + U(2) * kvk + out)
              : U(4) * T * (U(2) * E + q + U(2) * kvk) + U(4) * n_kv * T * li.num_heads;
  }
  U ffn = 0;
  if (li.moe) {
    const U fe = hp.moe_intermediate_size;
    ffn = U(4) * T * (U(2) * E + U(2) * hp.num_experts + U(hp.experts_per_token) * Max(U(3) * fe, fe + E));
    if (hp.num_shared_experts) ffn += U(4) * T * 3 * fe * hp.num_shared_experts;
  } else {
    ffn = U(4) * T * (U(2) * E + U(3) * li.intermediate_size);
  }
  U rec = li.recurrent ? U(4) * T * (U(2) * E + U(3) * std::max(hp.ssm_inner_size, s.E)) : U(0);
  return Max(Max(attn, ffn), rec);
}

}  // namespace

Result<ComputeBytes> ComputeBuffers(const ComputeInputs& in) {
  const Model& m = *in.model;
  const Hyperparameters& hp = m.hp;
  const LlamaCppOptions& o = *in.options;
  const Shape s{hp.hidden_size, hp.vocab_size, in.n_ubatch,
                o.reserve_logits_for_ubatch ? in.n_ubatch : in.n_seq};
  const U T = s.T, E = s.E;
  const U Tp = Pad(s.T, 64);  // GGML_KQ_MASK_PAD (T < 2^32: no overflow)
  const uint64_t n_kv_full = in.kv->cells_full / std::max<uint64_t>(in.kv->streams, 1);
  const uint64_t n_kv_swa = in.kv->cells_swa / std::max<uint64_t>(in.kv->streams, 1);
  bool any_full = false;
  for (const auto& li : hp.layers) any_full |= li.attention == AttentionKind::kFull || li.attention == AttentionKind::kMla;
  const U mask_cells = U(any_full ? n_kv_full : 0) + n_kv_swa;
  const U out_peak = U(4) * s.n_out * s.V + U(8) * E * T;

  const auto& dev = in.placement->layer_device;
  const size_t L = hp.layers.size();
  std::vector<U> peak(in.num_gpus, U(0));
  U host_peak = 0;
  bool host_has_layers = false;
  for (size_t il = 0; il < L; ++il) {
    const LayerInfo& li = hp.layers[il];
    uint64_t n_kv = li.attention == AttentionKind::kSliding ? n_kv_swa : n_kv_full;
    U p = LayerPeak(hp, li, s, n_kv, in.flash_attn);
    if (dev[il] < 0) {
      host_peak = Max(host_peak, p);
      host_has_layers = true;
    } else {
      peak[dev[il]] = Max(peak[dev[il]], p);
    }
  }
  if (in.placement->output_device < 0) host_peak = Max(host_peak, out_peak);
  else peak[in.placement->output_device] = Max(peak[in.placement->output_device], out_peak);

  const bool pipeline = in.num_gpus > 1 && in.placement->offloaded == L + 1 && !o.no_kv_offload &&
                        o.n_cpu_moe == 0;
  const U gpu_inputs = (U(4) * E * T + U(in.flash_attn ? 2 : 4) * mask_cells * Tp) * (pipeline ? 4 : 1);
  std::vector<U> gpu(in.num_gpus, U(0));
  for (uint32_t g = 0; g < in.num_gpus; ++g) {
    bool used = peak[g].value() > 0 || peak[g].overflowed();
    if (g == 0 && in.num_gpus > 0 && o.op_offload && s.T >= 32) used = true;  // op offload target
    if (used) gpu[g] = gpu_inputs + peak[g];
  }
  // Partial offload: host weights staged on the first GPU for offloaded matrix multiplications.
  if (in.num_gpus > 0 && o.op_offload && s.T >= 32) {
    uint64_t staged = in.host_output_weight;
    for (size_t il = 0; il < L && il < in.host_layer_weight_peak.size(); ++il) {
      staged = std::max(staged, in.host_layer_weight_peak[il]);
    }
    gpu[0] += staged;
    if (staged > 0 && peak[0].value() == 0 && !peak[0].overflowed()) gpu[0] += Max(host_peak, out_peak);
  }
  U host = U(4) * E * T + U(4) * mask_cells * Tp + U(8) * T;
  if (host_has_layers || in.num_gpus == 0 || in.placement->output_device < 0) host += host_peak;

  ComputeBytes cb;
  if (host.overflowed()) return MakeError("host compute buffer size overflows 64 bits");
  cb.host = host.value();
  for (uint32_t g = 0; g < in.num_gpus; ++g) {
    if (gpu[g].overflowed()) return MakeError("compute buffer size of CUDA{} overflows 64 bits", g);
    cb.gpu.push_back(gpu[g].value());
  }
  return cb;
}

}  // namespace memfit::llamacpp
