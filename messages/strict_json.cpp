#include <epochrt/messages/strict_json.hpp>

#include <cerrno>
#include <cstring>
#include <memory>
#include <set>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace epochrt::strict_json {

void fail(std::string path, std::string what) {
  throw problem{std::move(path), std::move(what)};
}

std::string field_path(const std::string& path, const std::string& field) {
  return path.empty() ? field : path + "." + field;
}

std::string index_path(const std::string& path, size_t i) {
  return path + "[" + std::to_string(i) + "]";
}

std::string found(const json& x) {
  switch (x.type()) {
    case json::value_t::null:
      return "null";
    case json::value_t::boolean:
      return "a boolean";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
      return "an integer";
    case json::value_t::number_float:
      return "a number";
    case json::value_t::string:
      return "a string";
    case json::value_t::array:
      return "an array";
    case json::value_t::object:
      return "an object";
    default:
      return "an unsupported value";
  }
}

void wrong_type(const std::string& path, const char* expected, const json& x) {
  fail(path, std::string{"expected "} + expected + ", got " + found(x));
}

void check_fields(const json& obj, const std::string& path,
                  std::initializer_list<const char*> allowed) {
  for (auto& item : obj.items()) {
    bool known = false;
    std::string names;
    for (auto* name : allowed) {
      known = known || item.key() == name;
      names += (names.empty() ? "" : ", ") + std::string{name};
    }
    if (!known)
      fail(path,
           "unknown field '" + item.key() + "' (expected one of " + names
             + ")");
  }
}

const json& expect_object(const json& x, const std::string& path) {
  if (!x.is_object())
    wrong_type(path, "an object", x);
  return x;
}

const json* member(const json& obj, const char* field) {
  auto i = obj.find(field);
  return i != obj.end() ? &*i : nullptr;
}

const json& required(const json& obj, const std::string& path,
                     const char* field) {
  auto* x = member(obj, field);
  if (x == nullptr)
    fail(path, std::string{"missing required field '"} + field + "'");
  return *x;
}

std::string as_string(const json& x, const std::string& path) {
  if (!x.is_string())
    wrong_type(path, "a string", x);
  return x.get<std::string>();
}

int64_t as_int(const json& x, const std::string& path) {
  if (!x.is_number_integer())
    wrong_type(path, "an integer", x);
  if (x.is_number_unsigned()
      && x.get<uint64_t>()
        > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
    fail(path, "integer " + x.dump() + " is out of range");
  return x.get<int64_t>();
}

std::string describe(const problem& p) {
  return p.path.empty() ? p.what : p.path + ": " + p.what;
}

namespace {

// Line and column (1-based) of the character at `offset`.
std::pair<size_t, size_t> position(std::string_view text, size_t offset) {
  offset = std::min(offset, text.size());
  size_t line = 1;
  size_t column = 1;
  for (size_t i = 0; i < offset; ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return {line, column};
}

// The reason of a nlohmann parse error, without its id and position:
// "[json.exception.parse_error.101] parse error at line 3, column 5:
// syntax error while parsing ..." -> "while parsing ...".
std::string syntax_reason(const std::string& what) {
  auto reason = what;
  // "[json.exception.out_of_range.406] number overflow ...": no id.
  if (reason.rfind("[json.exception.", 0) == 0
      && reason.find("] ") != std::string::npos)
    reason = reason.substr(reason.find("] ") + 2);
  auto column = reason.find("column ");
  auto colon = reason.find(": ", column == std::string::npos ? 0 : column);
  if (colon != std::string::npos)
    reason = reason.substr(colon + 2);
  constexpr std::string_view prefix = "syntax error ";
  if (reason.compare(0, prefix.size(), prefix) == 0)
    reason = reason.substr(prefix.size());
  for (auto& c : reason) // one line, always
    if (c == '\n' || c == '\r')
      c = ' ';
  return reason;
}

} // namespace

std::optional<json> parse(std::string_view text, const std::string& source,
                          std::string& error) {
  // Duplicate keys are named by the path of the object they are in, like
  // every other problem.
  struct frame {
    bool array = false;
    size_t index = 0;
    std::string key;
    std::set<std::string> keys;
  };
  std::vector<frame> frames;
  std::string duplicate;
  std::string duplicate_in;
  auto element_done = [&] {
    if (!frames.empty() && frames.back().array)
      ++frames.back().index;
  };
  auto current_path = [&] {
    std::string path;
    for (size_t i = 0; i + 1 < frames.size(); ++i) {
      if (frames[i].array)
        path += "[" + std::to_string(frames[i].index) + "]";
      else
        path += (path.empty() ? "" : ".") + frames[i].key;
    }
    return path;
  };
  json::parser_callback_t on_event
    = [&](int, json::parse_event_t event, json& parsed) {
        switch (event) {
          case json::parse_event_t::object_start:
            frames.emplace_back();
            break;
          case json::parse_event_t::array_start:
            frames.emplace_back().array = true;
            break;
          case json::parse_event_t::object_end:
          case json::parse_event_t::array_end:
            if (!frames.empty())
              frames.pop_back();
            element_done();
            break;
          case json::parse_event_t::key:
            if (!frames.empty()) {
              auto& top = frames.back();
              top.key = parsed.get<std::string>();
              if (!top.keys.insert(top.key).second && duplicate.empty()) {
                duplicate = top.key;
                duplicate_in = current_path();
              }
            }
            break;
          case json::parse_event_t::value:
            element_done();
            break;
        }
        return true;
      };
  json root;
  try {
    root = json::parse(text.begin(), text.end(), on_event, true, true);
  } catch (const json::parse_error& ex) {
    auto offset = ex.byte > 0 ? ex.byte - 1 : 0;
    auto [line, column] = position(text, offset);
    error = source + ":" + std::to_string(line) + ":" + std::to_string(column)
      + ": syntax error: " + syntax_reason(ex.what());
    return std::nullopt;
  } catch (const json::exception& ex) {
    // A number beyond a double (1e999999) is out_of_range, not a
    // parse_error, and comes without a position.
    error = source + ": " + syntax_reason(ex.what());
    return std::nullopt;
  }
  if (!duplicate.empty()) {
    error = source + ": " + (duplicate_in.empty() ? "" : duplicate_in + ": ")
      + "duplicate field '" + duplicate + "'";
    return std::nullopt;
  }
  return root;
}

std::optional<std::string> read_file(const std::string& path,
                                     uint64_t max_bytes, const char* kind,
                                     std::string& error) {
  auto cannot_read = [&](int code) {
    error = path + ": cannot read: " + std::strerror(code);
    return std::nullopt;
  };
  // Non-blocking, so that a FIFO without a writer is refused, not waited on.
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0)
    return cannot_read(errno);
  std::unique_ptr<int, void (*)(int*)> closer{&fd, [](int* x) {
                                                ::close(*x);
                                              }};
  struct stat st {};
  if (::fstat(fd, &st) != 0)
    return cannot_read(errno);
  if (!S_ISREG(st.st_mode)) {
    error = path + ": not a regular file (" + kind + " is a JSON file)";
    return std::nullopt;
  }
  auto too_big = [&] {
    error = path + ": more than the " + std::to_string(max_bytes) + " bytes "
      + kind + " may have";
    return std::nullopt;
  };
  if (static_cast<uint64_t>(st.st_size) > max_bytes)
    return too_big();
  std::string text;
  char buf[65536];
  for (;;) {
    auto n = ::read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return cannot_read(errno);
    if (n == 0)
      break;
    // The file may grow while it is read.
    if (text.size() + static_cast<size_t>(n) > max_bytes)
      return too_big();
    text.append(buf, static_cast<size_t>(n));
  }
  return text;
}

} // namespace epochrt::strict_json
