#pragma once
// Which files of a Hub repository to read, from its file list alone (pure; no I/O):
// transformers (config.json + model.safetensors or model.safetensors.index.json + shards),
// diffusers (model_index.json + each component's weights), sentence-transformers (modules.json:
// the root transformer + module folders such as 2_Dense), and GGUF repositories.

#include <map>
#include <string>
#include <vector>

#include "formats/hf_config_json.h"
#include "hub/net/hub_cache.h"
#include "memfit/result.h"

namespace memfit::hubnet {

// Safetensors weights under one folder ("" for the root): an index to fetch first, or files.
struct WeightGroup {
  std::string folder = "";  // "" or "unet/"
  std::string index_path = "";  // "unet/diffusion_pytorch_model.safetensors.index.json" or ""
  std::vector<std::string> files = {};  // when there is no index
  // With an index: the shards the file list suggests it names (one complete set of
  // "{stem}-NNNNN-of-NNNNN.safetensors" beside it, e.g. model-00001-of-00002.safetensors for
  // model.safetensors.index.json), so their headers can be fetched while the index is. Only a
  // guess: the index decides; empty when the file list is ambiguous.
  std::vector<std::string> likely_shards = {};
};

struct FilePlan {
  std::string layout;  // "transformers", "diffusers", "sentence-transformers", "gguf"
  // "model_index.json" or "modules.json" when the plan depends on that file: fetch it and call
  // PlanFiles again with its text. Empty when the plan is complete.
  std::string pending_file;
  std::vector<std::string> json_files;  // small files to fetch: config.json, indexes, ...
  std::string config_path;              // "config.json" or ""
  // "hf_quant_config.json" beside config.json (NVIDIA ModelOpt releases): merged into the config
  // as its quantization_config when config.json has none (memfit/hf_quant_config.h).
  std::string quant_config_path;
  std::string root_index_path;          // an index at the root (model or pytorch_model)
  std::vector<WeightGroup> groups;
  std::vector<std::string> gguf_files;  // every *.gguf, sorted
  // Layout "gguf": the chosen model's files in split order (one file, or every file of a
  // PREFIX-0000i-of-0000N.gguf split), and the name it is known by (the file, or the first split).
  std::vector<std::string> gguf_paths;
  std::string gguf_file;
  std::vector<std::string> assumptions;
};

// The GGUF models of a file list: single files and complete split sets (named by their first
// file, "+ N files" in listings), projector (mmproj) files included. For messages.
std::string ListGgufModels(const std::vector<std::string>& gguf_files);

// `gguf_choice`: --gguf-file (or a .gguf file URL); selects GGUF even if safetensors exist. A
// path in the repository (any file of a split names the whole split), or else a part of one
// model's file name such as a quantization ("Q4_K_M", case-insensitive) when exactly one model
// matches. `model_index_json` / `modules_json`: the text of those files once fetched (see
// pending_file); empty otherwise.
Result<FilePlan> PlanFiles(std::string_view repo_id, const std::vector<RepoFile>& files,
                           std::string_view gguf_choice, std::string_view model_index_json,
                           std::string_view modules_json);

}  // namespace memfit::hubnet
