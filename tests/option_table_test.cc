// The one option table (api/options.h) behind every front end: for every command, every option
// and every spelling of it, the CLI's flag and the API's key set the same request field to the
// same value, start from the same default, and refuse the same bad value with the same message.
// Generated from the table itself: a new option is covered without a new line here.

#include <gtest/gtest.h>

#include <sstream>

#include <nlohmann/json.hpp>

#include "api/options.h"
#include "api/request_json.h"
#include "cli/app.h"
#include "cli/options_binding.h"

namespace memfit {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

// A value each option accepts, from its kind (the table says what it takes).
nlohmann::json GoodValue(const api::Option& o) {
  if (o.kind == api::ValueKind::kGpu) return "h100";
  if (o.kind == api::ValueKind::kSize) return "24GiB";
  if (std::holds_alternative<bool*>(o.target)) return true;
  if (std::holds_alternative<uint64_t*>(o.target)) return 7;  // no count defaults to 7
  if (std::holds_alternative<double*>(o.target)) return 0.5;
  if (!o.choices.empty()) return std::string(o.choices.back());
  if (o.names[0] == "torch-version") return "2.5";
  if (o.names[0] == "transformers-version") return "4.48";
  return "q_proj";
}

std::string CliText(const nlohmann::json& v) {
  return v.is_string() ? v.get<std::string>() : v.dump();
}

// The option values of a request, read through the table: what a request "is" here.
template <typename Request>
nlohmann::json Values(Request& request) {
  nlohmann::json out = nlohmann::json::object();
  for (const api::Option& o : api::Options(request)) {
    out[std::string(o.names[0])] = std::visit([](auto* p) { return nlohmann::json(*p); }, o.target);
  }
  return out;
}

// The CLI side: the table bound to a bare subcommand, as each command binds it.
template <typename Request>
Result<Request> FromCli(const std::vector<std::string>& args) {
  Request request;
  CLI::App app;
  std::ostringstream out, err;
  cli::Context ctx{out, err};
  CLI::App* cmd = app.add_subcommand("cmd");
  cli::BindOptions(*cmd, api::Options(request), ctx);
  std::vector<std::string> argv = {"cmd"};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<std::string> reversed(argv.rbegin(), argv.rend());
  try {
    app.parse(reversed);
  } catch (const CLI::ParseError& e) {
    return MakeError("{}", e.what());
  }
  return request;
}

template <typename Request>
void ExpectSameRequests(std::string_view command,
                        Result<Request> (*from_json)(const nlohmann::json&), bool has_model) {
  Request defaults;
  const nlohmann::json default_values = Values(defaults);
  nlohmann::json base = has_model ? nlohmann::json{{"model", "gpt2"}} : nlohmann::json::object();
  // The same default: an empty body and no flags are the request's defaults.
  auto api_default = from_json(base);
  ASSERT_TRUE(api_default) << command << ": " << api_default.error().message;
  EXPECT_EQ(Values(*api_default), default_values) << command;
  auto cli_default = FromCli<Request>({});
  ASSERT_TRUE(cli_default) << command << ": " << cli_default.error().message;
  EXPECT_EQ(Values(*cli_default), default_values) << command;
  // Every option, under every name, set to a good value: the same field, the same value.
  Request probe;
  for (const api::Option& o : api::Options(probe)) {
    const nlohmann::json value = GoodValue(o);
    for (std::string_view name : o.names) {
      nlohmann::json body = base;
      body[std::string(name)] = value;
      auto from_api = from_json(body);
      ASSERT_TRUE(from_api) << command << " --" << name << ": " << from_api.error().message;
      std::vector<std::string> args = {"--" + std::string(name)};
      if (!value.is_boolean()) args.push_back(CliText(value));
      auto from_cli = FromCli<Request>(args);
      ASSERT_TRUE(from_cli) << command << " --" << name << ": " << from_cli.error().message;
      const nlohmann::json api_values = Values(*from_api);
      EXPECT_EQ(api_values, Values(*from_cli)) << command << " --" << name;
      EXPECT_NE(api_values, default_values) << command << " --" << name << " changed nothing";
    }
  }
}

TEST(OptionTable, EverySpellingOfEveryOptionSetsTheSameFieldInTheCliAndTheApi) {
  ExpectSameRequests<LoadRequest>("estimate-memory", api::LoadRequestFromJson, true);
  ExpectSameRequests<InferenceRequest>("inference", api::InferenceRequestFromJson, true);
  ExpectSameRequests<TrainRequest>("train", api::TrainRequestFromJson, true);
  ExpectSameRequests<FitCommandRequest>("fit", api::FitRequestFromJson, true);
  ExpectSameRequests<InspectRequest>("inspect", api::InspectRequestFromJson, true);
  ExpectSameRequests<GpusRequest>("gpus", api::GpusRequestFromJson, false);
  ExpectSameRequests<ModelsRequest>("models", api::ModelsRequestFromJson, false);
}

// The first line `memfit ARGS` prints on stderr, and its exit code.
std::pair<int, std::string> CliError(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  const int code = cli::Run(args, out, err);
  std::string text = err.str();
  return {code, text.substr(0, text.find('\n'))};
}

// A bad value of each option the table checks (accepted values, whole numbers, ranges) is the
// same one-line error (exit 1), word for word, from the real CLI (before any model is read) and the API.
template <typename Request>
void ExpectSameErrors(const std::string& command,
                      Result<Request> (*from_json)(const nlohmann::json&), bool has_model) {
  Request probe;
  for (const api::Option& o : api::Options(probe)) {
    std::vector<std::string> bad;
    if (!o.choices.empty() && o.kind == api::ValueKind::kPlain) bad.push_back("zzqq-bad");
    if (std::holds_alternative<uint64_t*>(o.target)) {
      bad.push_back("-5");
      bad.push_back("lots");
      if (o.min >= 1) bad.push_back("0");
    }
    if (o.kind == api::ValueKind::kGpu) bad.push_back("4090");
    if (o.kind == api::ValueKind::kSize) bad.push_back("24XB");
    for (const std::string& value : bad) {
      const std::string flag = "--" + std::string(o.names[0]);
      nlohmann::json body = has_model ? nlohmann::json{{"model", "gpt2"}} : nlohmann::json::object();
      body[std::string(o.names[0])] = value;
      auto api = from_json(body);
      ASSERT_FALSE(api) << command << " " << flag << " " << value;
      std::vector<std::string> args = {command};
      if (has_model) args.push_back("gpt2");
      args.push_back(flag);
      args.push_back(value);
      const auto [code, line] = CliError(args);
      EXPECT_EQ(code, 1) << command << " " << flag << " " << value;
      EXPECT_EQ(line, "memfit: error: " + api.error().message) << command << " " << flag;
      EXPECT_EQ(api.error().kind, ErrorKind::kBadInput) << "a refused value is 422, not usage";
      EXPECT_NE(api.error().message.find(flag), std::string::npos)
          << "the error names the flag: " << api.error().message;
    }
  }
}

TEST(OptionTable, EveryBadValueIsTheSameOneLineErrorNamingTheFlag) {
  ExpectSameErrors<LoadRequest>("estimate-memory", api::LoadRequestFromJson, true);
  ExpectSameErrors<InferenceRequest>("inference", api::InferenceRequestFromJson, true);
  ExpectSameErrors<TrainRequest>("train", api::TrainRequestFromJson, true);
  ExpectSameErrors<FitCommandRequest>("fit", api::FitRequestFromJson, true);
  ExpectSameErrors<InspectRequest>("inspect", api::InspectRequestFromJson, true);
  ExpectSameErrors<GpusRequest>("gpus", api::GpusRequestFromJson, false);
}

// Issue 29's first answers, each of which was silently wrong before the table.
TEST(OptionTable, FirstAnswersThatUsedToMislead) {
  // A bare number is a GPU's model number, not 4090 bytes.
  auto [code, line] = CliError({"fit", "meta-llama/Llama-3.1-8B", "--gpu", "4090"});
  EXPECT_EQ(code, 1);
  EXPECT_NE(line.find("a bare number is neither a GPU nor a size; did you mean RTX 4090"), std::string::npos) << line;
  // The GPU of that model number, not its Ti sibling; a count prefix is kept.
  std::tie(code, line) = CliError({"fit", "meta-llama/Llama-3.1-8B", "--gpu", "3090"});
  EXPECT_NE(line.find("did you mean RTX 3090 (24.00 GiB)?"), std::string::npos) << line;
  std::tie(code, line) = CliError({"inference", "meta-llama/Llama-3.1-8B", "--gpu", "2x3090"});
  EXPECT_NE(line.find("did you mean 2 x RTX 3090 (24.00 GiB each: --gpu 2xrtx3090)?"),
            std::string::npos)
      << line;
  // --context -5 and 0 are errors naming the flag, not an overflow or a silent default.
  std::tie(code, line) = CliError({"inference", "gpt2", "--context", "-5"});
  EXPECT_EQ(line, "memfit: error: --context -5: expected a whole number of 1 or more");
  std::tie(code, line) = CliError({"inference", "gpt2", "--context", "0"});
  EXPECT_EQ(line, "memfit: error: --context 0: give 1 or more tokens, or leave it out for "
                  "the default");
  // Token counts take vLLM's suffixes (k = 1,000, K = 1,024): --context 128K is 131,072, not an
  // error; the API reads the same strings.
  for (const auto& [text, tokens] : std::vector<std::pair<std::string, uint64_t>>{
           {"128K", 131072}, {"32k", 32000}, {"25.6k", 25600}, {"1M", 1048576}, {"4096", 4096}}) {
    auto parsed = api::InferenceRequestFromJson({{"model", "gpt2"}, {"context", text}});
    ASSERT_TRUE(parsed) << text << ": " << parsed.error().message;
    EXPECT_EQ(parsed->context, tokens) << text;
  }
  std::tie(code, line) = CliError({"inference", "gpt2", "--context", "2K", "--batch", "0"});
  EXPECT_EQ(line, "memfit: error: --batch 0: give 1 or more sequences, or leave it out for the "
                  "default");  // --context 2K itself was read
  std::tie(code, line) = CliError({"inference", "gpt2", "--context", "1.0001k"});
  EXPECT_EQ(line, "memfit: error: --context 1.0001k: expected a whole number of tokens, or one "
                  "with k (1,000), K (1,024), m or M: 128K = 131,072");
  std::tie(code, line) = CliError({"inference", "gpt2", "--context", "99999999999999999999k"});
  EXPECT_NE(line.find("expected a whole number of tokens"), std::string::npos) << line;
  // Sizes are not token counts: --batch 4k is still refused.
  std::tie(code, line) = CliError({"inference", "gpt2", "--batch", "4k"});
  EXPECT_EQ(line, "memfit: error: --batch 4k: expected a whole number of 1 or more");
  // Misspellings get a suggestion: a flag, an engine, a GPU.
  std::tie(code, line) = CliError({"inference", "gpt2", "--contxt", "4096"});
  EXPECT_EQ(line, "memfit: usage error: inference: unknown option --contxt (did you mean --context?)");
  std::tie(code, line) = CliError({"inference", "gpt2", "--engine", "vlm"});
  EXPECT_EQ(line, "memfit: error: --engine vlm: expected transformers, vllm, sglang or "
                  "llama.cpp (did you mean vllm?)");
  std::tie(code, line) = CliError({"train", "gpt2", "--gpu", "rtx4900"});
  EXPECT_NE(line.find("did you mean RTX 4090?"), std::string::npos) << line;
  std::tie(code, line) = CliError({"train", "gpt2", "--method", "qlroa"});
  EXPECT_NE(line.find("(did you mean qlora?)"), std::string::npos) << line;
  // The API says the same of a misspelled key.
  auto api = api::InferenceRequestFromJson({{"model", "gpt2"}, {"contxt", 4096}});
  ASSERT_FALSE(api);
  EXPECT_EQ(api.error().message,
            "option \"contxt\": not an option of this command (did you mean context?)");
}

// The table as the page and Python read it (memfit/api.h: ApiOptionsJson): every command, every
// option with its type and default, the defaults equal to the request structs'.
TEST(OptionTable, TheTableAsJsonCarriesDefaultsTypesAndChoices) {
  const nlohmann::json table = api::OptionTable();
  EXPECT_EQ(table["schema"], "memfit.options/v1");
  const auto& inference = table["commands"]["inference"];
  ASSERT_TRUE(inference.is_array());
  bool saw_context = false, saw_engine = false;
  for (const auto& o : inference) {
    if (o["name"] == "context") {
      saw_context = true;
      EXPECT_EQ(o["type"], "count");
      EXPECT_EQ(o["default"], 0);  // 0: the model's maximum capped at 8192 (ChooseContext)
      EXPECT_EQ(o["unit"], "tokens");
      EXPECT_EQ(o["aliases"], nlohmann::json({"ctx-size", "ctx"}));
      EXPECT_EQ(o["short"], "c");
    }
    if (o["name"] == "engine") {
      saw_engine = true;
      EXPECT_EQ(o["type"], "choice");
      EXPECT_EQ(o["default"], "transformers");
      EXPECT_EQ(o["choices"], nlohmann::json({"transformers", "vllm", "sglang", "llama.cpp"}));
    }
  }
  EXPECT_TRUE(saw_context && saw_engine);
  for (const std::string command : {"estimate-memory", "inspect", "train", "fit", "gpus", "models"}) {
    EXPECT_TRUE(table["commands"][command].is_array()) << command;
  }
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit
