// Qwen3-Next (qwen3_next, Qwen3NextForCausalLM): the hybrid text model of qwen_hybrid.h under
// "model." (gated delta-net layers with fused in_proj_qkvz/in_proj_ba, every
// full_attention_interval-th layer gated full attention, routed experts stored per expert with a
// gated shared expert), lm_head, and one multi-token-prediction layer (mtp.*) that the checkpoint
// stores and transformers does not load. Sources: transformers/models/qwen3_next/
// modular_qwen3_next.py, vLLM qwen3_next_mtp.py (num_nextn_predict_layers, default 1).

#include "model/arch/decoder_kit.h"
#include "model/arch/families.h"
#include "model/arch/qwen_hybrid.h"

namespace memfit::arch {

Result<Model> BuildQwen3Next(const HfConfig& c, const BuildOptions& o) {
  ModelBuilder b(c);
  Model& m = b.model();
  Quantization q = ReadQuantization(b, c, o);
  const QwenHybridSpec spec{.prefix = "model", .default_mtp_layers = 1};
  const uint64_t mtp = EmitQwenHybridText(b, c, q, spec);
  TaskHead(b, c, o, "model.embed_tokens");
  EmitQwenMtp(b, c, q, spec, mtp);
  NoteQuantization(b, q);
  m.no_split_patterns = {"model.layers.*"};
  m.base_model_prefix = "model.";
  return b.Finish();
}

}  // namespace memfit::arch
