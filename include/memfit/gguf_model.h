#pragma once
// Model from GGUF headers: exact tensor bytes per ggml type, hyperparameters from the
// `{arch}.*` keys (llama.cpp's llama_hparams), layers grouped by `blk.N.`.

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "memfit/gguf.h"
#include "memfit/model.h"
#include "memfit/result.h"

namespace memfit {

// One file of a (possibly split) GGUF model, with its file name for messages.
struct GgufShard {
  std::string name;
  GgufFile file;
};

// What llama.cpp facts about a GGUF model that Model does not hold.
struct GgufModelFacts {
  std::string file_type;       // general.file_type as llama.cpp names it ("Q4_K - Medium"), or ""
  uint64_t file_bytes = 0;     // all shards
  uint64_t tensor_bytes = 0;   // all shards (llama.cpp's "file size")
  bool is_projector = false;   // general.type "mmproj" or architecture "clip"
  uint32_t shard_count = 1;
};

// Builds the Model of a GGUF model (shards in order, the first holding the metadata). Checks the
// split.* keys when there is more than one shard and rejects tensor names repeated across shards.
// Tensor names stay as in the file ("blk.0.attn_q.weight"); no_split_patterns is {"blk.*"}.
Result<Model> ModelFromGguf(const std::vector<GgufShard>& shards, std::string_view name);
GgufModelFacts GgufFacts(const std::vector<GgufShard>& shards);

// llama_ftype name for general.file_type (llama.cpp llama_model_ftype_name); "" when unknown.
std::string_view GgufFileTypeName(uint64_t file_type);

// Layer index of a "blk.N." tensor name, or -1.
int64_t GgufLayerOf(std::string_view tensor_name);

}  // namespace memfit
