#pragma once
// The option table: every option of every API command declared once, with its names (the CLI's
// long flags without "--", which are also the API's JSON keys and, with '-' as '_', Python's
// keywords), the request field it sets, its help, unit, accepted values and limits. The CLI binds
// its flags from it (cli/options_binding.h), the API reads JSON bodies with it
// (api/request_json.h), the OpenAPI schema, the page's controls and the Python stubs are generated
// from it (memfit/api.h: ApiOptionsJson), and one check (CheckOption) gives every front end the
// same error for the same bad value. Defaults are the request structs' (memfit/requests.h).

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "memfit/requests.h"
#include "memfit/result.h"

namespace memfit::api {

using Target = std::variant<uint64_t*, double*, std::string*, bool*, std::vector<std::string>*>;

// What a text value is, beyond its C++ type: the page's control, Python's stub and the check.
enum class ValueKind : uint8_t {
  kPlain,  // by the target's type: count (a whole number), number, text, flag, list
  kSize,   // bytes with a unit: 24GiB, 512MiB ("unlimited" where `choices` says so)
  kGpu,    // one GPU: a catalog name (rtx4090), NxNAME (8xh200) or a size (24GiB)
  kModel,  // a Hub id, catalog name or local path (only MODEL's own flags)
};

struct Option {
  std::vector<std::string_view> names;  // the first is the canonical name; all are JSON keys
  Target target;
  std::string_view help;
  std::string_view unit = {};                  // "tokens", "sequences", "GPUs", "bytes", ...
  std::vector<std::string_view> choices = {};  // the canonical values ({}: any of its kind)
  ValueKind kind = ValueKind::kPlain;
  // Counts and numbers: the accepted range (a count's 0 is "the default" only where min is 0).
  double min = 0;
  double max = 1e18;
  // Text: the library's own parser of the value (accepting its aliases); null: `choices` exactly.
  Status (*parse)(std::string_view value) = nullptr;
  std::string_view short_name = {};  // the CLI's one-letter flag ("c")
  std::string_view group = {};       // the CLI's help section and the page's fieldset
};

// Each command's options, bound to `request`'s fields, in the order of `memfit <command> --help`.
// MODEL itself is the CLI's positional argument and the body's "model" key, not an option.
// MODEL's flags alone (--revision, --offline, --token, --gguf-file): `memfit gguf`'s commands.
std::vector<Option> ModelOptions(ModelQuery& query);
std::vector<Option> Options(LoadRequest& request);
std::vector<Option> Options(InferenceRequest& request);
std::vector<Option> Options(TrainRequest& request);
std::vector<Option> Options(FitCommandRequest& request);
std::vector<Option> Options(InspectRequest& request);
std::vector<Option> Options(GpusRequest& request);
std::vector<Option> Options(ModelsRequest& request);

// The option's current value against its kind, range and accepted values; the error names the
// flag ("--engine vlm: expected transformers, vllm, sglang or llama.cpp (did you mean vllm?)").
// Empty text and an empty list are the default and always pass. Called for the options a user
// gave (a count's 0 is refused there, while an absent count keeps its default of 0).
Status CheckOption(const Option& option);
// A whole number's text as a count: digits only (no sign), in range; the error names the flag.
Result<uint64_t> ParseCount(const Option& option, std::string_view text);

// The type name the page, Python and the docs use: count, number, text, flag, list, size, gpu.
std::string_view TypeName(const Option& option);

// Every command's option names (canonical and aliases), for "did you mean" on a misspelled flag.
std::vector<std::string> OptionNames(const std::vector<Option>& options);

}  // namespace memfit::api
