#pragma once

#include <string>
#include <string_view>

namespace epochrt {

/// `text` made safe to write to a terminal or a log line: printable ASCII
/// and valid UTF-8 pass unchanged; every other byte becomes `\xNN`, and
/// code points that move the cursor, end a line or reorder text (C0 and C1
/// controls, DEL, U+2028, U+2029, bidirectional controls, U+FEFF) become
/// `\t`, `\n`, `\r`, `\xNN` or `\uNNNN`. Idempotent: its output passes
/// through unchanged. For text that came from a file or a peer.
std::string printable(std::string_view text);

} // namespace epochrt
