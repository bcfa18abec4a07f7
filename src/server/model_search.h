#pragma once
// GET /api/v1/hub/models?search=<text>: model ids from the Hub's own search (GET
// {HF_ENDPOINT}/api/models?search=...), for the page's model box. The server asks the Hub with its
// HTTP client (src/hub/net): the server's token, if any, goes to the Hub's host only and never into
// the answer, which holds only public listing fields.

#include <map>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "memfit/result.h"
#include "api/body.h"

namespace memfit::server {
using api::ApiResponse;
using api::ErrorResponse;

// Most results asked of the Hub and returned; longest search text accepted.
inline constexpr int kHubSearchLimit = 20;
inline constexpr size_t kHubSearchMaxChars = 96;

// "{endpoint}/api/models?search=<percent-encoded text>&limit=20&sort=downloads&direction=-1".
std::string HubSearchUrl(std::string_view endpoint, std::string_view text);

// The Hub's answer (a JSON array of model objects) -> [{id, downloads, likes, pipeline_tag}],
// at most kHubSearchLimit entries; entries without a string "id" are skipped; a missing or
// non-numeric count is 0, a missing tag "". An answer that is not a JSON array is an error.
Result<nlohmann::json> ParseHubModelList(std::string_view body);

// The route: `params` is the decoded query ("search"). 400 for a missing, overlong or multi-line
// text or an offline server; 502 when the Hub cannot be asked or answers badly; else 200 with
// {"models": [...]}.
ApiResponse SearchHubModels(const std::multimap<std::string, std::string>& params);

}  // namespace memfit::server
