#pragma once
// The command-line application: flags in, reports on stdout, one-line errors on stderr.
// Exit codes: 0 success, 1 bad input or failed estimate, 2 usage error, 3 internal error.

#include <iosfwd>
#include <string>
#include <vector>

#include "memfit/result.h"

namespace memfit::cli {

int Main(int argc, char** argv);
// Runs memfit with `args` (without the program name), writing to `out` and `err`: for tests.
int Run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
// The same, and the kind of the error reported when the exit code is 1 (memfit/result.h).
int Run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err,
        ErrorKind& error_kind);

}  // namespace memfit::cli
