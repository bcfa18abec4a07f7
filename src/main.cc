// memfit's entry point: everything happens in cli::Main; this is the one catch-all for exceptions.

#include <cstdio>
#include <exception>

#include "cli/app.h"

int main(int argc, char** argv) {
  try {
    return memfit::cli::Main(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "memfit: internal error: %s\n", e.what());
    return 3;
  } catch (...) {
    std::fprintf(stderr, "memfit: internal error\n");
    return 3;
  }
}
