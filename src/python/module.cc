// memfit._memfit: the C++ half of the Python module memfit (python/memfit/). It adds no behaviour of
// its own: run_api is memfit::RunApi (memfit/api.h) with local paths allowed, options_json the
// option table the keywords are checked against, main the CLI's entry (python3 -m memfit). The GIL
// is released while a request runs, so threads describing models run in parallel.

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "cli/app.h"
#include "memfit/api.h"
#include "memfit/render.h"

namespace py = pybind11;

namespace {

// (status, body, error_kind): body as bytes, which Python decodes (a file's names need not be
// UTF-8).
py::tuple RunApiForPython(const std::string& command, const std::string& json_body,
                          const std::string& format) {
  auto output_format = memfit::ParseOutputFormat(format);
  if (!output_format) throw py::value_error(output_format.error().message);
  memfit::ApiReply reply;
  {
    py::gil_scoped_release release;
    reply = memfit::RunApi(command, json_body, *output_format,
                           memfit::ApiSettings{.allow_local_paths = true});
  }
  return py::make_tuple(reply.status, py::bytes(reply.body), reply.error_kind, reply.fits);
}

// The CLI on the process's stdout and stderr: memfit's exit code.
int CliMain(const std::vector<std::string>& args) {
  std::vector<std::string> argv_strings{"memfit"};
  argv_strings.insert(argv_strings.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& s : argv_strings) argv.push_back(s.data());
  argv.push_back(nullptr);
  py::gil_scoped_release release;
  try {
    int code = memfit::cli::Main(static_cast<int>(argv_strings.size()), argv.data());
    std::cout.flush();
    std::cerr.flush();
    std::fflush(stdout);
    return code;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "memfit: internal error: %s\n", e.what());
    return 3;
  }
}

}  // namespace

PYBIND11_MODULE(_memfit, m) {
  m.doc() = "memfit's request layer (memfit::RunApi); use the package memfit, not this module";
  m.attr("__version__") = MEMFIT_VERSION;
  m.def("run_api", &RunApiForPython, py::arg("command"), py::arg("json_body"),
        py::arg("format") = "json",
        "RunApi(command, json_body, format) with local paths allowed: (status, body bytes, "
        "error_kind, fits). The GIL is released while it runs.");
  m.def("options_json", &memfit::ApiOptionsJson, "The option table as JSON (memfit/api.h).");
  m.def("commands", &memfit::ApiCommands, "The commands run_api answers.");
  m.def("main", &CliMain, py::arg("args"),
        "Runs the memfit CLI with args (no program name) on this process's stdout/stderr; "
        "returns its exit code.");
}
