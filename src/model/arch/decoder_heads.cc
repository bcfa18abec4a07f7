#include "model/arch/decoder_heads.h"

#include <cstdio>
#include <string>

#include "formats/hf_config_json.h"

namespace memfit::arch {

bool TransformersVersionBefore(const HfConfig& c, int major, int minor) {
  const auto it = c.raw().find("transformers_version");
  if (it == c.raw().end() || !it->is_string()) return false;
  int got_major = 0, got_minor = 0;
  if (std::sscanf(it->get_ref<const std::string&>().c_str(), "%d.%d", &got_major, &got_minor) !=
      2) {
    return false;
  }
  return got_major < major || (got_major == major && got_minor < minor);
}

}  // namespace memfit::arch
