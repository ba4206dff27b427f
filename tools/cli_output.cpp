#include "tools/cli_output.hpp"

#include <iostream>

#include <caf/error.hpp>
#include <caf/sec.hpp>

#include "actors/actors_errc.hpp"
#include "messages/codec_errc.hpp"
#include "persistence/persistence_errc.hpp"
#include "runtime/runtime_errc.hpp"

namespace epochrt::cli {

std::string one_line(std::string_view text) {
  std::string result;
  result.reserve(text.size());
  for (char c : text)
    result += (c == '\n' || c == '\r') ? ' ' : c;
  while (!result.empty() && (result.back() == ' ' || result.back() == '\t'))
    result.pop_back();
  return result;
}

void print_error(std::string_view text) {
  // Flush stdout first so that, on a terminal, results printed so far come
  // before the error that ends them.
  std::cout.flush();
  std::cerr << "epochrt: error: " << one_line(text) << std::endl;
}

std::string describe(const caf::error& err) {
  if (!err)
    return {};
  // The code's name tells a script's reader the kind of failure ("corrupt",
  // "not_found"); the context, made by the layer that failed, the details.
  std::string code;
  auto cat = err.category();
  if (cat == codec_category)
    code = to_string(static_cast<codec_errc>(err.code()));
  else if (cat == runtime_category)
    code = to_string(static_cast<runtime_errc>(err.code()));
  else if (cat == persistence_category)
    code = to_string(static_cast<persistence_errc>(err.code()));
  else if (cat == actors_category)
    code = to_string(static_cast<actors_errc>(err.code()));
  else if (cat == caf::atom("system"))
    code = to_string(static_cast<caf::sec>(err.code()));
  else
    return one_line(caf::to_string(err));
  const auto& ctx = err.context();
  std::string detail;
  if (ctx.size() == 1 && ctx.match_element<std::string>(0))
    detail = ctx.get_as<std::string>(0);
  else if (!ctx.empty())
    detail = caf::to_string(ctx);
  return one_line(detail.empty() ? code : code + ": " + detail);
}

} // namespace epochrt::cli
