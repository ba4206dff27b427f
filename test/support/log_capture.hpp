#pragma once

// Keeps every line epochrt logs in the actor systems configured with its
// options(), and still shows each on stderr.

#include <cstdio>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include <epochrt/logging.hpp>

namespace epochrt::test {

class log_capture {
public:
  /// Options for configure / configure_network: info and above, captured.
  /// The capture outlives every system configured with them.
  log_options options() const {
    log_options result;
    result.sink = [lines = lines_](log_level level, std::string_view line) {
      auto entry = std::string{"["} + name_of(level) + "] ";
      entry.append(line);
      entry += '\n';
      std::fputs(entry.c_str(), stderr);
      std::lock_guard<std::mutex> guard{lines->mtx};
      lines->text += entry;
    };
    return result;
  }

  /// Every line so far, as "[level] text\n".
  std::string text() const {
    std::lock_guard<std::mutex> guard{lines_->mtx};
    return lines_->text;
  }

private:
  static const char* name_of(log_level level) {
    switch (level) {
      case log_level::trace:
        return "trace";
      case log_level::debug:
        return "debug";
      case log_level::info:
        return "info";
      case log_level::warn:
        return "warn";
      case log_level::error:
        return "error";
      default:
        return "off";
    }
  }

  struct shared_lines {
    std::mutex mtx;
    std::string text;
  };
  std::shared_ptr<shared_lines> lines_ = std::make_shared<shared_lines>();
};

} // namespace epochrt::test
