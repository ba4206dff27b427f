#include <epochrt/runtime/op_registry.hpp>

#include "test_util.hpp"
#include <epochrt/runtime/op_context.hpp>

using namespace epochrt;
using namespace epochrt::test;

namespace {

// A host op: out = x * factor + node name length (to see node()).
op_schema scale_op() {
  op_schema schema;
  schema.type = "Scale";
  schema.doc = "out = x * factor";
  schema.min_inputs = schema.max_inputs = 1;
  schema.min_outputs = schema.max_outputs = 1;
  schema.args = {{"factor", arg_kind::number, true, "the factor"},
                 {"tags", arg_kind::string_list, false, "ignored"}};
  schema.fn = [](op_context& ctx) -> caf::error {
    auto& x = ctx.input(0);
    if (x.type != dtype::f64)
      return ctx.fail(runtime_errc::type_mismatch, "needs f64");
    tensor out = x;
    for (size_t i = 0; i < out.element_count(); ++i)
      out.values<double>()[i] *= ctx.number_arg("factor");
    ctx.set_output(0, std::move(out));
    ctx.output(0); // in place access of an existing output is fine
    return caf::none;
  };
  return schema;
}

std::string validation_text(const op_registry& reg, const op_def& op) {
  return error_text(reg.validate(op));
}

} // namespace

BOOST_AUTO_TEST_SUITE(op_registry_suite)

BOOST_AUTO_TEST_CASE(a_host_registered_custom_op_runs) {
  op_registry reg;
  BOOST_REQUIRE(!add_builtin_ops(reg));
  BOOST_REQUIRE(!reg.add(scale_op()));
  workspace ws;
  ws.set("x", make_tensor<double>({2}, {1.0, 2.0}));
  BOOST_REQUIRE(!run_ops(ws,
                         {make_op("Scale", {"x"}, {"y"},
                                  {{"factor", make_scalar<double>(3)},
                                   {"tags", make_string_tensor({1}, {"a"})}})},
                         reg));
  BOOST_TEST(*ws.get("y") == make_tensor<double>({2}, {3.0, 6.0}));
  ws.set("i", make_scalar<int64_t>(1));
  auto err = run_ops(
    ws, {make_op("Scale", {"i"}, {"y"}, {{"factor", make_scalar<double>(3)}})},
    reg);
  BOOST_TEST(is_code(err, runtime_errc::type_mismatch));
  BOOST_TEST(error_text(err) == "task 't', step 0, op 0 'Scale': needs f64");
}

BOOST_AUTO_TEST_CASE(add_rejects_duplicates_and_incomplete_schemas) {
  op_registry reg;
  BOOST_REQUIRE(!reg.add(scale_op()));
  BOOST_TEST(is_code(reg.add(scale_op()), runtime_errc::bad_argument));
  auto no_fn = scale_op();
  no_fn.type = "NoFn";
  no_fn.fn = nullptr;
  BOOST_TEST(is_code(reg.add(no_fn), runtime_errc::bad_argument));
  auto bad_bounds = scale_op();
  bad_bounds.type = "Bad";
  bad_bounds.max_inputs = 0;
  BOOST_TEST(is_code(reg.add(bad_bounds), runtime_errc::bad_argument));
  BOOST_TEST(reg.types() == std::vector<std::string>{"Scale"},
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(builtins_over_a_taken_type_are_an_error_in_every_build) {
  // The suite builds RelWithDebInfo (NDEBUG): an assert would not fire.
  op_registry reg;
  auto host_add = scale_op();
  host_add.type = "Add";
  BOOST_REQUIRE(!reg.add(host_add));
  auto err = add_builtin_ops(reg);
  BOOST_TEST(is_code(err, runtime_errc::bad_argument));
  BOOST_TEST(error_text(err) == "cannot register op 'Add': already registered");
  // The host's op stays; the other builtins are there.
  BOOST_TEST(reg.find("Add")->doc == "out = x * factor");
  BOOST_TEST(reg.find("Mul") != nullptr);
  BOOST_TEST(reg.find("Sleep") != nullptr);
  // A second call: every type is taken.
  BOOST_TEST(is_code(add_builtin_ops(reg), runtime_errc::bad_argument));
}

BOOST_AUTO_TEST_CASE(a_check_that_throws_is_a_problem_naming_the_op) {
  op_registry reg;
  auto throws_std = scale_op();
  throws_std.type = "ThrowsStd";
  throws_std.check = [](const op_def&) -> std::string {
    throw std::runtime_error("boom");
  };
  auto throws_int = scale_op();
  throws_int.type = "ThrowsInt";
  throws_int.check = [](const op_def&) -> std::string {
    throw 42;
  };
  BOOST_REQUIRE(!reg.add(throws_std));
  BOOST_REQUIRE(!reg.add(throws_int));
  auto args = std::map<std::string, tensor>{{"factor", make_scalar<double>(3)}};
  auto err = reg.validate(make_op("ThrowsStd", {"x"}, {"y"}, args));
  BOOST_TEST(is_code(err, runtime_errc::op_failed));
  BOOST_TEST(error_text(err)
             == "the check of op 'ThrowsStd' threw an exception: boom");
  err = reg.validate(make_op("ThrowsInt", {"x"}, {"y"}, args));
  BOOST_TEST(is_code(err, runtime_errc::op_failed));
  BOOST_TEST(error_text(err)
             == "the check of op 'ThrowsInt' threw an unknown exception");
  // A task with such an op fails before any op runs, as a value.
  workspace ws;
  ws.set("x", make_tensor<double>({1}, {1.0}));
  err = run_ops(ws, {make_op("ThrowsStd", {"x"}, {"y"}, args)}, reg);
  BOOST_TEST(is_code(err, runtime_errc::op_failed));
  BOOST_TEST(!ws.has("y"));
}

BOOST_AUTO_TEST_CASE(validate_names_the_problem_of_a_call) {
  auto& reg = builtins();
  BOOST_TEST(
    is_code(reg.validate(make_op("Foo", {}, {})), runtime_errc::unknown_op));
  BOOST_TEST(validation_text(reg, make_op("Foo", {}, {}))
             == "unknown op 'Foo'");
  BOOST_TEST(validation_text(reg, make_op("Add", {"a"}, {"c"}))
             == "Add takes 2 inputs, got 1");
  BOOST_TEST(validation_text(reg, make_op("ReadNext", {"c", "d"}, {}))
             == "ReadNext takes at least 2 outputs, got 0");
  BOOST_TEST(validation_text(
               reg, make_op("ConstantFill", {}, {"x"}, {{"value", str("x")}}))
             == "arg 'value': expected a number, got a string");
  BOOST_TEST(
    validation_text(reg,
                    make_op("ConstantFill", {}, {"x"},
                            {{"shape", make_tensor<double>({1}, {1.5})}}))
    == "arg 'shape': expected a list of integers, got a list of "
       "numbers");
  BOOST_TEST(validation_text(
               reg, make_op("ConstantFill", {}, {"x"}, {{"nmae", str("x")}}))
               .find("unknown argument 'nmae'")
             == 0u);
  BOOST_TEST(validation_text(reg, make_op("GivenTensorFill", {}, {"x"}))
             == "GivenTensorFill requires argument 'values' (a list of "
                "numbers)");
}

BOOST_AUTO_TEST_CASE(arg_kinds_accept_integers_as_numbers_and_empty_lists) {
  BOOST_TEST(arg_matches(arg_kind::number, make_scalar<int64_t>(1)));
  BOOST_TEST(!arg_matches(arg_kind::integer, make_scalar<double>(1)));
  BOOST_TEST(arg_matches(arg_kind::integer_list, i64s({0}, {})));
  BOOST_TEST(arg_matches(arg_kind::string_list, i64s({0}, {})));
  BOOST_TEST(arg_matches(arg_kind::number_list, i64s({2}, {1, 2})));
  BOOST_TEST(!arg_matches(arg_kind::string, make_string_tensor({1}, {"a"})));
  BOOST_TEST(!arg_matches(arg_kind::boolean, make_scalar<int64_t>(1)));
}

BOOST_AUTO_TEST_SUITE_END()
