// The recycler of all-reduce results (runtime/tensor_recycler.hpp): a
// payload comes back when its tensor's last owner drops it and goes to the
// next tensor of its size; what it keeps is bounded.
#include <epochrt/runtime/tensor_recycler.hpp>

#include <thread>
#include <vector>

#include "test_util.hpp"

using namespace epochrt;

namespace {

constexpr size_t big = tensor_recycler::min_bytes * 4;

} // namespace

BOOST_AUTO_TEST_SUITE(tensor_recycler_suite)

BOOST_AUTO_TEST_CASE(a_new_tensor_has_its_type_shape_and_zeroed_payload) {
  auto recycler = tensor_recycler::make(big * 4);
  auto x = recycler->make_tensor(dtype::f32, {2, 3}, big);
  BOOST_TEST(x->type == dtype::f32);
  BOOST_TEST(x->shape == (std::vector<int64_t>{2, 3}));
  BOOST_TEST(x->data.size() == big);
  BOOST_TEST(x->data[0] == 0);
  BOOST_TEST(x->data[big - 1] == 0);
}

BOOST_AUTO_TEST_CASE(a_dropped_payload_goes_to_the_next_tensor_of_its_size) {
  auto recycler = tensor_recycler::make(big * 4);
  auto x = recycler->make_tensor(dtype::u8, {}, big);
  auto* pages = x->data.data();
  BOOST_TEST(recycler->kept_bytes() == 0u);
  x.reset();
  BOOST_TEST(recycler->kept_bytes() == big);
  auto y = recycler->make_tensor(dtype::u8, {}, big);
  BOOST_TEST(static_cast<void*>(y->data.data()) == static_cast<void*>(pages));
  BOOST_TEST(recycler->kept_bytes() == 0u);
}

BOOST_AUTO_TEST_CASE(a_payload_of_another_size_is_not_taken) {
  auto recycler = tensor_recycler::make(big * 4);
  recycler->make_tensor(dtype::u8, {}, big).reset();
  auto y = recycler->make_tensor(dtype::u8, {}, big * 2);
  BOOST_TEST(y->data.size() == big * 2);
  BOOST_TEST(recycler->kept_bytes() == big);
}

BOOST_AUTO_TEST_CASE(a_payload_is_kept_only_while_another_owner_holds_none) {
  auto recycler = tensor_recycler::make(big * 4);
  auto x = recycler->make_tensor(dtype::u8, {}, big);
  auto copy = x;
  x.reset();
  BOOST_TEST(recycler->kept_bytes() == 0u);
  auto y = recycler->make_tensor(dtype::u8, {}, big);
  BOOST_TEST(static_cast<void*>(y->data.data())
             != static_cast<void*>(copy->data.data()));
}

BOOST_AUTO_TEST_CASE(what_is_kept_never_exceeds_the_limit_and_the_oldest_goes) {
  auto recycler = tensor_recycler::make(big * 2);
  std::vector<std::shared_ptr<tensor>> xs;
  for (int i = 0; i < 3; ++i)
    xs.push_back(recycler->make_tensor(dtype::u8, {}, big));
  auto* newest = xs.back()->data.data();
  xs.clear(); // dropped oldest first
  BOOST_TEST(recycler->kept_bytes() == big * 2);
  auto y = recycler->make_tensor(dtype::u8, {}, big);
  BOOST_TEST(static_cast<void*>(y->data.data()) == static_cast<void*>(newest));
}

BOOST_AUTO_TEST_CASE(a_payload_larger_than_the_limit_or_small_is_not_kept) {
  auto recycler = tensor_recycler::make(big);
  recycler->make_tensor(dtype::u8, {}, big * 2).reset();
  recycler->make_tensor(dtype::u8, {}, tensor_recycler::min_bytes - 1).reset();
  BOOST_TEST(recycler->kept_bytes() == 0u);
}

BOOST_AUTO_TEST_CASE(a_tensor_may_outlive_its_recycler) {
  auto recycler = tensor_recycler::make(big * 4);
  auto x = recycler->make_tensor(dtype::u8, {}, big);
  recycler.reset();
  x->data[0] = 1;
  x.reset(); // frees its payload; nothing to give it back to
}

BOOST_AUTO_TEST_CASE(tensors_dropped_on_many_threads_at_once_are_all_counted) {
  auto recycler = tensor_recycler::make(big * 64);
  std::vector<std::shared_ptr<tensor>> xs;
  for (int i = 0; i < 16; ++i)
    xs.push_back(recycler->make_tensor(dtype::u8, {}, big));
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&xs, t] {
      for (size_t i = static_cast<size_t>(t); i < xs.size(); i += 4)
        xs[i].reset();
    });
  for (auto& t : threads)
    t.join();
  BOOST_TEST(recycler->kept_bytes() == big * 16);
}

BOOST_AUTO_TEST_SUITE_END()
