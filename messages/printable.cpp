#include <epochrt/messages/printable.hpp>

#include <cstdint>
#include <cstdio>

namespace epochrt {

namespace {

void append_hex(std::string& out, const char* prefix, uint32_t value,
                int digits) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "%s%0*X", prefix, digits, value);
  out += buf;
}

// Code points outside ASCII that a terminal would not just draw.
bool is_hidden(uint32_t cp) {
  return (cp >= 0x80 && cp <= 0x9F) || cp == 0x2028 || cp == 0x2029
    || cp == 0x200E || cp == 0x200F || (cp >= 0x202A && cp <= 0x202E)
    || (cp >= 0x2066 && cp <= 0x2069) || cp == 0xFEFF;
}

// Length of the valid UTF-8 sequence at the start of `text` and its code
// point; 0 when it is not one (overlong, surrogate, beyond U+10FFFF, cut).
size_t decode(std::string_view text, uint32_t& cp) {
  auto byte = [&](size_t i) {
    return static_cast<uint8_t>(text[i]);
  };
  auto lead = byte(0);
  size_t size = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 0;
  if (size == 0 || lead > 0xF4 || text.size() < size)
    return 0;
  cp = lead & (0x7F >> size);
  for (size_t i = 1; i < size; ++i) {
    if ((byte(i) & 0xC0) != 0x80)
      return 0;
    cp = (cp << 6) | (byte(i) & 0x3F);
  }
  static constexpr uint32_t smallest[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < smallest[size] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
    return 0;
  return size;
}

} // namespace

std::string printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  while (!text.empty()) {
    auto c = static_cast<uint8_t>(text.front());
    if (c >= 0x20 && c < 0x7F) {
      out.push_back(static_cast<char>(c));
      text.remove_prefix(1);
      continue;
    }
    if (c < 0x80) {
      if (c == '\t')
        out += "\\t";
      else if (c == '\n')
        out += "\\n";
      else if (c == '\r')
        out += "\\r";
      else
        append_hex(out, "\\x", c, 2);
      text.remove_prefix(1);
      continue;
    }
    uint32_t cp = 0;
    auto size = decode(text, cp);
    if (size == 0) {
      append_hex(out, "\\x", c, 2);
      text.remove_prefix(1);
    } else if (is_hidden(cp)) {
      append_hex(out, "\\u", cp, 4);
      text.remove_prefix(size);
    } else {
      out.append(text.substr(0, size));
      text.remove_prefix(size);
    }
  }
  return out;
}

} // namespace epochrt
