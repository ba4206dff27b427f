#include <boost/test/unit_test.hpp>

#include <limits>
#include <string>

#include <epochrt/messages/tensor.hpp>

using namespace epochrt;

BOOST_AUTO_TEST_SUITE(tensors)

BOOST_AUTO_TEST_CASE(make_tensor_lays_out_values_row_major) {
  auto x = make_tensor<int32_t>({2, 2}, {1, 2, 3, 4});
  BOOST_TEST((x.type == dtype::i32));
  BOOST_TEST(x.element_count() == 4u);
  BOOST_TEST(x.byte_size() == 16u);
  BOOST_TEST(x.values<int32_t>()[2] == 3);
  BOOST_TEST(x.consistent());
}

BOOST_AUTO_TEST_CASE(make_tensor_of_bool_stores_one_byte_per_element) {
  auto x = make_tensor<bool>({3}, {true, false, true});
  BOOST_TEST(x.data.size() == 3u);
  BOOST_TEST(x.data[0] == 1);
  BOOST_TEST(x.data[1] == 0);
  BOOST_TEST(x.consistent());
}

BOOST_AUTO_TEST_CASE(scalar_has_empty_shape_and_one_element) {
  auto x = make_scalar<double>(2.5);
  BOOST_TEST(x.shape.empty());
  BOOST_TEST(x.element_count() == 1u);
  BOOST_TEST(element_as_double(x, 0) == 2.5);
}

BOOST_AUTO_TEST_CASE(consistent_rejects_mismatched_payloads) {
  auto x = make_tensor<float>({2}, {1, 2});
  x.data.pop_back();
  BOOST_TEST(!x.consistent());
  auto s = make_string_tensor({2}, {"a"});
  BOOST_TEST(!s.consistent());
  auto n = make_tensor<int64_t>({1}, {1});
  n.shape = {-1};
  BOOST_TEST(!n.consistent());
  auto mixed = make_tensor<uint8_t>({1}, {1});
  mixed.strings = {"x"};
  BOOST_TEST(!mixed.consistent());
}

BOOST_AUTO_TEST_CASE(consistent_rejects_shapes_whose_byte_count_wraps_around) {
  // 2^61 f64 elements are 2^64 bytes: 0 in size_t, like an empty payload.
  tensor x;
  x.type = dtype::f64;
  x.shape = {int64_t{1} << 61};
  BOOST_TEST(!x.consistent());
  x.shape = {int64_t{1} << 32, int64_t{1} << 32};
  BOOST_TEST(!x.consistent());
}

BOOST_AUTO_TEST_CASE(zero_tensor_is_consistent) {
  BOOST_TEST(make_zero_tensor(dtype::f64, {3, 0}).consistent());
  BOOST_TEST(make_zero_tensor(dtype::string, {2}).consistent());
  BOOST_TEST(make_zero_tensor(dtype::i64, {2, 3}).data.size() == 48u);
}

BOOST_AUTO_TEST_CASE(format_values_prints_shortest_round_trip_text) {
  BOOST_TEST(format_values(make_tensor<float>({3}, {1, 2.5f, 0.1f}))
             == "1,2.5,0.1");
  BOOST_TEST(format_values(make_tensor<int64_t>({2}, {-3, 9})) == "-3,9");
  BOOST_TEST(format_values(make_tensor<uint8_t>({2}, {0, 255})) == "0,255");
  BOOST_TEST(format_values(make_tensor<bool>({2}, {true, false}))
             == "true,false");
  BOOST_TEST(format_values(make_string_tensor({2}, {"a", "b"})) == "a,b");
  BOOST_TEST(format_values(make_tensor<int32_t>({0}, {})).empty());
}

BOOST_AUTO_TEST_CASE(dtype_names_parse_back) {
  for (auto t : {dtype::f32, dtype::f64, dtype::i32, dtype::i64, dtype::u8,
                 dtype::boolean, dtype::string}) {
    dtype parsed = dtype::f32;
    BOOST_TEST(from_string(to_string(t), parsed));
    BOOST_TEST((parsed == t));
  }
  dtype out;
  BOOST_TEST(!from_string("f16", out));
}

BOOST_AUTO_TEST_SUITE_END()
