// The float32 tensors of transformers' torch-path Mamba-2 scan, read from `torch_forward`'s
// "ssd naive" branch (modeling_bamba.py:801-869 at v4.48.3; the same code in Mamba2Mixer,
// Zamba2MambaMixer, NemotronHMamba2Mixer, GraniteMoeHybridMambaLayer, FalconH1Mixer:
// docs/estimates.md, "Mamba-2 in transformers without mamba_ssm"). Every tensor of the scan is
// float32 whatever the model dtype: hidden_states, B and C are `.float()`-ed first.

#include "estimate/mamba2_scan.h"

#include <algorithm>

#include <fmt/format.h>

#include "memfit/checked_math.h"
#include "estimate/saturating_math.h"
#include "memfit/units.h"

namespace memfit::estimate {
using saturating::Add;
using saturating::Mul;

std::optional<Mamba2ScanShape> Mamba2ScanShapeFor(const Model& model, const LayerInfo& info,
                                                  uint64_t batch, uint64_t seq, uint64_t tp,
                                                  uint64_t default_chunk) {
  const uint64_t n = model.hp.ssm_state_size;
  if (info.mixer != LayerMixer::kMamba2 || info.state.heads == 0 || n == 0 ||
      info.state.elements_per_head % n != 0 || seq == 0) {
    return std::nullopt;
  }
  Mamba2ScanShape s;
  s.batch = batch;
  s.chunk = model.hp.ssm_chunk_size ? model.hp.ssm_chunk_size : default_chunk;
  s.chunks = CeilDiv(seq, s.chunk);
  s.heads = CeilDiv(info.state.heads, std::max<uint64_t>(tp, 1));
  s.head_dim = info.state.elements_per_head / n;
  s.d_state = n;
  return s;
}

Mamba2ScanBytes Mamba2TorchScanBytes(const Mamba2ScanShape& s) {
  const uint64_t b = s.batch, nc = s.chunks, l = s.chunk, h = s.heads, d = s.head_dim,
                 n = s.d_state;
  const uint64_t padded = Mul({nc, l});  // pad_size = (l - T % l) % l
  Mamba2ScanBytes r;
  // `G_intermediate = C[:, :, :, None, :, :] * B[:, :, None, :, :, :]`: (b, c, l, s, h, n), a
  // named local, alive until torch_forward returns.
  r.g_intermediate = Mul({b, nc, l, l, h, n, 4});
  // One more 6-D product at a time next to it: `M[..., None] * hidden_states[:, :, None]`
  // (b, c, l, s, h, d); `B_decay[..., None, :] * hidden_states[..., None]` (b, c, l, h, d, n);
  // the inter-chunk recurrence `decay_chunk[..., None, None] * states[:, :, None, ...]`
  // (b, c+1, c+1, h, d, n); `C_times_states = C[..., None, :] * states[:, :, None, ...]`
  // (b, c, l, h, d, n, a named local).
  r.largest_other = std::max({Mul({b, nc, l, l, h, d, 4}), Mul({b, padded, h, d, n, 4}),
                              Mul({b, nc + 1, nc + 1, h, d, n, 4})});
  // The chunk-sized locals alive with them: L = exp(segment_sum(A)), G, M_intermediate and M
  // (b, c, l, l, h each); B and C repeated to every head and chunked, B_decay (b, c, l, h, n
  // each); hidden_states x dt chunked, D_residual, Y_diag (b, c, l, h, d each); the states before
  // and after the inter-chunk recurrence (b, c+1, h, d, n each).
  r.locals = Add({Mul({4, b, nc, l, l, h, 4}), Mul({3, b, padded, h, n, 4}),
                  Mul({3, b, padded, h, d, 4}), Mul({2, b, nc + 1, h, d, n, 4})});
  r.forward_peak = Add({r.g_intermediate, r.largest_other, r.locals});
  // Saved for backward (each product saves both factors, each exp its output; the sums save
  // nothing): hidden_states before and after x dt, its padded copy in D_residual's product, the
  // chunked values and C_times_states.sum(-1) (4 x b, c, l, h, d); B and C chunked and B_decay
  // (3 x b, c, l, h, n); L, G and M (3 x b, c, l, l, h); the states before and after the
  // recurrence (2 x b, c+1, h, d, n). None of the 6-D products is kept.
  r.saved = Add({Mul({4, b, padded, h, d, 4}), Mul({3, b, padded, h, n, 4}),
                 Mul({3, b, nc, l, l, h, 4}), Mul({2, b, nc + 1, h, d, n, 4})});
  // Backward of G_intermediate's product (MulBackward0): grad x B and grad x C, each a full
  // (b, c, l, s, h, n) float32 product before autograd sums it to its factor's shape, both
  // returned together; the gradient of G (b, c, l, s, h) they expand is alive with them.
  r.backward_peak = Add({Mul({2, r.g_intermediate}), Mul({b, nc, l, l, h, 4})});
  return r;
}

std::string Mamba2ScanAssumption(Mamba2Scan scan, uint64_t chunk, uint64_t torch_extra_bytes) {
  if (scan == Mamba2Scan::kTorch) {
    return fmt::format("transformers runs the Mamba-2 scan on its torch path (--mamba-scan torch: "
                       "CPU, or no mamba_ssm): float32 products per chunk of {} tokens, {} more "
                       "than with the mamba_ssm kernels", chunk ? chunk : 256,
                       FormatBytes(torch_extra_bytes));
  }
  return fmt::format("transformers runs the Mamba-2 scan with the mamba_ssm kernels (--mamba-scan "
                     "kernels): without them (CPU, or mamba_ssm not installed) the torch path "
                     "needs {} more", FormatBytes(torch_extra_bytes));
}

}  // namespace memfit::estimate
