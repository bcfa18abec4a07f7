#pragma once
// How wide the CLI's tables may be: COLUMNS, else the terminal's width when stdout is one, else
// 100; --wide lifts the limit (and shows rows of zero bytes).

#include <CLI/CLI.hpp>

#include "memfit/render.h"

namespace memfit::cli {

// `columns`: COLUMNS's value (nullptr when unset); `tty_columns`: the terminal's width, 0 when
// stdout is not a terminal.
TextLayout LayoutFor(bool wide, const char* columns, size_t tty_columns);
// The layout of this process's stdout.
TextLayout TerminalLayout(bool wide);
// --wide, bound to `wide`.
void AddWideFlag(CLI::App& command, bool& wide);

}  // namespace memfit::cli
