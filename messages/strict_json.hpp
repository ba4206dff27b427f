#pragma once

// Strictly checked JSON documents: the shared machinery of job files
// (runtime/) and fault plans (faults/). Internal to epochrt: not
// installed, so nlohmann's JSON stays out of the public headers. Every
// problem is one line naming the source and the field,
// e.g. "plan.json: faults[2].hit: expected an integer, got a string".

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace epochrt::strict_json {

using json = nlohmann::json;

/// The first problem found while checking a parsed document, at `path`
/// ("faults[2].hit"; empty for the top level). Thrown by the helpers below
/// to unwind a recursive descent; the parser that called them catches it
/// and turns it into an error value. Never escapes a public function.
struct problem {
  std::string path;
  std::string what;
};

[[noreturn]] void fail(std::string path, std::string what);

/// "a.b" from "a" and "b"; "b" from "" and "b".
std::string field_path(const std::string& path, const std::string& field);

/// "a[3]".
std::string index_path(const std::string& path, size_t i);

/// What `x` is, for messages: "a string", "an integer", "null", ...
std::string found(const json& x);

[[noreturn]] void wrong_type(const std::string& path, const char* expected,
                             const json& x);

/// Fails on a member of `obj` whose name is not in `allowed`.
void check_fields(const json& obj, const std::string& path,
                  std::initializer_list<const char*> allowed);

const json& expect_object(const json& x, const std::string& path);

/// Member `field` of `obj`, or null when absent.
const json* member(const json& obj, const char* field);

const json& required(const json& obj, const std::string& path,
                     const char* field);

std::string as_string(const json& x, const std::string& path);

/// An integer that fits int64_t.
int64_t as_int(const json& x, const std::string& path);

/// "<problem.path>: <problem.what>", or just the latter at the top level.
std::string describe(const problem& p);

/// Parses `text`, allowing `//` and `/* */` comments and rejecting
/// duplicate keys (nlohmann would keep the last silently). On failure
/// returns nothing and sets `error` to one line: "<source>:<line>:<column>:
/// syntax error: ..." or "<source>: <path>: duplicate field 'x'".
std::optional<json> parse(std::string_view text, const std::string& source,
                          std::string& error);

/// The contents of the regular file `path` of at most `max_bytes`. Refuses
/// directories, FIFOs and devices without reading or waiting on them. On
/// failure returns nothing and sets `error` to one line starting with
/// `path`; `kind` names the file in it ("a job file").
std::optional<std::string> read_file(const std::string& path,
                                     uint64_t max_bytes, const char* kind,
                                     std::string& error);

} // namespace epochrt::strict_json
