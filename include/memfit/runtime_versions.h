#pragma once
// The library versions an estimate assumes. Several allocations changed between torch and
// transformers releases; each such fact is a function of these versions below and names the
// source line it comes from. Defaults: the current releases (torch 2.5, transformers 4.50).
// docs/estimates.md, "Library versions".

#include <compare>
#include <cstdint>
#include <string>
#include <string_view>

#include "memfit/result.h"

namespace memfit {

struct LibraryVersion {
  uint32_t major = 0;
  uint32_t minor = 0;
  auto operator<=>(const LibraryVersion&) const = default;
};

struct RuntimeVersions {
  LibraryVersion torch{2, 5};
  LibraryVersion transformers{4, 50};
};

// "2.5", "1.13.0a0", "4.48.3": major.minor, the rest ignored. Errors name `flag`.
Result<LibraryVersion> ParseLibraryVersion(std::string_view text, std::string_view flag);
std::string LibraryVersionName(LibraryVersion v);  // "1.13"
// "library versions: torch 2.5, transformers 4.50 (--torch-version, --transformers-version)"
std::string RuntimeVersionsAssumption(const RuntimeVersions& v);

// torch AdamW(foreach=None) picks the multi-tensor path for CUDA parameters from 2.0
// (torch/optim/optimizer.py _default_to_fused_or_foreach); 1.13 sets foreach = False
// (torch/optim/adamw.py:207-209).
bool ForeachAdamwByDefault(const RuntimeVersions& v);
// State-sized fp32 temporaries of the multi-tensor AdamW step: torch 1.13
// `exp_avg_sq_sqrt = torch._foreach_sqrt(exp_avg_sqs)` then `denom =
// torch._foreach_add(exp_avg_sq_sqrt, eps)` (adamw.py:418-420, not in place): two; torch 2.x
// divides and adds eps in place (`torch._foreach_add_`): one. Measured: FINDINGS.md 2b.
uint32_t ForeachAdamwStateCopies(const RuntimeVersions& v);
// Optimizer.zero_grad() defaults to set_to_none=True from torch 2.0 (1.13: False, optimizer.py
// `def zero_grad(self, set_to_none: bool = False)`): the gradients are freed between steps.
bool ZeroGradSetsToNoneByDefault(const RuntimeVersions& v);
// transformers < 4.50 ForCausalLMLoss copies the shifted logits (loss_utils.py:39 at v4.48.3,
// `shift_logits = logits[..., :-1, :].contiguous()`, fp32 after the upcast of line 36); 4.50
// pads the labels instead (`nn.functional.pad(labels, (0, 1))`) and shifts nothing.
bool LossCopiesShiftedLogits(const RuntimeVersions& v);

// How transformers runs a Mamba-2 mixer (BambaMixer, Mamba2Mixer, Zamba2MambaMixer,
// NemotronHMamba2Mixer, GraniteMoeHybridMambaLayer, FalconH1Mixer) over a prompt or a training
// sequence: with the mamba_ssm / causal_conv1d kernels (CUDA with those packages installed), or
// `torch_forward`'s naive chunked scan (always on CPU; on CUDA without the packages), whose
// float32 products of chunk x chunk x heads x d_state per chunk dominate the peak
// (docs/estimates.md, "Mamba-2 in transformers without mamba_ssm").
enum class Mamba2Scan : uint8_t { kKernels, kTorch };
std::string_view Mamba2ScanName(Mamba2Scan scan);  // "kernels", "torch"
// "kernels" (also "mamba_ssm", "mamba-ssm") or "torch"; errors name `flag`.
Result<Mamba2Scan> ParseMamba2Scan(std::string_view text, std::string_view flag);

}  // namespace memfit
