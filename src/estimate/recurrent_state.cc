#include "memfit/recurrent_state.h"

namespace memfit {
namespace {


}  // namespace

RecurrentElements RecurrentStateElements(const RecurrentState& s, uint64_t conv_steps,
                                         uint64_t tp) {
  RecurrentElements e;
  e.conv = CheckedU64(conv_steps) * CeilDiv(s.conv_channels, tp);
  e.recurrent = CheckedU64(CeilDiv(s.heads, tp)) * s.elements_per_head;
  return e;
}

RecurrentState RecurrentStateFromGguf(const Hyperparameters& hp) {
  RecurrentState s;
  if (hp.shortconv_l_cache) {
    s.conv_channels = hp.hidden_size;
    s.conv_kernel = hp.shortconv_l_cache;
    return s;
  }
  CheckedU64 channels = CheckedU64(2) * hp.ssm_group_count * hp.ssm_state_size + hp.ssm_inner_size;
  s.conv_channels = channels.overflowed() ? UINT64_MAX : channels.value();
  s.conv_kernel = hp.ssm_conv_kernel;
  s.heads = hp.ssm_inner_size;
  s.elements_per_head = hp.ssm_state_size;
  return s;
}

}  // namespace memfit
