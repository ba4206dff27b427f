#include <epochrt/faults/fault_plan.hpp>

#include <cerrno>
#include <cmath>
#include <utility>

#include <epochrt/faults/fault_errc.hpp>
#include <epochrt/messages/names.hpp>
#include <epochrt/messages/strict_json.hpp>

namespace epochrt {

namespace {

using namespace strict_json;

// The errors a bad disk or a full one gives; enough to script every
// failure of a write or a read.
constexpr std::pair<int, const char*> errno_names[] = {
  {EIO, "EIO"},       {ENOSPC, "ENOSPC"}, {EACCES, "EACCES"},
  {EROFS, "EROFS"},   {EDQUOT, "EDQUOT"}, {ENOMEM, "ENOMEM"},
  {EMFILE, "EMFILE"}, {EPERM, "EPERM"},   {ENOENT, "ENOENT"},
};

std::string kind_list(uint32_t kinds) {
  std::string text;
  for (size_t i = 1; i < fault_kind_count; ++i)
    if (kinds & kind_bit(static_cast<fault_kind>(i)))
      text += (text.empty() ? "" : ", ")
        + std::string{fault_kind_name(static_cast<fault_kind>(i))};
  return text;
}

uint64_t non_negative(const json& x, const std::string& path, int64_t least) {
  auto n = as_int(x, path);
  if (n < least)
    fail(path,
         "expected an integer >= " + std::to_string(least) + ", got "
           + std::to_string(n));
  return static_cast<uint64_t>(n);
}

fault_rule parse_rule(const json& x, const std::string& path) {
  expect_object(x, path);
  check_fields(x, path,
               {"point", "fault", "node", "epoch", "detail", "hit",
                "probability", "count", "error", "ms"});
  fault_rule rule;
  auto point_name
    = as_string(required(x, path, "point"), field_path(path, "point"));
  auto point = fault_point_from_name(point_name);
  if (!point)
    fail(field_path(path, "point"),
         "unknown point '" + point_name
           + "' (`epochrt faults list` lists them)");
  rule.point = *point;
  auto kind_name
    = as_string(required(x, path, "fault"), field_path(path, "fault"));
  auto kind = fault_kind_from_name(kind_name);
  auto& where = info(*point);
  if (!kind)
    fail(field_path(path, "fault"),
         "unknown fault '" + kind_name + "' (expected one of "
           + kind_list(~uint32_t{0}) + ")");
  if ((where.kinds & kind_bit(*kind)) == 0)
    fail(field_path(path, "fault"),
         "point " + point_name + " takes no " + kind_name + " (it takes "
           + kind_list(where.kinds) + ")");
  rule.kind = *kind;
  if (auto* node = member(x, "node")) {
    if (!where.has_node)
      fail(field_path(path, "node"),
           "point " + point_name
             + " names no node: the rule could never "
               "strike");
    auto name = as_string(*node, field_path(path, "node"));
    if (auto problem = node_name_problem(name); !problem.empty())
      fail(field_path(path, "node"),
           "invalid node name '" + name + "': " + problem);
    rule.node = std::move(name);
  }
  if (auto* epoch = member(x, "epoch")) {
    if (!where.has_epoch)
      fail(field_path(path, "epoch"),
           "point " + point_name
             + " knows no epoch: the rule could never "
               "strike");
    rule.epoch = static_cast<int64_t>(
      non_negative(*epoch, field_path(path, "epoch"), 0));
  }
  if (auto* detail = member(x, "detail"))
    rule.detail = as_string(*detail, field_path(path, "detail"));
  if (auto* hit = member(x, "hit"))
    rule.hit = non_negative(*hit, field_path(path, "hit"), 1);
  if (auto* p = member(x, "probability")) {
    auto p_path = field_path(path, "probability");
    if (!p->is_number())
      wrong_type(p_path, "a number", *p);
    rule.probability = p->get<double>();
    if (!std::isfinite(rule.probability) || rule.probability <= 0
        || rule.probability > 1)
      fail(p_path, "expected a number above 0 and at most 1, got " + p->dump());
  }
  if (auto* count = member(x, "count"))
    rule.count = non_negative(*count, field_path(path, "count"), 0);
  if (auto* error = member(x, "error")) {
    auto e_path = field_path(path, "error");
    if (rule.kind != fault_kind::io_error)
      fail(e_path, "only an io_error fault takes an error");
    auto name = as_string(*error, e_path);
    rule.error = errno_from_name(name);
    if (rule.error == 0) {
      std::string names;
      for (auto& [code, known] : errno_names)
        names += (names.empty() ? "" : ", ") + std::string{known};
      fail(e_path,
           "unknown error '" + name + "' (expected one of " + names + ")");
    }
  } else if (rule.kind == fault_kind::io_error) {
    rule.error = EIO;
  }
  auto timed
    = rule.kind == fault_kind::delay || rule.kind == fault_kind::partition;
  if (auto* ms = member(x, "ms")) {
    if (!timed)
      fail(field_path(path, "ms"), "only delay and partition faults take ms");
    rule.ms = non_negative(*ms, field_path(path, "ms"), 0);
    if (rule.ms > 24 * 3600 * 1000)
      fail(field_path(path, "ms"), "more than a day");
  } else if (timed) {
    fail(path,
         "missing required field 'ms' (a " + kind_name
           + " fault lasts that many milliseconds)");
  }
  return rule;
}

fault_plan parse_root(const json& root) {
  if (!root.is_object())
    fail({}, "expected an object at the top level, got " + found(root));
  check_fields(root, {}, {"seed", "faults"});
  fault_plan plan;
  if (auto* seed = member(root, "seed")) {
    // Any 64-bit seed: `epochrt sweep --seed` takes one.
    if (seed->is_number_unsigned())
      plan.seed = seed->get<uint64_t>();
    else
      plan.seed = non_negative(*seed, "seed", 0);
  }
  auto& faults = required(root, {}, "faults");
  if (!faults.is_array())
    wrong_type("faults", "an array of faults", faults);
  for (size_t i = 0; i < faults.size(); ++i)
    plan.faults.push_back(parse_rule(faults[i], index_path("faults", i)));
  return plan;
}

} // namespace

int errno_from_name(std::string_view name) noexcept {
  for (auto& [code, known] : errno_names)
    if (name == known)
      return code;
  return 0;
}

std::string errno_name(int code) {
  for (auto& [known_code, name] : errno_names)
    if (code == known_code)
      return name;
  return std::to_string(code);
}

caf::expected<fault_plan> parse_fault_plan(std::string_view text,
                                           const std::string& source_name) {
  std::string error;
  auto root = strict_json::parse(text, source_name, error);
  if (!root)
    return make_error(fault_errc::invalid_plan, std::move(error));
  try {
    return parse_root(*root);
  } catch (const problem& p) {
    return make_error(fault_errc::invalid_plan,
                      source_name + ": " + describe(p));
  } catch (const json::exception& ex) {
    return make_error(fault_errc::invalid_plan, source_name + ": " + ex.what());
  }
}

caf::expected<fault_plan> load_fault_plan(const std::string& path) {
  std::string error;
  auto text
    = strict_json::read_file(path, max_fault_plan_bytes, "a fault plan", error);
  if (!text)
    return make_error(fault_errc::unreadable_plan, std::move(error));
  return parse_fault_plan(*text, path);
}

std::string to_json(const fault_plan& plan) {
  json faults = json::array();
  for (auto& rule : plan.faults) {
    json x;
    x["point"] = std::string{info(rule.point).name};
    x["fault"] = std::string{fault_kind_name(rule.kind)};
    if (rule.node)
      x["node"] = *rule.node;
    if (rule.epoch)
      x["epoch"] = *rule.epoch;
    if (rule.detail)
      x["detail"] = *rule.detail;
    if (rule.hit != 0)
      x["hit"] = rule.hit;
    if (rule.probability != 1.0)
      x["probability"] = rule.probability;
    if (rule.count != 1)
      x["count"] = rule.count;
    if (rule.kind == fault_kind::io_error)
      x["error"] = errno_name(rule.error);
    if (rule.kind == fault_kind::delay || rule.kind == fault_kind::partition)
      x["ms"] = rule.ms;
    faults.push_back(std::move(x));
  }
  json root;
  root["seed"] = plan.seed;
  root["faults"] = std::move(faults);
  return root.dump(2) + "\n";
}

} // namespace epochrt
