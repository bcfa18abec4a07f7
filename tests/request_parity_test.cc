// One request layer (memfit/requests.h): the CLI's flags and the API's JSON fields become the
// same typed request (estimate-memory, inference, train, fit, inspect, gpus, models), so `memfit <command> --format json` and POST /api/v1/<command> answer the
// same bytes, and both accept the same words (every long flag of the CLI is a JSON key).

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "cli_run.h"
#include "gguf_models.h"
#include "cli/request_flags.h"
#include "memfit/validation.h"
#include "request/request_options.h"
#include "api/answers.h"
#include "api/request_json.h"
#include "server/router.h"
#include "test_support.h"

namespace memfit {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

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

// The same flags as the API's body: "--key value" -> {"key": "value"}, a bare flag -> true, a
// repeated flag -> an array.
nlohmann::json Body(const std::string& model, const std::vector<std::string>& flags) {
  nlohmann::json body = {{"model", model}};
  for (size_t i = 0; i < flags.size(); ++i) {
    const std::string key = flags[i].substr(2);
    if (i + 1 < flags.size() && !flags[i + 1].starts_with("--")) {
      const std::string value = flags[++i];
      if (!body.contains(key)) body[key] = value;
      else if (body[key].is_array()) body[key].push_back(value);
      else body[key] = nlohmann::json::array({body[key], value});  // a repeated flag
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
      {"fit", {"--gpu", "rtx4090"}},
      {"fit", {"--gpu", "8GiB", "--gpu", "4GiB", "--ram", "64GiB", "--task", "inference",
               "--context", "512", "--batch", "2", "--kv-dtype", "fp8", "--no-advice"}},
      {"fit", {"--gpu", "h100", "--gpus", "2", "--task", "train", "--ctx-size", "256"}},
      {"fit", {"--gpu", "rtx4090", "--device-map"}},
      {"fit", {"--engine", "vllm", "--gpu", "a100", "--context", "1024", "--batch", "4"}},
      {"fit", {"--engine", "sglang", "--gpu", "rtx4090", "--search", "--top", "2"}},
      {"inspect", {}},
      {"inspect", {"--depth", "1"}},
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
    api::ApiResponse api;
    if (c.command == "estimate-memory") {
      auto request = api::LoadRequestFromJson(body);
      ASSERT_TRUE(request) << request.error().message;
      api = api::AnswerLoad(*request);
    } else if (c.command == "inference") {
      auto request = api::InferenceRequestFromJson(body);
      ASSERT_TRUE(request) << request.error().message;
      api = api::AnswerInference(*request);
    } else if (c.command == "train") {
      auto request = api::TrainRequestFromJson(body);
      ASSERT_TRUE(request) << request.error().message;
      api = api::AnswerTrain(*request);
    } else if (c.command == "fit") {
      auto request = api::FitRequestFromJson(body);
      ASSERT_TRUE(request) << request.error().message;
      api = api::AnswerFit(*request);
    } else {
      auto request = api::InspectRequestFromJson(body);
      ASSERT_TRUE(request) << request.error().message;
      api = api::AnswerInspect(*request);
    }
    EXPECT_EQ(api.status, 200) << api.body;
    EXPECT_EQ(api.body, cli) << c.command << " " << body.dump();
  }
  // A GGUF file goes to llama.cpp in both.
  const std::string gguf = TinyGguf();
  for (const std::vector<std::string>& flags :
       std::vector<std::vector<std::string>>{{}, {"--context", "1024", "--batch", "2"}}) {
    auto request = api::InferenceRequestFromJson(Body(gguf, flags));
    ASSERT_TRUE(request) << request.error().message;
    const api::ApiResponse api = api::AnswerInference(*request);
    EXPECT_EQ(api.status, 200) << api.body;
    EXPECT_EQ(api.body, CliJson("inference", gguf, flags));
  }
  // ... and so does `fit` (llama.cpp's --fit order), whether or not the model fits.
  for (const std::vector<std::string>& flags : std::vector<std::vector<std::string>>{
           {"--gpu", "24GiB"}, {"--gpu", "1MiB", "--context", "2048"}}) {
    auto request = api::FitRequestFromJson(Body(gguf, flags));
    ASSERT_TRUE(request) << request.error().message;
    const api::ApiResponse api = api::AnswerFit(*request);
    EXPECT_EQ(api.status, 200) << api.body;
    std::vector<std::string> args = {"fit", gguf};
    args.insert(args.end(), flags.begin(), flags.end());
    args.insert(args.end(), {"--format", "json"});
    EXPECT_EQ(api.body, RunMemfit(args).out);
  }
}

// gpus and models take no MODEL: the same bytes from the CLI and the API, POST and GET alike.
TEST(RequestParity, CliAndApiAnswerTheSameCatalogs) {
  server::Router router(server::ServerOptions{});
  const std::vector<Case> cases = {{"gpus", {}},
                                   {"gpus", {"--vendor", "amd"}},
                                   {"gpus", {"--min-memory", "80GiB", "--vendor", "nvidia"}},
                                   {"models", {}},
                                   {"models", {"--family", "llama"}}};
  for (const Case& c : cases) {
    std::vector<std::string> args = {c.command};
    args.insert(args.end(), c.flags.begin(), c.flags.end());
    args.insert(args.end(), {"--format", "json"});
    const auto cli = RunMemfit(args);
    ASSERT_EQ(cli.code, 0) << cli.err;
    nlohmann::json body = Body("", c.flags);
    body.erase("model");
    const auto post = router.Handle({.method = "POST", .path = "/api/v1/" + c.command, .params = {},
                                     .authorization = "", .body = body.dump()});
    EXPECT_EQ(post.status, 200) << post.body;
    EXPECT_EQ(post.body, cli.out) << c.command << " " << body.dump();
    std::multimap<std::string, std::string> params;
    for (const auto& [key, value] : body.items()) params.emplace(key, value.get<std::string>());
    const auto get = router.Handle({.method = "GET", .path = "/api/v1/" + c.command,
                                    .params = params, .authorization = "", .body = ""});
    EXPECT_EQ(get.body, cli.out) << c.command << " GET " << body.dump();
  }
}

TEST(RequestParity, ErrorsKeepTheirKindAndMessage) {
  const std::string tiny = TinyLocalModel();
  // A value its option refuses: the same message from the body's parser (bad input: 422) as the
  // CLI's one line (exit 1).
  auto request = api::InferenceRequestFromJson({{"model", tiny}, {"dtype", "float7"}});
  ASSERT_FALSE(request);
  EXPECT_EQ(request.error().kind, ErrorKind::kBadInput);
  EXPECT_EQ(api::StatusFor(request.error().kind), 422);
  auto cli = RunMemfit({"inference", tiny, "--dtype", "float7"});
  EXPECT_EQ(cli.code, 1);
  EXPECT_EQ("memfit: error: " + request.error().message + "\n", cli.err);
  // A failure of the estimate itself keeps its kind too.
  auto missing = api::InferenceRequestFromJson({{"model", tiny + "-absent"}});
  ASSERT_TRUE(missing) << missing.error().message;
  const api::ApiResponse api = api::AnswerInference(*missing);
  EXPECT_NE(api.status, 200);
  EXPECT_EQ(api.status, 404);
  auto cli_missing = RunMemfit({"inference", tiny + "-absent"});
  EXPECT_EQ(cli_missing.code, 1);
  const std::string message = nlohmann::json::parse(api.body)["error"];
  EXPECT_EQ(message.substr(0, message.find(" memfit looked")),
            cli_missing.err.substr(15, message.find(" memfit looked")));
  // The body's own mistakes are the CLI's usage errors: 400 before any work.
  EXPECT_FALSE(api::InferenceRequestFromJson({{"model", "gpt2"}, {"batch", "two"}}));
  EXPECT_FALSE(api::InferenceRequestFromJson({{"model", "gpt2"}, {"batch", true}}));
  EXPECT_FALSE(api::InferenceRequestFromJson({{"model", "gpt2"}, {"frobnicate", 1}}));
  EXPECT_FALSE(api::TrainRequestFromJson({{"model", "gpt2"}, {"context", 1}, {"ctx", 2}}));
  EXPECT_FALSE(api::TrainRequestFromJson({{"batch", 1}}));
  EXPECT_FALSE(api::FitRequestFromJson({{"gpu", "h100"}}));
  EXPECT_FALSE(api::FitRequestFromJson({{"model", "gpt2"}, {"top", -1}}));
  EXPECT_FALSE(api::InspectRequestFromJson({{"model", "gpt2"}, {"depth", "deep"}}));
  EXPECT_FALSE(api::GpusRequestFromJson({{"family", "llama"}}));
  EXPECT_FALSE(api::ModelsRequestFromJson({{"model", "gpt2"}}));
  // A refused value is refused by the body's parser with the CLI's own one line (exit 1), whether
  // it is a word outside its set, a number outside its range or a size without a unit.
  const std::vector<std::pair<nlohmann::json, std::vector<std::string>>> refused = {
      {{{"model", tiny}, {"gpu", "h100"}, {"task", "serve"}},
       {"fit", tiny, "--gpu", "h100", "--task", "serve"}},
      {{{"model", tiny}, {"gpu", "h100"}, {"strategy", "fast"}},
       {"fit", tiny, "--gpu", "h100", "--strategy", "fast"}},
      {{{"model", tiny}, {"gpu", "h100"}, {"ram", "lots"}},
       {"fit", tiny, "--gpu", "h100", "--ram", "lots"}}};
  for (const auto& [body, args] : refused) {
    auto fit = api::FitRequestFromJson(body);
    ASSERT_FALSE(fit) << body.dump();
    EXPECT_EQ(api::StatusFor(fit.error().kind), 422) << body.dump();
    auto cli_fit = RunMemfit(args);
    EXPECT_EQ(cli_fit.code, 1) << body.dump();
    EXPECT_EQ("memfit: error: " + fit.error().message + "\n", cli_fit.err);
  }
  auto deep = api::InspectRequestFromJson({{"model", tiny}, {"depth", 17}});
  ASSERT_FALSE(deep);
  EXPECT_EQ(deep.error().message.find("--depth 17: expected 1 to 16"), 0u) << deep.error().message;
  auto cli_deep = RunMemfit({"inspect", tiny, "--depth", "17"});
  EXPECT_EQ(cli_deep.code, 1);
  EXPECT_EQ("memfit: error: " + deep.error().message + "\n", cli_deep.err);
}

// Every long flag of `memfit estimate-memory`, `inference` and `train` (but --format and --wide, how
// the CLI prints) is a key
// of the API's body, and every key is a flag: the two vocabularies cannot drift.
// (models' --export-configs writes files: the CLI's alone, refused by the API.)
struct CommandKeys {
  std::string command;
  void (*add)(CLI::App&, cli::Context&);
  std::vector<std::string> (*keys)();
};

const std::vector<CommandKeys>& AllCommands() {
  static const std::vector<CommandKeys> commands = {
      {"estimate-memory", cli::AddEstimateMemoryCommand, api::LoadRequestKeys},
      {"inference", cli::AddInferenceCommand, api::InferenceRequestKeys},
      {"train", cli::AddTrainCommand, api::TrainRequestKeys},
      {"fit", cli::AddFitCommand, api::FitRequestKeys},
      {"inspect", cli::AddInspectCommand, api::InspectRequestKeys},
      {"gpus", cli::AddGpusCommand, api::GpusRequestKeys},
      {"models", cli::AddModelsCommand, api::ModelsRequestKeys},
  };
  return commands;
}

std::set<std::string> CliLongNames(const CommandKeys& c) {
  CLI::App app;
  std::ostringstream out, err;
  cli::Context ctx{out, err};
  c.add(app, ctx);
  std::set<std::string> names;
  for (const CLI::Option* option : app.get_subcommand(c.command)->get_options()) {
    for (const std::string& name : option->get_lnames()) {
      if (name != "format" && name != "wide" && name != "help" && name != "export-configs") {
        names.insert(name);
      }
    }
  }
  return names;
}

TEST(RequestParity, TheApiAcceptsEveryFlagOfTheCli) {
  for (const CommandKeys& c : AllCommands()) {
    const std::vector<std::string> keys = c.keys();
    EXPECT_EQ(std::set<std::string>(keys.begin(), keys.end()), CliLongNames(c)) << c.command;
  }
}

// The shared words (docs/cli.md, "Shared vocabulary") through the API: --context and its
// aliases, --batch (and train's --micro-batch), --gpu, --engine.
TEST(RequestParity, TheApiSpellsTheSharedWordsAsTheCli) {
  for (const std::string key : {"context", "ctx-size", "ctx"}) {
    auto inference = api::InferenceRequestFromJson({{"model", "gpt2"}, {key, 512}});
    ASSERT_TRUE(inference) << key;
    EXPECT_EQ(inference->context, 512u);
    auto train = api::TrainRequestFromJson({{"model", "gpt2"}, {key, "512"}});
    ASSERT_TRUE(train) << key;
    EXPECT_EQ(train->context, 512u);
  }
  auto micro = api::TrainRequestFromJson({{"model", "gpt2"}, {"micro-batch", 3}});
  ASSERT_TRUE(micro);
  EXPECT_EQ(micro->batch, 3u);
  auto inference = api::InferenceRequestFromJson(
      {{"model", "gpt2"}, {"batch", 3}, {"gpu", "h100"}, {"engine", "vllm"}});
  ASSERT_TRUE(inference);
  EXPECT_EQ(inference->batch, 3u);
  EXPECT_EQ(inference->gpu, "h100");
  EXPECT_EQ(inference->engine, "vllm");
  for (const std::string key : {"context", "ctx-size", "ctx"}) {
    auto fit = api::FitRequestFromJson({{"model", "gpt2"}, {key, 512}});
    ASSERT_TRUE(fit) << key;
    EXPECT_EQ(fit->context, 512u);
  }
  auto fit = api::FitRequestFromJson(
      {{"model", "gpt2"}, {"batch", 3}, {"gpu", "h100"}, {"gpus", 2}, {"engine", "sglang"}});
  ASSERT_TRUE(fit) << fit.error().message;
  EXPECT_EQ(fit->batch, 3u);
  EXPECT_EQ(fit->gpus, std::vector<std::string>{"h100"});
  EXPECT_EQ(fit->gpu_count, 2u);
  EXPECT_EQ(fit->engine, "sglang");
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

// The fields in which two requests differ ("" when none), MODEL's words included (ModelQuery's
// callbacks aside).
bool SameModel(const ModelQuery& a, const ModelQuery& b) {
  return std::tie(a.spec, a.revision, a.offline, a.token, a.gguf_file) ==
         std::tie(b.spec, b.revision, b.offline, b.token, b.gguf_file);
}

#define MEMFIT_SAME(field)   if (!(a.field == b.field)) differ += std::string(differ.empty() ? "" : " ") + #field;

std::string Differ(const TrainRequest& a, const TrainRequest& b) {
  std::string differ = SameModel(a.model, b.model) ? "" : "model";
  MEMFIT_SAME(method) MEMFIT_SAME(optimizer) MEMFIT_SAME(precision) MEMFIT_SAME(batch)
  MEMFIT_SAME(context) MEMFIT_SAME(decoder_tokens) MEMFIT_SAME(grad_accum) MEMFIT_SAME(gpus)
  MEMFIT_SAME(tp) MEMFIT_SAME(pp) MEMFIT_SAME(gpu) MEMFIT_SAME(checkpointing) MEMFIT_SAME(attn)
  MEMFIT_SAME(strategy) MEMFIT_SAME(offload) MEMFIT_SAME(lora_rank) MEMFIT_SAME(lora_alpha)
  MEMFIT_SAME(lora_dropout) MEMFIT_SAME(lora_targets) MEMFIT_SAME(qlora_quant)
  MEMFIT_SAME(freeze_layers) MEMFIT_SAME(head) MEMFIT_SAME(cuda_context)
  MEMFIT_SAME(allocator_reserve) MEMFIT_SAME(no_foreach) MEMFIT_SAME(keep_grads) MEMFIT_SAME(loss)
  MEMFIT_SAME(torch_version) MEMFIT_SAME(transformers_version) MEMFIT_SAME(mamba_scan)
  return differ;
}

std::string Differ(const InferenceRequest& a, const InferenceRequest& b) {
  std::string differ = SameModel(a.model, b.model) ? "" : "model";
  MEMFIT_SAME(context) MEMFIT_SAME(batch) MEMFIT_SAME(gpus) MEMFIT_SAME(dtype) MEMFIT_SAME(quant)
  MEMFIT_SAME(kv_dtype) MEMFIT_SAME(attn) MEMFIT_SAME(engine) MEMFIT_SAME(gpu_memory_utilization)
  MEMFIT_SAME(gpu_memory) MEMFIT_SAME(block_size) MEMFIT_SAME(max_num_seqs)
  MEMFIT_SAME(max_batched_tokens) MEMFIT_SAME(tp) MEMFIT_SAME(dp) MEMFIT_SAME(ep) MEMFIT_SAME(pp)
  MEMFIT_SAME(dp_attention) MEMFIT_SAME(gpu) MEMFIT_SAME(encoder_tokens)
  MEMFIT_SAME(decoder_tokens) MEMFIT_SAME(cuda_context) MEMFIT_SAME(allocator_reserve)
  MEMFIT_SAME(all_logits) MEMFIT_SAME(torch_version) MEMFIT_SAME(transformers_version)
  MEMFIT_SAME(mamba_scan) MEMFIT_SAME(curve) MEMFIT_SAME(curve_gpus)
  return differ;
}
#undef MEMFIT_SAME

// `memfit validate` builds, from each row's settings, the request the CLI builds from the same
// flags (and its options through the same function), so a row is estimated as the command
// would estimate it.
TEST(RequestParity, ValidateBuildsTheCliRequestFromARow) {
  const std::string csv =
      "id,model,task,settings,measure,value,unit,source,notes\n"
      "t1,gpt2,train,method=lora(r16);batch=2;seq=256;optimizer=adamw-8bit;checkpointing=full;"
      "precision=fp16-mixed;grad_accum=4;attn=eager;strategy=zero2;foreach=false,"
      "max_memory_allocated,1000,MiB,validation/measure.py (torch 1.13.0a0; transformers 4.48.3),\n"
      "t2,gpt2,train,method=full;batch=3;seq=128;trainer=hf,nvml_used,2,GB,docs,\n"
      "i1,gpt2,inference,context=512;batch=4;decode=16;dtype=float16;attn=eager,"
      "max_memory_allocated,900,MiB,validation/measure.py (torch 2.5.1; transformers 4.48.3),\n";
  auto rows = ParseMeasuredCsv(csv, "parity.csv");
  ASSERT_TRUE(rows) << rows.error().message;
  ASSERT_EQ(rows->size(), 3u);

  RowPlan lora = PlanRow((*rows)[0]);
  ASSERT_TRUE(lora.unsupported.empty()) << lora.unsupported;
  ASSERT_TRUE(lora.train_request);
  auto cli_lora = cli::TrainRequestFromFlags(
      {"", "--method", "lora", "--lora-rank", "16", "--batch", "2", "--context", "256",
       "--optimizer", "adamw-8bit", "--checkpointing", "full", "--precision", "fp16-mixed",
       "--grad-accum", "4", "--attn", "eager", "--strategy", "zero2", "--no-foreach",
       "--torch-version", "1.13", "--transformers-version", "4.48"});
  ASSERT_TRUE(cli_lora) << cli_lora.error().message;
  EXPECT_EQ(Differ(*lora.train_request, *cli_lora), "");
  EXPECT_EQ(lora.train.lora.rank, 16u);
  EXPECT_EQ(lora.train.seq, 256u);
  EXPECT_EQ(lora.train.foreach_optimizer, std::optional<bool>(false));
  // A different word is a different request: the comparison can fail.
  cli_lora->lora_rank = 8;
  cli_lora->model.spec = "gpt2";
  EXPECT_EQ(Differ(*lora.train_request, *cli_lora), "model lora_rank");

  // HF Trainer rows of transformers' older docs: eager attention, kept gradients, no foreach;
  // an nvml reading: the allocator's reserve.
  RowPlan hf = PlanRow((*rows)[1]);
  ASSERT_TRUE(hf.train_request) << hf.unsupported;
  auto cli_hf = cli::TrainRequestFromFlags(
      {"", "--batch", "3", "--context", "128", "--attn", "eager", "--keep-grads", "--no-foreach",
       "--allocator-reserve", "0.1", "--torch-version", "2.5", "--transformers-version", "4.50"});
  ASSERT_TRUE(cli_hf) << cli_hf.error().message;
  EXPECT_EQ(Differ(*hf.train_request, *cli_hf), "");

  RowPlan inference = PlanRow((*rows)[2]);
  ASSERT_TRUE(inference.inference_request) << inference.unsupported;
  auto cli_inference = cli::InferenceRequestFromFlags(
      {"", "--context", "512", "--batch", "4", "--decoder-tokens", "16", "--dtype", "float16",
       "--attn", "eager", "--torch-version", "2.5", "--transformers-version", "4.48"});
  ASSERT_TRUE(cli_inference) << cli_inference.error().message;
  EXPECT_EQ(Differ(*inference.inference_request, *cli_inference), "");
  EXPECT_EQ(inference.inference.context_tokens, 512u);
  EXPECT_EQ(inference.inference.dtype, Dtype::kF16);
}

// CPU rows (validation/measure.py --device cpu): transformers' Mamba-2 mixers have no mamba_ssm
// kernels there, so the row is the request `--mamba-scan torch` makes.
TEST(RequestParity, CpuRowsTakeTheMamba2TorchPath) {
  const std::string csv =
      "id,model,task,settings,measure,value,unit,source,notes\n"
      "c1,m,inference,dtype=float32;batch=1;context=512;decode=4;attn=eager;device=cpu,"
      "max_memory_allocated,900,MiB,validation/measure.py (torch 1.13.0a0; transformers 4.48.3),\n"
      "c2,m,train,method=full;precision=fp32;optimizer=adamw;foreach=false;batch=1;seq=512;"
      "attn=eager;checkpointing=none;device=cpu,max_memory_allocated,900,MiB,"
      "validation/measure.py (torch 1.13.0a0; transformers 4.48.3),\n";
  auto rows = ParseMeasuredCsv(csv, "cpu.csv");
  ASSERT_TRUE(rows) << rows.error().message;
  RowPlan inference = PlanRow((*rows)[0]);
  ASSERT_TRUE(inference.inference_request) << inference.unsupported;
  auto cli_inference = cli::InferenceRequestFromFlags(
      {"", "--context", "512", "--batch", "1", "--decoder-tokens", "4", "--dtype", "float32",
       "--attn", "eager", "--torch-version", "1.13", "--transformers-version", "4.48",
       "--mamba-scan", "torch"});
  ASSERT_TRUE(cli_inference) << cli_inference.error().message;
  EXPECT_EQ(Differ(*inference.inference_request, *cli_inference), "");
  EXPECT_EQ(inference.inference.mamba2_scan, Mamba2Scan::kTorch);
  RowPlan train = PlanRow((*rows)[1]);
  ASSERT_TRUE(train.train_request) << train.unsupported;
  auto cli_train = cli::TrainRequestFromFlags(
      {"", "--precision", "fp32", "--optimizer", "adamw", "--no-foreach", "--batch", "1",
       "--context", "512", "--attn", "eager", "--torch-version", "1.13",
       "--transformers-version", "4.48", "--mamba-scan", "torch"});
  ASSERT_TRUE(cli_train) << cli_train.error().message;
  EXPECT_EQ(Differ(*train.train_request, *cli_train), "");
  EXPECT_EQ(train.train.mamba2_scan, std::optional<Mamba2Scan>(Mamba2Scan::kTorch));
  // Without the flag the request is another one.
  cli_train->mamba_scan.clear();
  EXPECT_EQ(Differ(*train.train_request, *cli_train), "mamba_scan");
  // A word the flag does not know is the flag's error.
  auto bad = cli::TrainRequestFromFlags({"", "--mamba-scan", "fast"});
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("--mamba-scan fast"), std::string::npos) << bad.error().message;
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit
