#include "cli/vocabulary.h"

namespace memfit::cli {

CLI::Option* AddContextOption(CLI::App& cmd, uint64_t& tokens, const std::string& help) {
  return cmd.add_option("-c,--context,--ctx-size,--ctx", tokens, help);
}

CLI::Option* AddBatchOption(CLI::App& cmd, uint64_t& sequences, const std::string& help) {
  return cmd.add_option("--batch", sequences, help);
}

}  // namespace memfit::cli
