// The public headers (include/memfit/) are the library's interface: they name no JSON library
// (issue 18), and include only each other, the standard library and {fmt} (result.h's MakeError
// takes fmt format strings), so that a library user's build needs nothing else. Internal headers
// (src/) may use nlohmann::json.

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace fs = std::filesystem;

namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

std::vector<fs::path> PublicHeaders() {
  std::vector<fs::path> out;
  for (const auto& entry : fs::directory_iterator(fs::path(MEMFIT_SOURCE_DIR) / "include" / "memfit")) {
    if (entry.path().extension() == ".h") out.push_back(entry.path());
  }
  return out;
}

std::string Read(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(PublicHeaders, NameNoJsonLibrary) {
  const auto headers = PublicHeaders();
  ASSERT_GT(headers.size(), 20u);
  for (const auto& h : headers) {
    const std::string text = Read(h);
    EXPECT_EQ(text.find("nlohmann"), std::string::npos) << h.filename() << " names nlohmann";
    EXPECT_EQ(text.find("simdjson"), std::string::npos) << h.filename() << " names simdjson";
  }
}

TEST(PublicHeaders, IncludeOnlyMemfitAndStandardHeaders) {
  // <...> includes must be standard library headers (no dot, no slash: <vector>, <cstdint>) or
  // {fmt}'s;
  // "..." includes must be other public headers.
  const std::regex include_line(R"(^\s*#\s*include\s*([<"])([^>"]+)[>"])");
  for (const auto& h : PublicHeaders()) {
    std::istringstream lines(Read(h));
    std::string line;
    while (std::getline(lines, line)) {
      std::smatch m;
      if (!std::regex_search(line, m, include_line)) continue;
      const std::string path = m[2];
      if (m[1] == "<") {
        if (path.rfind("fmt/", 0) == 0) continue;
        EXPECT_EQ(path.find_first_of("./"), std::string::npos)
            << h.filename() << " includes a non-standard header <" << path << ">";
      } else {
        EXPECT_EQ(path.rfind("memfit/", 0), 0u)
            << h.filename() << " includes an internal header \"" << path << "\"";
      }
    }
  }
}

}  // namespace MEMFIT_TU
}  // namespace
