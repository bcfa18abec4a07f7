// The WebAssembly engine's C entry points (site/engine.mjs wraps them): RunApi, the API's
// body -> answer function, and the environment the Hub client reads (HF_ENDPOINT, HF_TOKEN,
// HF_HUB_OFFLINE, MEMFIT_CACHE, ...). Nothing here computes: every answer is RunApi's.

#include <emscripten.h>

#include <cstdlib>
#include <cstring>
#include <exception>
#include <new>
#include <string>

#include "memfit/api.h"

namespace {

memfit::ApiReply last_reply;

}  // namespace

extern "C" {

// Answers `command` for the JSON `body` exactly as POST /api/v1/<command> does; local paths
// (files the page mounted: dropped or picked, never uploaded) only when `allow_local_paths`. The
// answer stays valid until the next call.
EMSCRIPTEN_KEEPALIVE const char* memfit_run(const char* command, const char* body,
                                            int allow_local_paths) {
  // The one catch-all of this entry point (like the server's per handler): an allocation past the
  // heap's limit (-sMAXIMUM_MEMORY) fails this request only, and the engine keeps answering.
  try {
    last_reply = memfit::RunApi(command, body, memfit::OutputFormat::kJson,
                                memfit::ApiSettings{.allow_local_paths = allow_local_paths != 0});
  } catch (const std::bad_alloc&) {
    last_reply = {422, R"({"error": "out of memory: the request needs more than the engine's heap limit"})",
                  "bad_input"};
  } catch (const std::exception&) {
    last_reply = {422, R"({"error": "internal error"})", "bad_input"};
  }
  return last_reply.body.c_str();
}

EMSCRIPTEN_KEEPALIVE int memfit_last_status() { return last_reply.status; }

EMSCRIPTEN_KEEPALIVE const char* memfit_last_error_kind() { return last_reply.error_kind.c_str(); }

// Sets (or, with a null or empty value, removes) an environment variable the library reads.
EMSCRIPTEN_KEEPALIVE void memfit_set_env(const char* name, const char* value) {
  if (value == nullptr || *value == '\0') {
    unsetenv(name);
  } else {
    setenv(name, value, 1);
  }
}

}  // extern "C"
