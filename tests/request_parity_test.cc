// One request layer (memfit/requests.h): the CLI's flags and the API's JSON fields become the
// same typed request (estimate-memory, inference, train), so `memfit <command> --format json` and POST /api/v1/<command> answer the
// same bytes, and both accept the same words (every long flag of the CLI is a JSON key).

#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "cli_run.h"
#include "gguf_models.h"
#include "server/answers.h"
#include "server/request_json.h"
#include "server/router.h"
#include "test_support.h"

namespace memfit {
namespace {

namespace fs = std::filesystem;
using testing::RunMemfit;

// A two-layer llama-shaped config (tests/cli_test.cc's kTinyLlama, two KV heads for --tp 2).
const char* kTinyLlama = R"({"model_type": "llama", "architectures": ["LlamaForCausalLM"],
  "torch_dtype": "float16", "vocab_size": 32, "hidden_size": 8, "intermediate_size": 16,
  "num_hidden_layers": 2, "num_attention_heads": 2, "num_key_value_heads": 2,
  "max_position_embeddings": 1024, "tie_word_embeddings": false})";

std::string TinyLocalModel() {
  const fs::path dir = fs::path(testing::TempDir()) / "parity-tiny-llama";
  fs::create_directories(dir);
  std::ofstream(dir / "config.json") << kTinyLlama;
  return dir.string();
}

std::string TinyGguf() {
  testing::GgufShape s;  // 2 layers, 256 hidden, F16
  const std::string path = testing::TempDir() + "/parity.gguf";
  std::ofstream(path, std::ios::binary) << testing::MakeGgufWriter(s).Build();
  return path;
}

// The CLI's JSON for `command MODEL <flags> --format json`.
std::string CliJson(const std::string& command, const std::string& model,
                    const std::vector<std::string>& flags) {
  std::vector<std::string> args = {command, model};
  args.insert(args.end(), flags.begin(), flags.end());
  args.insert(args.end(), {"--format", "json"});
  auto r = RunMemfit(args);
  EXPECT_EQ(r.code, 0) << command << " " << model << ": " << r.err;
  return r.out;
}

// The same flags as the API's body: "--key value" -> {"key": "value"}, a bare flag -> true.
nlohmann::json Body(const std::string& model, const std::vector<std::string>& flags) {
  nlohmann::json body = {{"model", model}};
  for (size_t i = 0; i < flags.size(); ++i) {
    const std::string key = flags[i].substr(2);
    if (i + 1 < flags.size() && !flags[i + 1].starts_with("--")) {
      body[key] = flags[++i];
    } else {
      body[key] = true;
    }
  }
  return body;
}

struct Case {
  std::string command;
  std::vector<std::string> flags;
};

const std::vector<Case>& Cases() {
  static const std::vector<Case> cases = {
      {"estimate-memory", {}},
      {"estimate-memory", {"--dtypes", "float16"}},
      {"estimate-memory", {"--accelerate"}},
      {"inference", {}},
      {"inference", {"--context", "512", "--batch", "4", "--kv-dtype", "fp8", "--gpu", "h100"}},
      {"inference", {"--engine", "vllm", "--gpu", "a100", "--curve", "--tp", "2"}},
      {"train", {}},
      {"train", {"--method", "lora", "--context", "256", "--batch", "2", "--gpu", "rtx4090"}},
      {"train", {"--method", "qlora", "--optimizer", "paged-adamw-8bit", "--checkpointing", "full"}},
  };
  return cases;
}

TEST(RequestParity, CliAndApiAnswerTheSameBytesForACatalogModel) {
  server::Router router(server::ServerOptions{});
  for (const Case& c : Cases()) {
    std::vector<std::string> flags = c.flags;
    flags.push_back("--offline");
    const std::string cli = CliJson(c.command, "openai-community/gpt2", flags);
    const auto api = router.Handle({.method = "POST",
                                    .path = "/api/v1/" + c.command,
                                    .params = {},
                                    .authorization = "",
                                    .body = Body("openai-community/gpt2", flags).dump()});
    EXPECT_EQ(api.status, 200) << api.body;
    EXPECT_EQ(api.body, cli) << c.command << " " << Body("", flags).dump();
  }
  ClearModelCache();
  ConfigureModelCache({});
}

// The API refuses local paths, so the typed request is answered directly (what the router runs
// for a Hub id or a catalog name).
TEST(RequestParity, CliAndTheApiAnswerAgreeOnLocalFixtures) {
  const std::string tiny = TinyLocalModel();
  for (const Case& c : Cases()) {
    const std::string cli = CliJson(c.command, tiny, c.flags);
    const nlohmann::json body = Body(tiny, c.flags);
    server::ApiResponse api;
    if (c.command == "estimate-memory") {
      auto request = server::LoadRequestFromJson(body);
      ASSERT_TRUE(request) << request.error().message;
      api = server::AnswerLoad(*request);
    } else if (c.command == "inference") {
      auto request = server::InferenceRequestFromJson(body);
      ASSERT_TRUE(request) << request.error().message;
      api = server::AnswerInference(*request);
    } else {
      auto request = server::TrainRequestFromJson(body);
      ASSERT_TRUE(request) << request.error().message;
      api = server::AnswerTrain(*request);
    }
    EXPECT_EQ(api.status, 200) << api.body;
    EXPECT_EQ(api.body, cli) << c.command << " " << body.dump();
  }
  // A GGUF file goes to llama.cpp in both.
  const std::string gguf = TinyGguf();
  for (const std::vector<std::string>& flags :
       std::vector<std::vector<std::string>>{{}, {"--context", "1024", "--batch", "2"}}) {
    auto request = server::InferenceRequestFromJson(Body(gguf, flags));
    ASSERT_TRUE(request) << request.error().message;
    const server::ApiResponse api = server::AnswerInference(*request);
    EXPECT_EQ(api.status, 200) << api.body;
    EXPECT_EQ(api.body, CliJson("inference", gguf, flags));
  }
}

TEST(RequestParity, ErrorsKeepTheirKindAndMessage) {
  const std::string tiny = TinyLocalModel();
  auto request = server::InferenceRequestFromJson({{"model", tiny}, {"dtype", "float7"}});
  ASSERT_TRUE(request);
  const server::ApiResponse api = server::AnswerInference(*request);
  EXPECT_EQ(api.status, 422);
  auto cli = RunMemfit({"inference", tiny, "--dtype", "float7"});
  EXPECT_EQ(cli.code, 1);
  const std::string message = nlohmann::json::parse(api.body)["error"];
  EXPECT_EQ("memfit: error: " + message + "\n", cli.err);
  // The body's own mistakes are the CLI's usage errors: 400 before any work.
  EXPECT_FALSE(server::InferenceRequestFromJson({{"model", "gpt2"}, {"batch", "two"}}));
  EXPECT_FALSE(server::InferenceRequestFromJson({{"model", "gpt2"}, {"batch", true}}));
  EXPECT_FALSE(server::InferenceRequestFromJson({{"model", "gpt2"}, {"frobnicate", 1}}));
  EXPECT_FALSE(server::TrainRequestFromJson({{"model", "gpt2"}, {"context", 1}, {"ctx", 2}}));
  EXPECT_FALSE(server::TrainRequestFromJson({{"batch", 1}}));
}

// Every long flag of `memfit estimate-memory`, `inference` and `train` (but --format, the API's own) is a key
// of the API's body, and every key is a flag: the two vocabularies cannot drift.
std::set<std::string> CliLongNames(const std::string& command) {
  CLI::App app;
  std::ostringstream out, err;
  cli::Context ctx{out, err};
  if (command == "inference") cli::AddInferenceCommand(app, ctx);
  else if (command == "train") cli::AddTrainCommand(app, ctx);
  else cli::AddEstimateMemoryCommand(app, ctx);
  std::set<std::string> names;
  for (const CLI::Option* option : app.get_subcommand(command)->get_options()) {
    for (const std::string& name : option->get_lnames()) {
      if (name != "format" && name != "help") names.insert(name);
    }
  }
  return names;
}

TEST(RequestParity, TheApiAcceptsEveryFlagOfTheCli) {
  for (const std::string command : {"estimate-memory", "inference", "train"}) {
    const std::vector<std::string> keys = command == "inference" ? server::InferenceRequestKeys()
                                          : command == "train"   ? server::TrainRequestKeys()
                                                                 : server::LoadRequestKeys();
    EXPECT_EQ(std::set<std::string>(keys.begin(), keys.end()), CliLongNames(command)) << command;
  }
}

// The shared words (docs/cli.md, "Shared vocabulary") through the API: --context and its
// aliases, --batch (and train's --micro-batch), --gpu, --engine.
TEST(RequestParity, TheApiSpellsTheSharedWordsAsTheCli) {
  for (const std::string key : {"context", "ctx-size", "ctx"}) {
    auto inference = server::InferenceRequestFromJson({{"model", "gpt2"}, {key, 512}});
    ASSERT_TRUE(inference) << key;
    EXPECT_EQ(inference->context, 512u);
    auto train = server::TrainRequestFromJson({{"model", "gpt2"}, {key, "512"}});
    ASSERT_TRUE(train) << key;
    EXPECT_EQ(train->context, 512u);
  }
  auto micro = server::TrainRequestFromJson({{"model", "gpt2"}, {"micro-batch", 3}});
  ASSERT_TRUE(micro);
  EXPECT_EQ(micro->batch, 3u);
  auto inference = server::InferenceRequestFromJson(
      {{"model", "gpt2"}, {"batch", 3}, {"gpu", "h100"}, {"engine", "vllm"}});
  ASSERT_TRUE(inference);
  EXPECT_EQ(inference->batch, 3u);
  EXPECT_EQ(inference->gpu, "h100");
  EXPECT_EQ(inference->engine, "vllm");
}

// The shared words on every command that has the quantity (docs/cli.md, "Shared vocabulary"):
// the context as --context, -c, --ctx-size and --ctx; --batch in sequences; --gpu; --engine where
// the runtime is a choice; train's micro-batch as --micro-batch too. (llama.cpp's --ubatch, on
// `memfit gguf`, is its physical batch in tokens: another quantity.)
TEST(RequestParity, EveryCommandTakesTheSharedWords) {
  struct Words {
    std::string command;
    void (*add)(CLI::App&, cli::Context&);
    std::vector<std::string> words;
  };
  const std::vector<Words> table = {
      {"inference", cli::AddInferenceCommand,
       {"--context", "-c", "--ctx-size", "--ctx", "--batch", "--gpu", "--gpus", "--engine"}},
      {"train", cli::AddTrainCommand,
       {"--context", "-c", "--ctx-size", "--ctx", "--batch", "--micro-batch", "--gpu", "--gpus"}},
      {"fit", cli::AddFitCommand,
       {"--context", "-c", "--ctx-size", "--ctx", "--batch", "--gpu", "--gpus", "--engine"}},
  };
  for (const Words& w : table) {
    CLI::App app;
    std::ostringstream out, err;
    cli::Context ctx{out, err};
    w.add(app, ctx);
    CLI::App* command = app.get_subcommand(w.command);
    for (const std::string& word : w.words) {
      EXPECT_NE(command->get_option_no_throw(word), nullptr) << w.command << " " << word;
    }
  }
}

}  // namespace
}  // namespace memfit
