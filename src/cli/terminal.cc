// The CLI's table width (cli/terminal.h).

#include "cli/terminal.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <cstring>

namespace memfit::cli {

constexpr size_t kDefaultColumns = 100;  // not a terminal, no COLUMNS
constexpr size_t kMinColumns = 40;       // narrower than this is not worth fitting

TextLayout LayoutFor(bool wide, const char* columns, size_t tty_columns) {
  TextLayout layout{.width = kDefaultColumns, .wide = wide};
  size_t parsed = 0;
  if (columns && *columns) {
    const char* end = columns + std::strlen(columns);
    auto [ptr, ec] = std::from_chars(columns, end, parsed);
    if (ec != std::errc() || ptr != end) parsed = 0;
  }
  if (parsed > 0) layout.width = parsed;
  else if (tty_columns > 0) layout.width = tty_columns;
  layout.width = std::max(layout.width, kMinColumns);
  return layout;
}

TextLayout TerminalLayout(bool wide) {
  size_t tty = 0;
  winsize size{};
  if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) == 0) tty = size.ws_col;
  return LayoutFor(wide, std::getenv("COLUMNS"), tty);
}

void AddWideFlag(CLI::App& command, bool& wide) {
  command.add_flag("--wide", wide,
                   "tables: every column and every row (rows of zero bytes too), whatever the "
                   "terminal's width (COLUMNS, else the terminal's, else 100)");
}

}  // namespace memfit::cli
