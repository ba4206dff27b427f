#include <epochrt/runtime/builtin_ops.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iterator>
#include <regex>
#include <set>
#include <sstream>

#include "test_util.hpp"

using namespace epochrt;
using namespace epochrt::test;

namespace {

using args = std::map<std::string, tensor>;

tensor blob(workspace& ws, const std::string& name) {
  auto ptr = ws.get(name);
  BOOST_REQUIRE_MESSAGE(ptr, "no blob " + name);
  return *ptr;
}

std::string read_source(const std::string& relative) {
  std::ifstream in{std::string{EPOCHRT_SOURCE_DIR} + "/" + relative};
  BOOST_REQUIRE_MESSAGE(in, "cannot read " + relative);
  return {std::istreambuf_iterator<char>{in}, std::istreambuf_iterator<char>{}};
}

std::string trim(const std::string& x) {
  auto first = x.find_first_not_of(' ');
  auto last = x.find_last_not_of(' ');
  return first == std::string::npos ? std::string{}
                                    : x.substr(first, last - first + 1);
}

// The builtin-ops table of a markdown page (the one whose header starts
// with "| op |"): the cells of each row after the first, by op type ("Add,
// Mul" is a row of both).
std::map<std::string, std::vector<std::string>>
op_table(const std::string& page) {
  std::map<std::string, std::vector<std::string>> result;
  std::istringstream lines{page};
  std::string line;
  bool in_table = false;
  while (std::getline(lines, line)) {
    if (line.rfind("| op |", 0) == 0) {
      in_table = true;
      std::getline(lines, line); // |---|...
      continue;
    }
    if (!in_table)
      continue;
    if (line.rfind("|", 0) != 0)
      break;
    std::vector<std::string> cells;
    std::istringstream row{line.substr(1)};
    for (std::string cell; std::getline(row, cell, '|');)
      cells.push_back(trim(cell));
    BOOST_REQUIRE_MESSAGE(cells.size() >= 3, "a short row: " + line);
    std::istringstream names{cells[0]};
    for (std::string name; std::getline(names, name, ',');)
      result[trim(name)]
        = std::vector<std::string>{cells.begin() + 1, cells.end()};
  }
  return result;
}

// How a page's blob column reads for `schema`: "—" for an op without blobs,
// else "in, ... -> out, ...", with "..." where the count is unbounded.
void check_blob_column(const op_schema& schema, const std::string& cell) {
  if (schema.max_inputs == 0 && schema.max_outputs == 0) {
    BOOST_TEST(cell == "—");
    return;
  }
  auto arrow = cell.find("->");
  BOOST_REQUIRE_MESSAGE(arrow != std::string::npos, cell);
  auto count = [](const std::string& side) {
    auto text = trim(side);
    return text.empty() ? 0 : 1 + std::count(text.begin(), text.end(), ',');
  };
  auto ins = cell.substr(0, arrow);
  auto outs = cell.substr(arrow + 2);
  BOOST_TEST(count(ins) == schema.min_inputs, cell);
  BOOST_TEST(count(outs) == schema.min_outputs, cell);
  BOOST_TEST((ins.find("...") != std::string::npos) == (schema.max_inputs < 0),
             cell);
  BOOST_TEST(
    (outs.find("...") != std::string::npos) == (schema.max_outputs < 0), cell);
}

const char* kind_word(arg_kind kind) {
  switch (kind) {
    case arg_kind::integer:
      return "integer";
    case arg_kind::number:
      return "number";
    case arg_kind::boolean:
      return "boolean";
    case arg_kind::string:
      return "string";
    case arg_kind::integer_list:
      return "integer list";
    case arg_kind::number_list:
      return "number list";
    case arg_kind::string_list:
      return "string list";
    case arg_kind::path:
      return "path";
  }
  return "?";
}

} // namespace

BOOST_AUTO_TEST_SUITE(builtin_ops_suite)

BOOST_AUTO_TEST_CASE(constant_fill_fills_shape_with_value_and_dtype) {
  workspace ws;
  BOOST_REQUIRE(!run_ops(ws,
                         {make_op("ConstantFill", {}, {"x"},
                                  {{"shape", i64s({2}, {2, 3})},
                                   {"value", make_scalar<double>(1.5)}}),
                          make_op("ConstantFill", {}, {"t"},
                                  {{"shape", i64s({1}, {1})},
                                   {"value", make_scalar<int64_t>(100)},
                                   {"dtype", str("i64")}})}));
  auto x = blob(ws, "x");
  BOOST_TEST(x.type == dtype::f32);
  BOOST_TEST(x.shape == (std::vector<int64_t>{2, 3}),
             boost::test_tools::per_element());
  BOOST_TEST(doubles(x) == std::vector<double>(6, 1.5),
             boost::test_tools::per_element());
  auto t = blob(ws, "t");
  BOOST_TEST(t.type == dtype::i64);
  BOOST_TEST(ints(t) == std::vector<int64_t>{100},
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(constant_fill_defaults_to_a_f32_scalar_zero) {
  workspace ws;
  BOOST_REQUIRE(!run_ops(ws, {make_op("ConstantFill", {}, {"x"})}));
  BOOST_TEST(blob(ws, "x") == make_scalar<float>(0));
}

BOOST_AUTO_TEST_CASE(
  constant_fill_if_missing_fills_only_a_blob_that_is_not_there) {
  workspace ws;
  auto fill = [](double value) {
    return make_op("ConstantFill", {}, {"x"},
                   {{"value", make_scalar<double>(value)},
                    {"if_missing", make_scalar<bool>(true)}});
  };
  BOOST_REQUIRE(!run_ops(ws, {fill(1)}));
  BOOST_TEST(blob(ws, "x") == make_scalar<float>(1));
  BOOST_REQUIRE(!run_ops(ws, {fill(2)}));
  BOOST_TEST(blob(ws, "x") == make_scalar<float>(1));
  BOOST_REQUIRE(!run_ops(
    ws,
    {make_op("ConstantFill", {}, {"x"}, {{"value", make_scalar<double>(3)}})}));
  BOOST_TEST(blob(ws, "x") == make_scalar<float>(3));
}

BOOST_AUTO_TEST_CASE(constant_fill_rejects_bad_dtype_and_negative_shape) {
  workspace ws;
  auto err = run_ops(
    ws, {make_op("ConstantFill", {}, {"x"}, {{"dtype", str("f16")}})});
  BOOST_TEST(is_code(err, runtime_errc::bad_argument));
  BOOST_TEST(error_text(err).find("f16") != std::string::npos);
  err = run_ops(
    ws, {make_op("ConstantFill", {}, {"x"}, {{"shape", i64s({1}, {-1})}})});
  BOOST_TEST(is_code(err, runtime_errc::bad_argument));
  err = run_ops(ws,
                {make_op("ConstantFill", {}, {"x"}, {{"value", str("one")}})});
  BOOST_TEST(is_code(err, runtime_errc::bad_argument));
  BOOST_TEST(
    error_text(err).find("arg 'value': expected a number, got a string")
    != std::string::npos);
  BOOST_TEST(!ws.has("x"));
}

BOOST_AUTO_TEST_CASE(given_tensor_fill_holds_values_in_shape) {
  workspace ws;
  BOOST_REQUIRE(
    !run_ops(ws,
             {make_op("GivenTensorFill", {}, {"d"},
                      {{"shape", i64s({2}, {2, 2})},
                       {"values", i64s({4}, {1, 2, 3, 4})},
                       {"dtype", str("i64")}}),
              make_op("GivenTensorFill", {}, {"f"},
                      {{"values", make_tensor<double>({2}, {0.5, 1.5})}})}));
  BOOST_TEST(blob(ws, "d") == i64s({2, 2}, {1, 2, 3, 4}));
  BOOST_TEST(blob(ws, "f") == f32s({2}, {0.5f, 1.5f}));
}

BOOST_AUTO_TEST_CASE(given_tensor_fill_rejects_a_count_that_does_not_fit) {
  workspace ws;
  auto err = run_ops(
    ws,
    {make_op("GivenTensorFill", {}, {"d"},
             {{"shape", i64s({1}, {3})}, {"values", i64s({2}, {1, 2})}})});
  // Refused by the op's check, before it runs.
  BOOST_TEST(is_code(err, runtime_errc::bad_argument));
  err = run_ops(ws, {make_op("GivenTensorFill", {}, {"d"})});
  BOOST_TEST(is_code(err, runtime_errc::bad_argument)); // values required
}

BOOST_AUTO_TEST_CASE(add_and_mul_are_elementwise_for_every_numeric_dtype) {
  workspace ws;
  ws.set("a32", f32s({3}, {1, 2, 3}));
  ws.set("b32", f32s({3}, {4, 5, 6}));
  ws.set("a64", make_tensor<double>({2}, {1.5, 2.5}));
  ws.set("ai", make_tensor<int32_t>({2}, {7, -8}));
  ws.set("au", make_tensor<uint8_t>({2}, {2, 3}));
  BOOST_REQUIRE(!run_ops(ws,
                         {make_op("Add", {"a32", "b32"}, {"s"}),
                          make_op("Mul", {"a32", "b32"}, {"p"}),
                          make_op("Add", {"a64", "a64"}, {"s64"}),
                          make_op("Mul", {"ai", "ai"}, {"pi"}),
                          make_op("Mul", {"au", "au"}, {"pu"})}));
  BOOST_TEST(blob(ws, "s") == f32s({3}, {5, 7, 9}));
  BOOST_TEST(blob(ws, "p") == f32s({3}, {4, 10, 18}));
  BOOST_TEST(blob(ws, "s64") == make_tensor<double>({2}, {3.0, 5.0}));
  BOOST_TEST(blob(ws, "pi") == make_tensor<int32_t>({2}, {49, 64}));
  BOOST_TEST(blob(ws, "pu") == make_tensor<uint8_t>({2}, {4, 9}));
}

BOOST_AUTO_TEST_CASE(
  add_broadcasts_a_single_element_and_keeps_the_first_shape) {
  workspace ws;
  ws.set("total", i64s({1}, {100}));
  ws.set("s", make_scalar<int64_t>(3));
  ws.set("v", i64s({3}, {1, 2, 3}));
  BOOST_REQUIRE(!run_ops(ws,
                         {make_op("Add", {"total", "s"}, {"total"}),
                          make_op("Add", {"s", "v"}, {"w"})}));
  BOOST_TEST(blob(ws, "total") == i64s({1}, {103}));
  BOOST_TEST(blob(ws, "w") == i64s({3}, {4, 5, 6}));
}

BOOST_AUTO_TEST_CASE(add_rejects_mismatched_dtypes_shapes_and_bools) {
  workspace ws;
  ws.set("a", f32s({3}, {1, 2, 3}));
  ws.set("b", f32s({2}, {1, 2}));
  ws.set("i", i64s({3}, {1, 2, 3}));
  ws.set("flag", make_scalar<bool>(true));
  auto err = run_ops(ws, {make_op("Add", {"a", "b"}, {"c"})});
  BOOST_TEST(is_code(err, runtime_errc::shape_mismatch));
  BOOST_TEST(error_text(err).find("op 0 'Add'") != std::string::npos);
  err = run_ops(ws, {make_op("Add", {"a", "i"}, {"c"})});
  BOOST_TEST(is_code(err, runtime_errc::type_mismatch));
  err = run_ops(ws, {make_op("Mul", {"flag", "flag"}, {"c"})});
  BOOST_TEST(is_code(err, runtime_errc::type_mismatch));
  err = run_ops(ws, {make_op("Add", {"a"}, {"c"})});
  BOOST_TEST(is_code(err, runtime_errc::bad_argument));
  BOOST_TEST(!ws.has("c"));
}

BOOST_AUTO_TEST_CASE(copy_duplicates_any_tensor) {
  workspace ws;
  ws.set("s", make_string_tensor({2}, {"a", "b"}));
  BOOST_REQUIRE(!run_ops(
    ws, {make_op("Copy", {"s"}, {"t"}), make_op("Copy", {"s"}, {"s"})}));
  BOOST_TEST(blob(ws, "t") == blob(ws, "s"));
}

BOOST_AUTO_TEST_CASE(sum_reduces_to_a_scalar_of_the_same_dtype) {
  workspace ws;
  ws.set("v", i64s({2, 2}, {1, 2, 3, 4}));
  ws.set("f", f32s({2}, {0.5f, 0.25f}));
  ws.set("empty", i64s({0}, {}));
  BOOST_REQUIRE(
    !run_ops(ws,
             {make_op("Sum", {"v"}, {"sv"}), make_op("Sum", {"f"}, {"sf"}),
              make_op("Sum", {"empty"}, {"se"})}));
  BOOST_TEST(blob(ws, "sv") == make_scalar<int64_t>(10));
  BOOST_TEST(blob(ws, "sf") == make_scalar<float>(0.75f));
  BOOST_TEST(blob(ws, "se") == make_scalar<int64_t>(0));
  ws.set("s", make_string_tensor({1}, {"x"}));
  BOOST_TEST(is_code(run_ops(ws, {make_op("Sum", {"s"}, {"x"})}),
                     runtime_errc::type_mismatch));
}

BOOST_AUTO_TEST_CASE(count_down_outputs_true_once_the_counter_reaches_zero) {
  workspace ws;
  BOOST_REQUIRE(!run_ops(ws,
                         {make_op("CreateCounter", {}, {"c"},
                                  {{"init_count", make_scalar<int64_t>(2)}})}));
  std::vector<bool> done;
  for (int i = 0; i < 4; ++i) {
    BOOST_REQUIRE(!run_ops(ws, {make_op("CountDown", {"c"}, {"done"})}));
    done.push_back(blob(ws, "done") == make_scalar<bool>(true));
  }
  BOOST_TEST(done == (std::vector<bool>{false, false, true, true}),
             boost::test_tools::per_element());
  BOOST_TEST(blob(ws, "c") == make_scalar<int64_t>(0));
}

BOOST_AUTO_TEST_CASE(count_down_rejects_a_counter_that_is_not_i64) {
  workspace ws;
  ws.set("c", make_scalar<float>(1));
  BOOST_TEST(is_code(run_ops(ws, {make_op("CountDown", {"c"}, {"d"})}),
                     runtime_errc::type_mismatch));
  BOOST_TEST(is_code(run_ops(ws, {make_op("CountDown", {"c"}, {"c"})}),
                     runtime_errc::bad_argument));
}

BOOST_AUTO_TEST_CASE(read_next_reads_batches_and_finishes_at_the_end) {
  workspace ws;
  ws.set("data", i64s({5, 2}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
  ws.set("labels", make_string_tensor({5}, {"a", "b", "c", "d", "e"}));
  BOOST_REQUIRE(!run_ops(ws, {make_op("CreateCursor", {}, {"cur"})}));
  auto read = make_op("ReadNext", {"cur", "data", "labels"},
                      {"batch", "lb", "finished"},
                      {{"batch_size", make_scalar<int64_t>(2)}});
  BOOST_REQUIRE(!run_ops(ws, {read}));
  BOOST_TEST(blob(ws, "batch") == i64s({2, 2}, {0, 1, 2, 3}));
  BOOST_TEST(blob(ws, "lb") == make_string_tensor({2}, {"a", "b"}));
  BOOST_TEST(blob(ws, "finished") == make_scalar<bool>(false));
  BOOST_REQUIRE(!run_ops(ws, {read}));
  BOOST_TEST(blob(ws, "finished") == make_scalar<bool>(false));
  BOOST_REQUIRE(!run_ops(ws, {read}));
  BOOST_TEST(blob(ws, "batch") == i64s({1, 2}, {8, 9}));
  BOOST_TEST(blob(ws, "finished") == make_scalar<bool>(true));
  // Past the end: empty batches, still finished.
  BOOST_REQUIRE(!run_ops(ws, {read}));
  BOOST_TEST(blob(ws, "batch").shape == (std::vector<int64_t>{0, 2}),
             boost::test_tools::per_element());
  BOOST_TEST(blob(ws, "finished") == make_scalar<bool>(true));
}

BOOST_AUTO_TEST_CASE(read_next_with_wrap_restarts_after_each_pass) {
  workspace ws;
  ws.set("data", i64s({3}, {1, 2, 3}));
  ws.set("cur", make_scalar<int64_t>(0));
  auto read = make_op("ReadNext", {"cur", "data"}, {"b", "fin"},
                      {{"batch_size", make_scalar<int64_t>(2)},
                       {"wrap", make_scalar<bool>(true)}});
  std::vector<std::vector<int64_t>> batches;
  std::vector<bool> fins;
  for (int i = 0; i < 4; ++i) {
    BOOST_REQUIRE(!run_ops(ws, {read}));
    batches.push_back(ints(blob(ws, "b")));
    fins.push_back(blob(ws, "fin") == make_scalar<bool>(true));
  }
  BOOST_TEST(
    (batches == std::vector<std::vector<int64_t>>{{1, 2}, {3}, {1, 2}, {3}}));
  BOOST_TEST(fins == (std::vector<bool>{false, true, false, true}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(read_next_rejects_bad_calls) {
  workspace ws;
  ws.set("a", i64s({3}, {1, 2, 3}));
  ws.set("b", i64s({2}, {1, 2}));
  ws.set("cur", make_scalar<int64_t>(0));
  // Datasets of different lengths.
  BOOST_TEST(is_code(
    run_ops(ws, {make_op("ReadNext", {"cur", "a", "b"}, {"x", "y", "f"})}),
    runtime_errc::shape_mismatch));
  // Wrong number of outputs (static check).
  BOOST_TEST(is_code(run_ops(ws, {make_op("ReadNext", {"cur", "a"}, {"x"})}),
                     runtime_errc::bad_argument));
  // batch_size 0.
  BOOST_TEST(
    is_code(run_ops(ws,
                    {make_op("ReadNext", {"cur", "a"}, {"x", "f"},
                             {{"batch_size", make_scalar<int64_t>(0)}})}),
            runtime_errc::bad_argument));
  // Cursor past the end.
  ws.set("cur", make_scalar<int64_t>(9));
  BOOST_TEST(
    is_code(run_ops(ws, {make_op("ReadNext", {"cur", "a"}, {"x", "f"})}),
            runtime_errc::bad_argument));
  // Missing dataset.
  BOOST_TEST(
    is_code(run_ops(ws, {make_op("ReadNext", {"cur", "nope"}, {"x", "f"})}),
            runtime_errc::missing_blob));
}

BOOST_AUTO_TEST_CASE(generate_linear_data_is_deterministic_per_seed) {
  workspace ws;
  auto gen = [](int64_t seed, const char* x, const char* y) {
    return make_op("GenerateLinearData", {}, {x, y},
                   {{"rows", make_scalar<int64_t>(50)},
                    {"features", make_scalar<int64_t>(3)},
                    {"seed", make_scalar<int64_t>(seed)},
                    {"weights", make_tensor<double>({3}, {1.0, -2.0, 0.5})},
                    {"bias", make_scalar<double>(0.25)},
                    {"noise", make_scalar<double>(0.0)}});
  };
  BOOST_REQUIRE(
    !run_ops(ws, {gen(7, "x1", "y1"), gen(7, "x2", "y2"), gen(8, "x3", "y3")}));
  auto x = blob(ws, "x1");
  BOOST_TEST(x.shape == (std::vector<int64_t>{50, 3}),
             boost::test_tools::per_element());
  BOOST_TEST(blob(ws, "x1") == blob(ws, "x2"));
  BOOST_TEST(blob(ws, "y1") == blob(ws, "y2"));
  BOOST_TEST(blob(ws, "x1") != blob(ws, "x3"));
  // Without noise, y is exactly the linear function of X.
  auto xs = doubles(blob(ws, "x1"));
  auto ys = doubles(blob(ws, "y1"));
  for (size_t r = 0; r < 50; ++r) {
    BOOST_TEST(xs[r * 3] >= -1.0);
    BOOST_TEST(xs[r * 3] < 1.0);
    double expected
      = 0.25 + xs[r * 3] - 2.0 * xs[r * 3 + 1] + 0.5 * xs[r * 3 + 2];
    BOOST_TEST(std::abs(ys[r] - expected) < 1e-5);
  }
  BOOST_TEST(
    is_code(run_ops(ws,
                    {make_op("GenerateLinearData", {}, {"x", "y"},
                             {{"rows", make_scalar<int64_t>(2)},
                              {"features", make_scalar<int64_t>(2)},
                              {"weights", make_tensor<double>({1}, {1})}})}),
            runtime_errc::bad_argument));
}

BOOST_AUTO_TEST_CASE(linear_regression_sgd_learns_the_true_weights) {
  workspace ws;
  BOOST_REQUIRE(!run_ops(
    ws,
    {make_op("GenerateLinearData", {}, {"X", "y"},
             {{"rows", make_scalar<int64_t>(200)},
              {"features", make_scalar<int64_t>(2)},
              {"seed", make_scalar<int64_t>(1)},
              {"weights", make_tensor<double>({2}, {2.0, -1.0})},
              {"bias", make_scalar<double>(0.5)},
              {"noise", make_scalar<double>(0.01)}}),
     make_op("ConstantFill", {}, {"w"}, {{"shape", i64s({1}, {2})}}),
     make_op("ConstantFill", {}, {"b"}, {{"shape", i64s({1}, {1})}})}));
  auto step = make_op("LinearRegressionSGD", {"w", "b", "X", "y"},
                      {"w", "b", "loss"}, {{"lr", make_scalar<double>(0.1)}});
  BOOST_REQUIRE(!run_ops(ws, {step}));
  auto first_loss = doubles(blob(ws, "loss"))[0];
  for (int i = 0; i < 300; ++i)
    BOOST_REQUIRE(!run_ops(ws, {step}));
  auto last_loss = doubles(blob(ws, "loss"))[0];
  BOOST_TEST(last_loss < first_loss / 100);
  auto w = doubles(blob(ws, "w"));
  BOOST_TEST(std::abs(w[0] - 2.0) < 0.05);
  BOOST_TEST(std::abs(w[1] + 1.0) < 0.05);
  BOOST_TEST(std::abs(doubles(blob(ws, "b"))[0] - 0.5) < 0.05);
  BOOST_TEST(blob(ws, "loss").shape.empty());
}

BOOST_AUTO_TEST_CASE(linear_regression_sgd_on_an_empty_batch_changes_nothing) {
  workspace ws;
  ws.set("w", f32s({2}, {1, 2}));
  ws.set("b", make_scalar<float>(3));
  ws.set("X", f32s({0, 2}, {}));
  ws.set("y", f32s({0}, {}));
  BOOST_REQUIRE(!run_ops(ws,
                         {make_op("LinearRegressionSGD", {"w", "b", "X", "y"},
                                  {"w", "b", "loss"})}));
  BOOST_TEST(blob(ws, "w") == f32s({2}, {1, 2}));
  BOOST_TEST(blob(ws, "b") == make_scalar<float>(3));
  BOOST_TEST(blob(ws, "loss") == make_scalar<float>(0));
  ws.set("X", f32s({1, 3}, {1, 2, 3}));
  ws.set("y", f32s({1}, {1}));
  BOOST_TEST(
    is_code(run_ops(ws,
                    {make_op("LinearRegressionSGD", {"w", "b", "X", "y"},
                             {"w", "b", "loss"})}),
            runtime_errc::shape_mismatch));
}

BOOST_AUTO_TEST_CASE(every_builtin_op_has_a_doc_string) {
  for (auto& type : builtins().types()) {
    auto* schema = builtins().find(type);
    BOOST_REQUIRE(schema);
    BOOST_TEST(!schema->doc.empty(), type);
  }
  BOOST_TEST(builtins().types().size() >= 12u);
}

// The docs list every builtin op, its blobs and its arguments, and nothing
// else: docs/jobs-in-cpp.md with each argument's kind and whether it is
// required, docs/job-file.md by name, builtin_ops.hpp by type.
BOOST_AUTO_TEST_CASE(the_docs_list_every_builtin_op_with_its_arguments) {
  auto& registry = builtins();
  auto types = registry.types();
  auto cpp = op_table(read_source("docs/jobs-in-cpp.md"));
  auto json = op_table(read_source("docs/job-file.md"));
  auto header = read_source("runtime/builtin_ops.hpp");
  auto listed = [](const auto& table) {
    std::vector<std::string> result;
    for (auto& row : table)
      result.push_back(row.first);
    return result;
  };
  BOOST_TEST(listed(cpp) == types, boost::test_tools::per_element());
  BOOST_TEST(listed(json) == types, boost::test_tools::per_element());
  for (auto& type : types) {
    BOOST_TEST_CONTEXT("op " << type) {
      auto& schema = *registry.find(type);
      BOOST_TEST((header.find("/// - " + type) != std::string::npos
                  || header.find(", " + type + ":") != std::string::npos));
      if (cpp.count(type) == 0 || json.count(type) == 0)
        continue;
      auto& cpp_row = cpp.at(type);
      auto& json_row = json.at(type);
      check_blob_column(schema, cpp_row.at(0));
      check_blob_column(schema, json_row.at(0));
      std::set<std::string> declared;
      for (auto& spec : schema.args) {
        declared.insert(spec.name);
        auto entry = spec.name + (spec.required ? "*" : "") + " ("
          + kind_word(spec.kind);
        BOOST_TEST(cpp_row.at(1).find(entry) != std::string::npos,
                   "docs/jobs-in-cpp.md lacks '" << entry << "'");
        BOOST_TEST(json_row.at(1).find(spec.name) != std::string::npos,
                   "docs/job-file.md lacks '" << spec.name << "'");
      }
      // No argument the op does not have.
      std::regex named{"([a-z_]+)\\*? \\("};
      auto& cell = cpp_row.at(1);
      for (std::sregex_iterator i{cell.begin(), cell.end(), named}, end;
           i != end; ++i)
        BOOST_TEST(declared.count((*i)[1].str()) == 1u,
                   "docs/jobs-in-cpp.md names an argument '"
                     << (*i)[1].str() << "' that " << type << " lacks");
      if (schema.args.empty()) {
        BOOST_TEST(cpp_row.at(1) == "—");
        BOOST_TEST(json_row.at(1).rfind("—", 0) == 0u);
      }
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()
