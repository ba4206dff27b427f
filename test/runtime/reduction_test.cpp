// The reductions of an all-reduce (runtime/reduction.hpp): every element
// folded left to right in participant order, so that the bits of a result
// are those of a plain sequential fold, whatever the blob's size.
#include <epochrt/runtime/reduction.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "test_util.hpp"

using namespace epochrt;
using namespace epochrt::test;

namespace {

template <class T>
constexpr dtype dtype_of() {
  if constexpr (std::is_same_v<T, float>)
    return dtype::f32;
  else if constexpr (std::is_same_v<T, double>)
    return dtype::f64;
  else if constexpr (std::is_same_v<T, int32_t>)
    return dtype::i32;
  else
    return dtype::i64;
}

// The reference: one element at a time, participant 0 first.
template <class T>
std::vector<T>
sequential_fold(reduce_op op, const std::vector<std::vector<T>>& sources) {
  std::vector<T> out(sources[0].size());
  for (size_t i = 0; i < out.size(); ++i) {
    T acc = sources[0][i];
    for (size_t s = 1; s < sources.size(); ++s) {
      auto x = sources[s][i];
      switch (op) {
        case reduce_op::sum:
        case reduce_op::mean:
          if constexpr (std::is_integral_v<T>)
            acc = static_cast<T>(static_cast<std::make_unsigned_t<T>>(acc)
                                 + static_cast<std::make_unsigned_t<T>>(x));
          else
            acc = acc + x;
          break;
        case reduce_op::min:
          acc = x < acc ? x : acc;
          break;
        case reduce_op::max:
          acc = acc < x ? x : acc;
          break;
      }
    }
    if (op == reduce_op::mean)
      acc = static_cast<T>(acc / static_cast<T>(sources.size()));
    out[i] = acc;
  }
  return out;
}

template <class T>
std::vector<T>
reduced(reduce_op op, const std::vector<std::vector<T>>& sources) {
  std::vector<const void*> ptrs;
  for (auto& s : sources)
    ptrs.push_back(s.data());
  std::vector<T> out(sources[0].size(), T{});
  reduce_into(op, dtype_of<T>(), ptrs, out.data(), out.size());
  return out;
}

// Values whose float sums depend on the order they are added in.
template <class T>
std::vector<std::vector<T>>
random_sources(size_t participants, size_t count, unsigned seed) {
  std::mt19937_64 engine{seed};
  std::vector<std::vector<T>> result(participants, std::vector<T>(count));
  for (auto& s : result)
    for (auto& x : s) {
      if constexpr (std::is_integral_v<T>) {
        x = static_cast<T>(engine());
      } else {
        std::uniform_real_distribution<T> dist{-1, 1};
        std::uniform_int_distribution<int> scale{-20, 20};
        x = static_cast<T>(dist(engine) * std::pow(T{2}, scale(engine)));
      }
    }
  return result;
}

template <class T>
bool same_bits(const std::vector<T>& x, const std::vector<T>& y) {
  return x.size() == y.size()
    && std::memcmp(x.data(), y.data(), x.size() * sizeof(T)) == 0;
}

template <class T>
void check_every_op_folds_sequentially() {
  // Within a small block, whole small blocks, more elements than one
  // block and ragged ends; every number of sources the kernels fold at
  // once (up to four, then three at a time) and what is left after them.
  for (size_t count : {size_t{1}, size_t{7}, size_t{256}, size_t{300},
                       size_t{4096 * 2 + 256 * 3 + 13}})
    for (size_t participants = 1; participants <= 9; ++participants) {
      auto sources = random_sources<T>(
        participants, count, static_cast<unsigned>(count + 31 * participants));
      for (auto op :
           {reduce_op::sum, reduce_op::mean, reduce_op::min, reduce_op::max})
        BOOST_TEST(
          same_bits(reduced(op, sources), sequential_fold(op, sources)),
          to_string(dtype_of<T>()) << " " << to_string(op) << " of "
                                   << participants << " x " << count);
    }
}

} // namespace

BOOST_AUTO_TEST_SUITE(reduction_suite)

BOOST_AUTO_TEST_CASE(every_reduction_of_f32_is_a_sequential_fold) {
  check_every_op_folds_sequentially<float>();
}

BOOST_AUTO_TEST_CASE(every_reduction_of_f64_is_a_sequential_fold) {
  check_every_op_folds_sequentially<double>();
}

BOOST_AUTO_TEST_CASE(every_reduction_of_i32_is_a_sequential_fold) {
  check_every_op_folds_sequentially<int32_t>();
}

BOOST_AUTO_TEST_CASE(every_reduction_of_i64_is_a_sequential_fold) {
  check_every_op_folds_sequentially<int64_t>();
}

BOOST_AUTO_TEST_CASE(a_float_sum_follows_participant_order_not_value_order) {
  // (1e8 + 1) - 1e8 is 0 in f32; (1e8 - 1e8) + 1 is 1.
  std::vector<std::vector<float>> ordered{{1e8f}, {1.0f}, {-1e8f}};
  BOOST_TEST(reduced(reduce_op::sum, ordered)[0] == 0.0f);
  std::vector<std::vector<float>> reordered{{1e8f}, {-1e8f}, {1.0f}};
  BOOST_TEST(reduced(reduce_op::sum, reordered)[0] == 1.0f);
}

BOOST_AUTO_TEST_CASE(exact_values_of_each_reduction) {
  std::vector<std::vector<double>> xs{{1, -2, 8}, {4, 6, -1}, {-3, 5, 2}};
  BOOST_TEST(reduced(reduce_op::sum, xs) == (std::vector<double>{2, 9, 9}),
             boost::test_tools::per_element());
  BOOST_TEST(reduced(reduce_op::mean, xs)
               == (std::vector<double>{2.0 / 3, 3, 3}),
             boost::test_tools::per_element());
  BOOST_TEST(reduced(reduce_op::min, xs) == (std::vector<double>{-3, -2, -1}),
             boost::test_tools::per_element());
  BOOST_TEST(reduced(reduce_op::max, xs) == (std::vector<double>{4, 6, 8}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(an_integer_mean_rounds_toward_zero) {
  std::vector<std::vector<int64_t>> xs{{-7, 7, 5}, {0, 0, 0}, {0, 0, 0}};
  BOOST_TEST(reduced(reduce_op::mean, xs) == (std::vector<int64_t>{-2, 2, 1}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(an_integer_sum_wraps_around) {
  auto big = std::numeric_limits<int32_t>::max();
  std::vector<std::vector<int32_t>> xs{{big}, {1}};
  BOOST_TEST(reduced(reduce_op::sum, xs)[0]
             == std::numeric_limits<int32_t>::min());
}

BOOST_AUTO_TEST_CASE(u8_reduces_like_the_other_integers) {
  std::vector<std::vector<uint8_t>> xs{{200, 3}, {100, 9}};
  std::vector<const void*> ptrs{xs[0].data(), xs[1].data()};
  std::vector<uint8_t> out(2);
  reduce_into(reduce_op::max, dtype::u8, ptrs, out.data(), 2);
  BOOST_TEST(out == (std::vector<uint8_t>{200, 9}),
             boost::test_tools::per_element());
  reduce_into(reduce_op::sum, dtype::u8, ptrs, out.data(), 2);
  BOOST_TEST(out == (std::vector<uint8_t>{44, 12}), // 300 wraps to 44
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(only_numeric_dtypes_are_reducible) {
  for (auto t : {dtype::f32, dtype::f64, dtype::i32, dtype::i64, dtype::u8})
    BOOST_TEST(reducible(t), to_string(t));
  BOOST_TEST(!reducible(dtype::boolean));
  BOOST_TEST(!reducible(dtype::string));
}

BOOST_AUTO_TEST_SUITE_END()
