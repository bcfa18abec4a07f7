// The tensors of transformers' torch-path Mamba-1 scan, read from `slow_forward` of
// JambaMambaMixer (modeling_jamba.py at v4.48.3; MambaMixer in modeling_mamba.py and
// FalconMambaMixer in modeling_falcon_mamba.py run the same steps): docs/estimates.md, "Mamba-1
// in transformers without mamba_ssm".

#include "estimate/mamba1_scan.h"

#include <algorithm>

#include <fmt/format.h>

#include "memfit/checked_math.h"
#include "estimate/saturating_math.h"
#include "memfit/units.h"

namespace memfit::estimate {
using saturating::Add;
using saturating::Mul;

std::optional<Mamba1ScanShape> Mamba1ScanShapeFor(const Model& model, const LayerInfo& info,
                                                  uint64_t batch, uint64_t seq, uint64_t tp) {
  // read_hparams.cc: a Mamba-1 layer's conv channels are d_inner and its elements per state row
  // d_state.
  const uint64_t d = info.state.conv_channels;
  const uint64_t n = info.state.elements_per_head;
  if (info.mixer != LayerMixer::kMamba || d == 0 || n == 0 || seq == 0) return std::nullopt;
  Mamba1ScanShape s;
  s.batch = batch;
  s.seq = seq;
  s.channels = CeilDiv(d, std::max<uint64_t>(tp, 1));
  s.d_state = n;
  s.dt_rank = CeilDiv(model.hp.hidden_size, 16);
  // JambaMambaMixer: dt_layernorm, b_layernorm, c_layernorm; FalconMambaMixer: rms_forward on
  // B, C and the time step. MambaMixer keeps them as views of x_proj's output.
  s.normed_ssm_parameters = model.model_type == "jamba" || model.model_type == "falcon_mamba";
  return s;
}

Mamba1ScanBytes Mamba1TorchScanBytes(const Mamba1ScanShape& s, uint64_t c) {
  const uint64_t b = s.batch, t = s.seq, d = s.channels, n = s.d_state;
  Mamba1ScanBytes r;
  // 3.b Discretization, each (b, d, T, n) float32 and a named local until slow_forward returns:
  // `discrete_A = torch.exp(A[None, :, None, :] * discrete_time_step[:, :, :, None])` (A is
  // `-torch.exp(self.A_log.float())`), `discrete_B = discrete_time_step[:, :, :, None] *
  // B[:, None, :, :].float()`, `deltaB_u = discrete_B * hidden_states[:, :, :, None].float()`.
  r.float32_products = Mul({3, b, d, t, n, 4});
  // At `scan_output = (scan_output * self.act(gate))`, in the model dtype, (b, d, T) each:
  // discrete_time_step (softplus of dt_proj's output), the list of per-step outputs the loop
  // appended (`scan_outputs`, views of T matmul results), scan_output (after `+ hidden_states *
  // D`), act(gate) and the product: 5 x b d T. The `torch.stack` copy and `hidden_states * D`
  // were alive together one step earlier, with the list: 5 as well. Plus x_proj's output
  // (r + 2n per token: dt, B and C are views of it) and, where they are normed, their copies.
  const uint64_t ssm_params = Mul({b, t, s.dt_rank + 2 * n, c});
  r.locals = Add({Mul({5, b, d, t, c}), ssm_params, s.normed_ssm_parameters ? ssm_params : 0});
  r.forward_peak = Add({r.float32_products, r.locals});
  return r;
}

std::string Mamba1ScanAssumption(Mamba2Scan scan, uint64_t torch_extra_bytes) {
  if (scan == Mamba2Scan::kTorch) {
    return fmt::format("transformers runs the Mamba scan on its torch path (--mamba-scan torch: "
                       "CPU, or no mamba_ssm): slow_forward's float32 (batch, d_inner, tokens, "
                       "d_state) products, {} more than with the mamba_ssm kernels",
                       FormatBytes(torch_extra_bytes));
  }
  return fmt::format("transformers runs the Mamba scan with the mamba_ssm kernels (--mamba-scan "
                     "kernels): without them (CPU, or mamba_ssm not installed) the torch path "
                     "needs {} more", FormatBytes(torch_extra_bytes));
}

}  // namespace memfit::estimate
