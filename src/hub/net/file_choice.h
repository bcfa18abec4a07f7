#pragma once
// Which files of a Hub repository to read, from its file list alone (pure; no I/O):
// transformers (config.json + model.safetensors or model.safetensors.index.json + shards),
// diffusers (model_index.json + each component's weights), sentence-transformers (modules.json:
// the root transformer + module folders such as 2_Dense), and GGUF repositories.

#include <map>
#include <string>
#include <vector>

#include "hub/net/hub_cache.h"
#include "memfit/result.h"

namespace memfit::hubnet {

// Safetensors weights under one folder ("" for the root): an index to fetch first, or files.
struct WeightGroup {
  std::string folder = "";  // "" or "unet/"
  std::string index_path = "";  // "unet/diffusion_pytorch_model.safetensors.index.json" or ""
  std::vector<std::string> files = {};  // when there is no index
};

struct FilePlan {
  std::string layout;  // "transformers", "diffusers", "sentence-transformers", "gguf"
  std::vector<std::string> json_files;  // small files to fetch: config.json, indexes, ...
  std::string config_path;              // "config.json" or ""
  std::string root_index_path;          // an index at the root (model or pytorch_model)
  std::vector<WeightGroup> groups;
  std::vector<std::string> gguf_files;  // every *.gguf, sorted
  std::string gguf_file;                // chosen (layout "gguf")
  std::vector<std::string> assumptions;
};

// `gguf_choice`: --gguf-file (or a .gguf file URL); selects GGUF even if safetensors exist.
// `model_index_json` / `modules_json`: the text of those files when the repository has them
// (fetched by the caller after a first call told it they are needed); empty otherwise.
Result<FilePlan> PlanFiles(std::string_view repo_id, const std::vector<RepoFile>& files,
                           std::string_view gguf_choice, std::string_view model_index_json,
                           std::string_view modules_json);

}  // namespace memfit::hubnet
