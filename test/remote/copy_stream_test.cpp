// A daemon's end of copy streams (actors/remote/copy_stream_receiver.hpp)
// against the pushing end and against a peer that lies or stalls: real
// stream sockets (socketpair) and real files, in one process.

#include <boost/test/unit_test.hpp>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "test/support/temp_dir.hpp"
#include <epochrt/actors/api/actors_errc.hpp>
#include <epochrt/actors/remote/copy_stream_receiver.hpp>
#include <epochrt/actors/remote/proof.hpp>
#include <epochrt/actors/remote/socket_io.hpp>
#include <epochrt/faults/fault_injector.hpp>
#include <epochrt/messages/error_text.hpp>
#include <epochrt/persistence/checkpoint_copy.hpp>

using namespace std::chrono_literals;
using namespace epochrt;
using epochrt::test::temp_dir;
namespace fs = std::filesystem;

namespace {

// A peer's reading of the receiver's status: its code, and its text.
struct status {
  int code = -1;
  std::string text;
};

status read_status(int fd, std::chrono::milliseconds timeout) {
  auto deadline = detail::socket_clock::now() + timeout;
  char head[5];
  if (detail::receive_all(fd, head, sizeof(head), deadline))
    return {};
  uint32_t length = 0;
  for (int i = 0; i < 4; ++i)
    length |= uint32_t{static_cast<unsigned char>(head[1 + i])} << (8 * i);
  std::string text(length, '\0');
  if (detail::receive_all(fd, text.data(), text.size(), deadline))
    return {};
  return {head[0], text};
}

bool send(int fd, const std::string& bytes) {
  return !detail::send_all(fd, bytes, detail::socket_clock::now() + 5s);
}

bool send(int fd, const std::vector<char>& bytes) {
  return send(fd, std::string{bytes.begin(), bytes.end()});
}

// A database directory of two files to copy, and where the copy goes.
struct stream_fixture {
  temp_dir dir;
  std::string source = dir.sub("from/trainer_0.3");
  std::string place = dir.sub("to/trainer_0.3");
  database_listing listing;
  std::shared_ptr<copy_stream_receiver> receiver;

  stream_fixture() : stream_fixture(copy_stream_limits{}) {
    // nop
  }

  explicit stream_fixture(copy_stream_limits limits) {
    fs::create_directories(source);
    write("blobs.data", std::string(3 << 20, 'd') + "tail");
    write("MANIFEST", "manifest");
    listing = database_listing{3, 0, 0, {}};
    for (auto name : {"blobs.data", "MANIFEST"})
      listing.files.push_back(
        database_file{name, fs::file_size(source + "/" + name)});
    receiver = copy_stream_receiver::make(limits, nullptr);
  }

  ~stream_fixture() {
    receiver->stop();
  }

  void write(const std::string& name, const std::string& bytes) {
    std::ofstream{source + "/" + name, std::ios::binary} << bytes;
  }

  std::string read(const std::string& file) {
    std::ifstream in{file, std::ios::binary};
    return {std::istreambuf_iterator<char>{in}, {}};
  }

  // A copy of the listing that waits for its stream: its token.
  std::vector<char> expect(copy_options opts = {}) {
    auto copy = database_copy::create(place, listing, std::move(opts));
    BOOST_REQUIRE(copy);
    return receiver->expect(std::move(*copy));
  }

  // One end of a stream the receiver serves; the test's end.
  int connect() {
    int ends[2];
    BOOST_REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ends)
                  == 0);
    BOOST_REQUIRE(receiver->serve(ends[0]));
    return ends[1];
  }

  caf::error push(const std::vector<char>& token, uint64_t& sent) {
    detail::socket_guard stream{connect()};
    return send_copy_stream(stream.get(), token, source, listing, 5s, sent);
  }

  // A stream that showed its token and sent `bytes` of its first file;
  // the test's end.
  std::unique_ptr<detail::socket_guard> stream_begun(size_t bytes) {
    auto token = expect();
    auto stream = std::make_unique<detail::socket_guard>(connect());
    BOOST_REQUIRE(send(stream->get(), token));
    BOOST_REQUIRE(read_status(stream->get(), 5s).code == 0);
    BOOST_REQUIRE(send(stream->get(), std::string(bytes, 'd')));
    return stream;
  }

  // Whether the receiver serves one more stream.
  bool serves_another() {
    int ends[2];
    BOOST_REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ends)
                  == 0);
    detail::socket_guard mine{ends[1]};
    detail::socket_guard theirs{ends[0]};
    if (!receiver->serve(theirs.get()))
      return false;
    theirs.release(); // the receiver's now
    return true;
  }

  bool placed_nothing() {
    return !fs::exists(place) && !fs::exists(place + ".copying");
  }
};

// `Base`, its receiver bounded by `Limits`.
template <class Base, const copy_stream_limits& Limits>
struct limited : Base {
  limited() : Base(Limits) {
    // nop
  }
};

} // namespace

BOOST_AUTO_TEST_SUITE(copy_streams)

BOOST_FIXTURE_TEST_CASE(a_copy_sent_on_a_stream_is_placed_byte_for_byte,
                        stream_fixture) {
  uint64_t sent = 0;
  auto err = push(expect(), sent);
  BOOST_REQUIRE_MESSAGE(!err, error_text(err));
  BOOST_TEST(sent == listing.files[0].bytes + listing.files[1].bytes);
  for (auto& file : listing.files)
    BOOST_TEST(read(place + "/" + file.name) == read(source + "/" + file.name),
               file.name);
  BOOST_TEST(!fs::exists(place + ".copying"));
}

BOOST_FIXTURE_TEST_CASE(a_stream_with_an_unknown_token_is_refused,
                        stream_fixture) {
  auto token = expect();
  token[0] ^= 1;
  uint64_t sent = 0;
  auto err = push(token, sent);
  BOOST_REQUIRE(err);
  BOOST_TEST(is_error(err, actors_errc::rejected));
  BOOST_TEST(error_text(err).find("no copy or read waits") != std::string::npos,
             error_text(err));
  BOOST_TEST(sent == 0u);
  BOOST_TEST(!fs::exists(place));
}

BOOST_FIXTURE_TEST_CASE(a_token_is_good_for_one_stream, stream_fixture) {
  auto token = expect();
  uint64_t sent = 0;
  BOOST_REQUIRE(!push(token, sent));
  auto again = push(token, sent);
  BOOST_REQUIRE(again);
  BOOST_TEST(is_error(again, actors_errc::rejected));
}

BOOST_FIXTURE_TEST_CASE(a_file_that_fails_its_digest_places_nothing,
                        stream_fixture) {
  auto token = expect();
  detail::socket_guard stream{connect()};
  BOOST_REQUIRE(send(stream.get(), token));
  BOOST_REQUIRE(read_status(stream.get(), 5s).code == 0);
  for (auto& file : listing.files)
    BOOST_REQUIRE(send(stream.get(), read(source + "/" + file.name)));
  // Digests of zero: not those of the bytes.
  BOOST_REQUIRE(send(stream.get(), std::string(16, '\0')));
  auto verdict = read_status(stream.get(), 5s);
  BOOST_TEST(verdict.code == 1);
  BOOST_TEST(verdict.text.find("digest") != std::string::npos, verdict.text);
  BOOST_TEST(placed_nothing());
}

BOOST_FIXTURE_TEST_CASE(a_file_that_changed_since_its_listing_is_not_sent,
                        stream_fixture) {
  auto token = expect();
  write("MANIFEST", "short");
  uint64_t sent = 0;
  auto err = push(token, sent);
  BOOST_REQUIRE(err);
  BOOST_TEST(is_error(err, actors_errc::checkpoint_failed), error_text(err));
  BOOST_TEST(error_text(err).find("changed") != std::string::npos,
             error_text(err));
  // The receiver sees the stream end short, and drops the copy.
  receiver->stop();
  BOOST_TEST(placed_nothing());
}

// Steps of 200 ms.
constexpr copy_stream_limits stalling{8, 64, std::chrono::minutes(2), 200ms,
                                      200ms};
using stalling_fixture = limited<stream_fixture, stalling>;

BOOST_FIXTURE_TEST_CASE(a_stream_that_stops_sending_is_cut_off_in_time,
                        stalling_fixture) {
  auto stream = stream_begun(1000);
  auto started = std::chrono::steady_clock::now();
  auto verdict = read_status(stream->get(), 5s);
  BOOST_TEST(verdict.code == 1);
  BOOST_TEST((std::chrono::steady_clock::now() - started < 3s));
  receiver->stop();
  BOOST_TEST(placed_nothing());
}

// 200 ms to show the token.
constexpr copy_stream_limits token_timeout{8, 64, std::chrono::minutes(2),
                                           200ms, 10s};
using token_timeout_fixture = limited<stream_fixture, token_timeout>;

BOOST_FIXTURE_TEST_CASE(a_stream_that_never_shows_its_token_is_closed_in_time,
                        token_timeout_fixture) {
  expect();
  detail::socket_guard stream{connect()};
  auto started = std::chrono::steady_clock::now();
  auto verdict = read_status(stream.get(), 5s);
  BOOST_TEST(verdict.code == 1);
  BOOST_TEST((std::chrono::steady_clock::now() - started < 3s));
}

BOOST_FIXTURE_TEST_CASE(a_holder_that_fails_mid_stream_tells_the_pusher_why,
                        stream_fixture) {
  fault_rule rule;
  rule.point = fault_point::copy_write;
  rule.kind = fault_kind::io_error;
  rule.error = EIO;
  fault_plan failing;
  failing.faults.push_back(rule);
  fault_injector faults{std::move(failing)};
  copy_options opts;
  opts.faults = &faults;
  auto token = expect(opts);
  uint64_t sent = 0;
  auto err = push(token, sent);
  BOOST_REQUIRE(err);
  BOOST_TEST(is_error(err, actors_errc::rejected), error_text(err));
  BOOST_TEST(error_text(err).find("copy.write") != std::string::npos,
             error_text(err));
  receiver->stop();
  BOOST_TEST(placed_nothing());
}

BOOST_FIXTURE_TEST_CASE(
  a_stream_closed_before_its_token_is_taken_is_unreachable, stream_fixture) {
  auto token = expect();
  int ends[2];
  BOOST_REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ends)
                == 0);
  ::close(ends[0]); // as the doorman does when the receiver serves too many
  detail::socket_guard stream{ends[1]};
  uint64_t sent = 0;
  auto err = send_copy_stream(stream.get(), token, source, listing, 5s, sent);
  BOOST_REQUIRE(err);
  BOOST_TEST(is_error(err, actors_errc::unreachable), error_text(err));
  BOOST_TEST(sent == 0u);
}

// Steps of 2 s, and a whole stream at 1 GiB/s at least: a 3 MiB stream
// may take 3 s on the whole, however it spreads its bytes.
constexpr copy_stream_limits hurried{8,  64, std::chrono::minutes(2),
                                     5s, 2s, uint64_t{1} << 30};

using hurried_fixture = limited<stream_fixture, hurried>;

BOOST_FIXTURE_TEST_CASE(a_pusher_that_trickles_is_cut_off_on_the_whole,
                        hurried_fixture) {
  auto token = expect();
  detail::socket_guard stream{connect()};
  BOOST_REQUIRE(send(stream.get(), token));
  BOOST_REQUIRE(read_status(stream.get(), 5s).code == 0);
  // A MiB every 1.2 s: every step (2 s) gets its bytes, but the 3 MiB and
  // more of the listing would take 4.8 s, and 3 s are allowed.
  auto started = std::chrono::steady_clock::now();
  std::string piece(size_t{1} << 20, 'd');
  status verdict;
  while (std::chrono::steady_clock::now() - started < 10s) {
    if (detail::wait_for(stream.get(), POLLIN,
                         detail::socket_clock::now() + 1200ms)) {
      verdict = read_status(stream.get(), 1s);
      break;
    }
    if (!send(stream.get(), piece))
      break;
  }
  auto took = std::chrono::steady_clock::now() - started;
  BOOST_TEST(verdict.code == 1, verdict.text);
  BOOST_TEST((took > 2500ms && took < 4s),
             std::chrono::duration_cast<std::chrono::milliseconds>(took).count()
               << " ms");
  receiver->stop();
  BOOST_TEST(placed_nothing());
}

constexpr copy_stream_limits one_stream{1, 64, std::chrono::minutes(2), 10s,
                                        10s};
using one_stream_fixture = limited<stream_fixture, one_stream>;

BOOST_FIXTURE_TEST_CASE(streams_beyond_the_limit_are_refused,
                        one_stream_fixture) {
  detail::socket_guard first{connect()};
  BOOST_TEST(!serves_another());
}

BOOST_FIXTURE_TEST_CASE(a_new_copy_to_a_place_cuts_off_the_stream_there,
                        one_stream_fixture) {
  auto stream = stream_begun(1000);
  auto started = std::chrono::steady_clock::now();
  auto err = receiver->release(place);
  BOOST_REQUIRE_MESSAGE(!err, error_text(err));
  BOOST_TEST((std::chrono::steady_clock::now() - started < 3s));
  BOOST_TEST(placed_nothing());
  // The place is free: a new copy goes through.
  uint64_t sent = 0;
  BOOST_TEST(!push(expect(), sent));
}

BOOST_FIXTURE_TEST_CASE(a_stopped_receiver_ends_its_streams_and_takes_no_more,
                        one_stream_fixture) {
  auto stream = stream_begun(0);
  receiver->stop();
  BOOST_TEST(placed_nothing());
  BOOST_TEST(!serves_another());
}

// The digest of a whole file, as a reader of it computes it.
uint64_t digest_of(const std::string& db, const std::string& name) {
  auto reader = database_file_reader::open(db, name);
  BOOST_REQUIRE(reader);
  std::vector<char> piece;
  do
    BOOST_REQUIRE(!reader->read(1 << 20, piece));
  while (!piece.empty());
  return reader->digest();
}

struct read_fixture : stream_fixture {
  read_fixture() = default;

  explicit read_fixture(copy_stream_limits limits) : stream_fixture(limits) {
    // nop
  }

  uint64_t bytes() const {
    return listing.files[0].bytes;
  }

  // A read of the data file that waits for its stream: its token.
  std::vector<char> expect_read() {
    auto reader = database_file_reader::open(source, "blobs.data");
    BOOST_REQUIRE(reader);
    return receiver->expect_read(std::move(*reader));
  }

  caf::expected<uint64_t> fetch(const std::vector<char>& token,
                                std::string& into, uint64_t& received) {
    detail::socket_guard stream{connect()};
    auto sink = [&into](const char* data, size_t size) {
      into.append(data, size);
      return caf::error{};
    };
    return fetch_copy_stream(stream.get(), token, bytes(), sink, 5s, received);
  }
};

BOOST_FIXTURE_TEST_CASE(a_file_read_on_a_stream_arrives_with_its_digest,
                        read_fixture) {
  std::string bytes;
  uint64_t received = 0;
  auto digest = fetch(expect_read(), bytes, received);
  BOOST_REQUIRE(digest);
  BOOST_TEST(bytes == read(source + "/blobs.data"));
  BOOST_TEST(received == bytes.size());
  BOOST_TEST(*digest == digest_of(source, "blobs.data"));
}

BOOST_FIXTURE_TEST_CASE(a_read_token_is_good_for_one_stream, read_fixture) {
  auto token = expect_read();
  std::string bytes;
  uint64_t received = 0;
  BOOST_REQUIRE(fetch(token, bytes, received));
  auto again = fetch(token, bytes, received);
  BOOST_REQUIRE(!again);
  BOOST_TEST(is_error(again.error(), actors_errc::rejected));
}

BOOST_FIXTURE_TEST_CASE(a_holder_that_announces_a_huge_piece_is_refused,
                        read_fixture) {
  // The test plays a lying holder: it takes the token, then announces a
  // piece of 2^40 bytes, which the reader must not allocate.
  int ends[2];
  BOOST_REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ends)
                == 0);
  detail::socket_guard reader_end{ends[0]};
  detail::socket_guard holder_end{ends[1]};
  std::string lie{'\0', '\0', '\0', '\0', '\0'}; // status ok, no text
  lie += std::string{'\0', '\0', '\0', '\0', '\0', '\1', '\0', '\0'};
  BOOST_REQUIRE(send(holder_end.get(), lie));
  uint64_t received = 0;
  auto sink = [](const char*, size_t) {
    return caf::error{};
  };
  auto digest = fetch_copy_stream(reader_end.get(), detail::make_nonce(),
                                  bytes(), sink, 5s, received);
  BOOST_REQUIRE(!digest);
  BOOST_TEST(is_error(digest.error(), actors_errc::rejected),
             error_text(digest.error()));
  BOOST_TEST(received == 0u);
}

using hurried_read_fixture = limited<read_fixture, hurried>;

BOOST_FIXTURE_TEST_CASE(a_reader_that_drains_too_slowly_is_cut_off_and_told_why,
                        hurried_read_fixture) {
  // 12 MiB taken at about 1.7 MiB/s: every piece leaves the holder within
  // a step, the whole would take 7 s, 3 s are allowed.
  write("blobs.data", std::string(size_t{12} << 20, 'd'));
  auto token = expect_read();
  detail::socket_guard stream{connect()};
  auto sink = [](const char*, size_t) {
    std::this_thread::sleep_for(600ms);
    return caf::error{};
  };
  uint64_t received = 0;
  auto started = std::chrono::steady_clock::now();
  auto digest = fetch_copy_stream(stream.get(), token, size_t{12} << 20, sink,
                                  5s, received);
  BOOST_REQUIRE(!digest);
  BOOST_TEST(error_text(digest.error()).find("drains too slowly")
               != std::string::npos,
             error_text(digest.error()));
  BOOST_TEST(received < (uint64_t{12} << 20));
  BOOST_TEST((std::chrono::steady_clock::now() - started < 6s));
}

// One stream at a time: the holder's slot frees only once its thread ended.
constexpr copy_stream_limits one_read{1, 64, std::chrono::minutes(2), 5s, 5s};
using one_read_fixture = limited<read_fixture, one_read>;

BOOST_FIXTURE_TEST_CASE(a_sink_that_fails_ends_the_read_with_its_error,
                        one_read_fixture) {
  detail::socket_guard stream{connect()};
  auto sink = [](const char*, size_t) {
    return make_error(actors_errc::invalid_argument, "the disk is full");
  };
  uint64_t received = 0;
  auto digest = fetch_copy_stream(stream.get(), expect_read(), bytes(), sink,
                                  5s, received);
  BOOST_REQUIRE(!digest);
  BOOST_TEST(error_text(digest.error()).find("the disk is full")
               != std::string::npos,
             error_text(digest.error()));
  // The holder's thread ends once the reader is gone: its one slot frees.
  ::close(stream.release());
  auto deadline = std::chrono::steady_clock::now() + 3s;
  bool freed = false;
  while (!freed && std::chrono::steady_clock::now() < deadline) {
    freed = serves_another();
    std::this_thread::sleep_for(20ms);
  }
  BOOST_TEST(freed);
}

BOOST_AUTO_TEST_SUITE_END()
