#pragma once
// The parallel layout that a DeployLayout, InferenceOptions and the inference and fit requests
// each hold in fields of the same names: tp, dp, ep, pp and SGLang's dp_attention.

namespace memfit::plan {

// Copies `from`'s layout into `to`'s, the rest of `to` as it was.
template <typename From, typename To>
void CopyParallelLayout(const From& from, To& to) {
  to.tp = from.tp;
  to.dp = from.dp;
  to.ep = from.ep;
  to.pp = from.pp;
  to.dp_attention = from.dp_attention;
}

}  // namespace memfit::plan
