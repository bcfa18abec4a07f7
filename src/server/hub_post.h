#pragma once
// "Post to the Hub": creates a discussion on the model's repository through the Hub API
// (POST {HF_ENDPOINT}/api/models/{id}/discussions), after the page has shown the user the exact
// text. Never posts twice for the same model and revision: it checks the repository's existing
// discussions and keeps a record of what this server posted.

#include <string>

#include "memfit/result.h"

namespace memfit::server {

struct DiscussionRequest {
  std::string model;     // Hub id
  std::string revision = "main";
  std::string title{};
  std::string description;  // Markdown, exactly as shown to the user
  std::string token{};      // never logged, never stored
};

struct DiscussionResult {
  std::string url;  // the discussion's page
};

// `endpoint`: HF_ENDPOINT or https://huggingface.co. `record_path`: file of "model@revision" lines.
Result<DiscussionResult> PostDiscussion(const DiscussionRequest& request, const std::string& endpoint,
                                        const std::string& record_path);

}  // namespace memfit::server
