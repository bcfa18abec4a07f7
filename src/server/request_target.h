#pragma once
// The request target ("/path?query") taken apart the way the router expects it: the path
// percent-decoded, the query split into decoded key/value pairs (application/x-www-form-urlencoded:
// '+' is a space there, not in the path). Pure; every byte is the client's.

#include <map>
#include <string>
#include <string_view>

namespace memfit::server {

struct RequestTarget {
  std::string path;                                // decoded, without the query
  std::multimap<std::string, std::string> params;  // decoded query; "k" alone is k = ""
};

// "%41" is 'A'; a '%' not followed by two hex digits stays as it is. `plus_is_space` for queries.
std::string PercentDecode(std::string_view text, bool plus_is_space);

RequestTarget ParseRequestTarget(std::string_view target);

}  // namespace memfit::server
