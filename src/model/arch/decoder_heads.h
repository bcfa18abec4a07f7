#pragma once
// Config readers shared by the classic decoders (classic_decoder.h) and dbrx.

#include "model/arch/builder_kit.h"

namespace memfit::arch {

// MosaicML-style hyperparameters (dbrx): d_model, n_layers, n_heads (each also under its
// hidden_size-style name), vocab_size, max_seq_len (default 2048), tie_word_embeddings (default
// `tie`), LayerNorm. Errors are recorded in `b`.
void ReadMosaicHyperparameters(ModelBuilder& b, const HfConfig& c, bool tie);

// True when transformers' config string is older than major.minor ("4.27.4" < 4.28).
bool TransformersVersionBefore(const HfConfig& config, int major, int minor);

}  // namespace memfit::arch
