// API tests against the running server on a loopback port.

#include "server/server.h"

#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include "cli/app.h"
#include "server/hub_post.h"
#include "api/request_json.h"
#include "server/web_assets.h"
#include "test_support.h"

namespace memfit::server {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

class ServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = std::make_unique<Server>(ServerOptions{.port = 0, .max_body_bytes = 4096});
    auto port = server_->Bind();
    ASSERT_TRUE(port) << port.error().message;
    port_ = *port;
    thread_ = std::thread([this] { server_->Listen(); });
  }
  void TearDown() override {
    server_->Stop();
    thread_.join();
  }
  httplib::Client Client() { return httplib::Client("127.0.0.1", port_); }

  std::unique_ptr<Server> server_;
  std::thread thread_;
  int port_ = 0;
};

std::string CliJson(std::vector<std::string> args) {
  std::ostringstream out, err;
  EXPECT_EQ(cli::Run(args, out, err), 0) << err.str();
  return out.str();
}

TEST_F(ServerTest, EstimateMemoryIsTheCliJson) {
  auto client = Client();
  auto res = client.Post("/api/v1/estimate-memory", R"({"model": "meta-llama/Llama-3.2-1B", "dtypes": ["float16", "int4"]})",
                         "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->body, CliJson({"estimate-memory", "meta-llama/Llama-3.2-1B", "--dtypes", "float16",
                                "--dtypes", "int4", "--format", "json"}));
  // A second identical request is served from the cache, identically.
  auto again = client.Post("/api/v1/estimate-memory", R"({"model": "meta-llama/Llama-3.2-1B", "dtypes": ["float16", "int4"]})",
                           "application/json");
  ASSERT_TRUE(again);
  EXPECT_EQ(again->body, res->body);
}

TEST_F(ServerTest, ErrorsAreJsonWithStatusCodes) {
  auto client = Client();
  // Not local, not in the catalog, and the Hub (a closed port in tests) could not be asked: the
  // error's kind is "unavailable", so 503 (try again), not 404 (it may exist on the Hub).
  auto missing = client.Post("/api/v1/estimate-memory", R"({"model": "nobody/nothing"})", "application/json");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 503);
  EXPECT_NE(nlohmann::json::parse(missing->body)["error"].get<std::string>().find("model not found"),
            std::string::npos);
  auto bad_json = client.Post("/api/v1/estimate-memory", "{nope", "application/json");
  ASSERT_TRUE(bad_json);
  EXPECT_EQ(bad_json->status, 400);
  auto bad_option = client.Post("/api/v1/estimate-memory", R"({"model": "Llama-3.2-1B", "dtypes": ["float7"]})",
                                "application/json");
  ASSERT_TRUE(bad_option);
  EXPECT_EQ(bad_option->status, 422);
  EXPECT_NE(bad_option->body.find("float7"), std::string::npos);
  auto local = client.Post("/api/v1/inspect", R"({"model": "/etc"})", "application/json");
  ASSERT_TRUE(local);
  EXPECT_EQ(local->status, 400);
  auto refused = client.Post("/api/v1/models", R"({"export_configs": "/tmp/x"})", "application/json");
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 400);
  auto unknown = client.Post("/api/v1/rm-rf", "{}", "application/json");
  ASSERT_TRUE(unknown);
  EXPECT_EQ(unknown->status, 400);
  auto too_big = client.Post("/api/v1/estimate-memory", std::string(8192, ' '), "application/json");
  ASSERT_TRUE(too_big);
  EXPECT_EQ(too_big->status, 413);
  // The transport's own answers (413 here) carry a JSON error too; a method the router does not
  // serve is its 405 (httplib, before the Beast transport, answered 404 for a method without routes).
  EXPECT_EQ(nlohmann::json::parse(too_big->body)["error"], "request body too large");
  auto put = client.Put("/api/v1/estimate-memory", "{}", "application/json");
  ASSERT_TRUE(put);
  EXPECT_EQ(put->status, 405);
  EXPECT_EQ(nlohmann::json::parse(put->body)["error"], "method PUT not allowed");
  auto unrouted = client.Post("/nowhere", "{}", "application/json");
  ASSERT_TRUE(unrouted);
  EXPECT_EQ(unrouted->status, 404);
  EXPECT_EQ(nlohmann::json::parse(unrouted->body)["error"], "not found: /nowhere");
}

TEST_F(ServerTest, ServesOnlyEmbeddedFiles) {
  auto client = Client();
  auto index = client.Get("/");
  ASSERT_TRUE(index);
  EXPECT_EQ(index->status, 200);
  EXPECT_NE(index->body.find("<html"), std::string::npos);
  for (const char* path : {"/../CMakeLists.txt", "/%2e%2e/%2e%2e/etc/passwd", "/src/main.cc", "/web/app.js"}) {
    auto res = client.Get(path);
    ASSERT_TRUE(res) << path;
    EXPECT_EQ(res->status, 404) << path;
  }
  for (const auto& asset : WebAssets()) {
    auto res = client.Get(std::string(asset.path));
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 200) << asset.path;
    if (asset.path != "/index.html") {
      EXPECT_EQ(res->body, asset.body) << asset.path;
    }
  }
  // The page carries the GPU catalog where index.html says <!--memfit:gpus-->: each GPU of GET
  // gpus with its name, vendor and memory, in a JSON script element.
  auto gpus = client.Get("/api/v1/gpus");
  ASSERT_TRUE(gpus);
  const auto full = nlohmann::json::parse(gpus->body);
  EXPECT_EQ(index->body.find("<!--memfit:gpus-->"), std::string::npos);
  const std::string open = "<script type=\"application/json\" id=\"gpu-list\">";
  const size_t at = index->body.find(open);
  ASSERT_NE(at, std::string::npos);
  const size_t end = index->body.find("</script>", at);
  const auto embedded = nlohmann::json::parse(index->body.substr(at + open.size(), end - at - open.size()));
  ASSERT_EQ(embedded["gpus"].size(), full["gpus"].size());
  for (size_t i = 0; i < full["gpus"].size(); ++i) {
    EXPECT_EQ(embedded["gpus"][i]["name"], full["gpus"][i]["name"]);
    EXPECT_EQ(embedded["gpus"][i]["vendor"], full["gpus"][i]["vendor"]);
    EXPECT_EQ(embedded["gpus"][i]["memory_bytes"], full["gpus"][i]["memory_bytes"]);
  }
}

// A query string that is not valid UTF-8 is a client error, never an internal one.
TEST_F(ServerTest, InvalidUtf8QueryIsNotAnInternalError) {
  auto client = Client();
  auto res = client.Get("/api/v1/models?family=%FF%FE");
  ASSERT_TRUE(res);
  EXPECT_NE(res->status, 500) << res->body;
  EXPECT_TRUE(nlohmann::json::accept(res->body)) << res->body;
}

TEST_F(ServerTest, ModelsListMatchesCli) {
  auto client = Client();
  auto res = client.Get("/api/v1/models");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->body, CliJson({"models", "--format", "json"}));
}

// A minimal JSON Schema check (type, required, properties, items, $ref) of a response against
// docs/openapi.json: enough to keep the document and the server honest with each other.
class OpenApi {
 public:
  OpenApi() {
    auto text = testing::ReadFile(std::string(MEMFIT_SOURCE_DIR) + "/docs/openapi.json");
    EXPECT_TRUE(text);
    doc_ = nlohmann::json::parse(*text);
  }
  const nlohmann::json& Resolve(const nlohmann::json& node) const {
    if (!node.contains("$ref")) return node;
    std::string ref = node["$ref"].get<std::string>().substr(2);  // "#/..."
    return Resolve(doc_.at(nlohmann::json::json_pointer("/" + ref)));
  }
  const nlohmann::json& doc() const { return doc_; }
  const nlohmann::json& ResponseSchema(const std::string& path, const std::string& method, int status) const {
    const auto& response = Resolve(doc_["paths"][path][method]["responses"][std::to_string(status)]);
    return Resolve(response["content"]["application/json"]["schema"]);
  }
  void Check(const nlohmann::json& value, const nlohmann::json& schema_node, const std::string& where) const {
    const auto& schema = Resolve(schema_node);
    if (schema.contains("type")) {
      std::string type = schema["type"];
      bool ok = (type == "object" && value.is_object()) || (type == "array" && value.is_array()) ||
                (type == "string" && value.is_string()) || (type == "boolean" && value.is_boolean()) ||
                (type == "integer" && (value.is_number_integer() || value.is_number_unsigned())) ||
                (type == "number" && value.is_number());
      EXPECT_TRUE(ok) << where << ": expected " << type << ", got " << value.type_name();
      if (!ok) return;
    }
    for (const auto& r : schema.value("required", nlohmann::json::array())) {
      EXPECT_TRUE(value.contains(r.get<std::string>())) << where << ": missing " << r;
    }
    if (schema.contains("properties") && value.is_object()) {
      for (const auto& [key, sub] : schema["properties"].items()) {
        if (value.contains(key)) Check(value[key], sub, where + "." + key);
      }
    }
    if (schema.contains("items") && value.is_array()) {
      for (size_t i = 0; i < value.size() && i < 50; ++i) Check(value[i], schema["items"], where + "[]");
    }
  }

 private:
  nlohmann::json doc_;
};

TEST_F(ServerTest, ResponsesFollowTheOpenApiDocument) {
  OpenApi spec;
  auto client = Client();
  auto estimate = client.Post("/api/v1/estimate-memory", R"({"model": "meta-llama/Llama-3.2-1B"})", "application/json");
  ASSERT_TRUE(estimate);
  spec.Check(nlohmann::json::parse(estimate->body), spec.ResponseSchema("/estimate-memory", "post", 200), "estimate");
  auto inspect = client.Post("/api/v1/inspect", R"({"model": "meta-llama/Llama-3.2-1B"})", "application/json");
  ASSERT_TRUE(inspect);
  spec.Check(nlohmann::json::parse(inspect->body), spec.ResponseSchema("/inspect", "post", 200), "inspect");
  auto models = client.Get("/api/v1/models");
  ASSERT_TRUE(models);
  spec.Check(nlohmann::json::parse(models->body), spec.ResponseSchema("/models", "get", 200), "models");
  auto missing = client.Post("/api/v1/estimate-memory", R"({"model": "nobody/nothing"})", "application/json");
  ASSERT_TRUE(missing);
  spec.Check(nlohmann::json::parse(missing->body), spec.ResponseSchema("/estimate-memory", "post", 404), "error");
}

// docs/openapi.json's request bodies are the server's field tables: every key the parser reads
// (aliases included, with its value type), nothing else (additionalProperties: false). On a
// difference the message prints the server's schema, which is what the document should say.
// MEMFIT_WRITE_OPENAPI=1 rewrites docs/openapi.json's request schemas (and GET /gpus, /models
// query parameters) from the option table; review the diff like any other change.
void WriteOpenApiSchemas(const nlohmann::json& generated) {
  const std::string path = std::string(MEMFIT_SOURCE_DIR) + "/docs/openapi.json";
  nlohmann::ordered_json doc = nlohmann::ordered_json::parse(*testing::ReadFile(path));
  for (const auto& [name, schema] : generated.items()) {
    doc["components"]["schemas"][name] = nlohmann::ordered_json::parse(schema.dump());
  }
  for (const auto& [route, name] : std::vector<std::pair<std::string, std::string>>{
           {"/gpus", "GpusRequest"}, {"/models", "ModelsRequest"}}) {
    nlohmann::ordered_json parameters = nlohmann::ordered_json::array();
    for (const auto& [key, property] : generated[name]["properties"].items()) {
      parameters.push_back({{"name", key}, {"in", "query"}, {"required", false},
                            {"schema", nlohmann::ordered_json::parse(property.dump())}});
    }
    doc["paths"][route]["get"]["parameters"] = parameters;
  }
  std::ofstream(path) << doc.dump(2) << "\n";
}

TEST(OpenApiDocument, RequestBodiesAreTheServersFieldTables) {
  const nlohmann::json generated = api::RequestBodySchemas();
  if (std::getenv("MEMFIT_WRITE_OPENAPI")) WriteOpenApiSchemas(generated);
  OpenApi spec;
  ASSERT_EQ(generated.size(), 7u);
  for (const auto& [name, schema] : generated.items()) {
    EXPECT_EQ(spec.doc()["components"]["schemas"][name], schema)
        << name << " in docs/openapi.json differs from the server's:\n" << schema.dump();
  }
  const std::vector<std::pair<std::string, std::string>> bodies = {
      {"/estimate-memory", "LoadRequest"}, {"/inference", "InferenceRequest"},
      {"/train", "TrainRequest"},          {"/fit", "FitRequest"},
      {"/inspect", "InspectRequest"},      {"/gpus", "GpusRequest"},
      {"/models", "ModelsRequest"}};
  for (const auto& [path, name] : bodies) {
    const auto& post = spec.doc()["paths"][path]["post"];
    ASSERT_TRUE(post.is_object()) << "no POST " << path;
    EXPECT_EQ(post["requestBody"]["content"]["application/json"]["schema"]["$ref"],
              "#/components/schemas/" + name)
        << path;
  }
  // GET /models and /gpus take the same keys as query parameters.
  for (const auto& [path, name] : std::vector<std::pair<std::string, std::string>>{
           {"/gpus", "GpusRequest"}, {"/models", "ModelsRequest"}}) {
    std::set<std::string> documented;
    for (const auto& p : spec.doc()["paths"][path]["get"].value("parameters", nlohmann::json::array())) {
      EXPECT_EQ(p["in"], "query") << path;
      documented.insert(p["name"].get<std::string>());
    }
    std::set<std::string> accepted;
    for (const auto& [key, unused] : generated[name]["properties"].items()) accepted.insert(key);
    EXPECT_EQ(documented, accepted) << "GET " << path << " query parameters";
  }
}

// The documented body schemas reject what the server rejects and accept what it accepts: every
// property of each schema is a key the parser takes, and an unknown key is refused.
TEST(OpenApiDocument, DocumentedKeysAreAcceptedAndOthersRefused) {
  const nlohmann::json generated = api::RequestBodySchemas();
  // A value of each option's kind, from the option table (a choice must be one of its values).
  std::map<std::string, nlohmann::json> good;
  const nlohmann::json table = api::OptionTable();  // alive for the loop (a temporary's member is not)
  for (const auto& o : table["commands"]["inference"]) {
    const std::string type = o["type"];
    nlohmann::json v = type == "count"    ? nlohmann::json(1)
                       : type == "number" ? nlohmann::json(0.5)
                       : type == "flag"   ? nlohmann::json(true)
                       : type == "size"   ? nlohmann::json("24GiB")
                       : type == "gpu" || type == "gpus" ? nlohmann::json("h100")
                       : !o["choices"].empty() ? o["choices"][0]
                                               : nlohmann::json("x");
    if (o["name"] == "torch-version") v = "2.5";
    if (o["name"] == "transformers-version") v = "4.48";
    good[o["name"]] = v;
    for (const auto& alias : o["aliases"]) good[alias] = v;
  }
  for (const auto& [key, value] : generated["InferenceRequest"]["properties"].items()) {
    if (key == "model") continue;
    nlohmann::json body = {{"model", "meta-llama/Llama-3.2-1B"}};
    ASSERT_TRUE(good.count(key)) << key;
    body[key] = good[key];
    auto request = api::InferenceRequestFromJson(body);
    EXPECT_TRUE(request.has_value()) << key << ": " << request.error().message;
  }
  EXPECT_FALSE(api::InferenceRequestFromJson({{"model", "m"}, {"no-such-option", 1}}).has_value());
  EXPECT_FALSE(api::GpusRequestFromJson({{"no-such-option", 1}}).has_value());
}

// A fake Hub for "Post to the Hub": lists discussions and records the one created.
TEST(HubPost, PostsOnceAndNeverTwice) {
  httplib::Server hub;
  std::vector<std::string> created;
  std::string seen_auth;
  hub.Get("/api/models/acme/tiny/discussions", [&](const httplib::Request&, httplib::Response& res) {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& t : created) list.push_back({{"title", t}});
    res.set_content(nlohmann::json{{"discussions", list}}.dump(), "application/json");
  });
  hub.Post("/api/models/acme/tiny/discussions", [&](const httplib::Request& req, httplib::Response& res) {
    seen_auth = req.get_header_value("Authorization");
    created.push_back(nlohmann::json::parse(req.body)["title"]);
    res.set_content(R"({"num": 7})", "application/json");
  });
  int port = hub.bind_to_any_port("127.0.0.1");
  std::thread t([&] { hub.listen_after_bind(); });
  std::string endpoint = "http://127.0.0.1:" + std::to_string(port);
  std::string record = testing::TempDir() + "/posted.txt";
  DiscussionRequest request{.model = "acme/tiny", .title = "[memfit] Model memory requirements",
                            .description = "| dtype | Load |", .token = "hf_secret"};
  auto first = PostDiscussion(request, endpoint, record);
  ASSERT_TRUE(first) << first.error().message;
  EXPECT_EQ(first->url, endpoint + "/acme/tiny/discussions/7");
  EXPECT_EQ(seen_auth, "Bearer hf_secret");
  auto second = PostDiscussion(request, endpoint, record);
  ASSERT_FALSE(second);
  EXPECT_NE(second.error().message.find("already"), std::string::npos);
  EXPECT_EQ(second.error().message.find("hf_secret"), std::string::npos);
  // Even without the local record, the Hub's own list prevents a duplicate.
  auto third = PostDiscussion(request, endpoint, testing::TempDir() + "/other.txt");
  ASSERT_FALSE(third);
  EXPECT_EQ(created.size(), 1u);
  auto no_token = PostDiscussion({.model = "acme/tiny", .description = "x"}, endpoint, record);
  EXPECT_FALSE(no_token);
  hub.stop();
  t.join();
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit::server
