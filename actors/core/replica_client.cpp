#include <epochrt/actors/core/replica_client.hpp>

#include <deque>

#include <caf/actor_system.hpp>
#include <caf/unit.hpp>

#include <epochrt/actors/api/actors_errc.hpp>
#include <epochrt/actors/detail/blocking_request.hpp>
#include <epochrt/messages/replica_protocol.hpp>
#include <epochrt/persistence/checkpoint_copy.hpp>
#include <epochrt/persistence/db_name.hpp>

namespace epochrt {

namespace {

// The database of `epoch` of the node whose database of `own_epoch` is
// `db`, as the master names it, and where it is here.
struct database_names {
  std::string wire;
  std::string local;
};

caf::expected<database_names> names_of(const std::string& db, int64_t own_epoch,
                                       int64_t epoch,
                                       const place_function& place) {
  auto wire = db_path_of_epoch(db, own_epoch, epoch);
  if (!wire)
    return std::move(wire.error());
  auto local = place(*wire);
  if (!local)
    return std::move(local.error());
  return database_names{std::move(*wire), std::move(*local)};
}

// Sends every file of one database in pieces, at most copy_window
// unanswered at once, and returns the digest of each file.
caf::expected<std::vector<uint64_t>>
send_files(caf::actor_system& sys, const caf::actor& store, uint64_t ticket,
           const std::string& local_db, const database_listing& listing,
           std::chrono::milliseconds timeout, uint64_t& sent) {
  std::vector<uint64_t> digests;
  std::deque<detail::pending_reply<caf::unit_t>> in_flight;
  auto settle_one = [&]() -> caf::error {
    auto reply = in_flight.front().get(timeout);
    in_flight.pop_front();
    if (!reply)
      return std::move(reply.error());
    return {};
  };
  for (auto& file : listing.files) {
    auto reader = database_file_reader::open(local_db, file.name);
    if (!reader)
      return std::move(reader.error());
    for (;;) {
      copy_data piece{ticket, file.name, reader->bytes_read(), {}};
      if (auto err = reader->read(copy_piece_bytes, piece.bytes))
        return err;
      if (piece.bytes.empty())
        break;
      sent += piece.bytes.size();
      if (in_flight.size() == copy_window)
        if (auto err = settle_one())
          return err;
      in_flight.push_back(
        detail::start_request<caf::unit_t>(sys, store, std::move(piece)));
    }
    digests.push_back(reader->digest());
  }
  while (!in_flight.empty())
    if (auto err = settle_one())
      return err;
  return digests;
}

// A store that answered a request (`what`) that asked for no stream with a
// stream's token: it does not speak the protocol this daemon does.
caf::error unasked_token(const std::string& address, const char* what) {
  return make_error(actors_errc::rejected,
                    "the replica store at " + address + " answered " + what
                      + " without a stream with a stream's token");
}

} // namespace

caf::expected<copy_outcome>
push_copy(caf::actor_system& sys, const caf::actor& store,
          const std::string& node, const std::string& db, int64_t epoch,
          const place_function& place, std::chrono::milliseconds timeout,
          const std::string& address, const copy_stream_ends& streams,
          const std::string& files_at) {
  auto local = place(db);
  if (!local)
    return std::move(local.error());
  auto listings = list_for_copy(*local, epoch, files_at);
  if (!listings)
    return std::move(listings.error());
  copy_outcome outcome;
  for (auto& listing : *listings) {
    auto names = names_of(db, epoch, listing.epoch, place);
    if (!names)
      return std::move(names.error());
    if (listing.epoch == epoch && !files_at.empty())
      names->local = files_at;
    auto ticket = detail::blocking_request<copy_ticket>(
      sys, store, timeout,
      copy_offer{node, names->wire, listing, streams.send != nullptr});
    if (!ticket)
      return std::move(ticket.error());
    if (ticket->id == 0)
      continue; // held there already
    if (!ticket->token.empty()) {
      if (!streams.send)
        return unasked_token(address, "an offer");
      auto err = streams.send(address, ticket->token, names->local, listing,
                              outcome.bytes);
      if (!err) {
        ++outcome.databases;
        continue;
      }
      if (!is_error(err, actors_errc::unreachable))
        return err;
      // The holder took no stream just now (it serves too many): the
      // bytes go as messages, under a ticket that replaces the first.
      ticket = detail::blocking_request<copy_ticket>(
        sys, store, timeout, copy_offer{node, names->wire, listing, false});
      if (!ticket)
        return std::move(ticket.error());
      if (ticket->id == 0)
        continue;
    }
    auto digests = send_files(sys, store, ticket->id, names->local, listing,
                              timeout, outcome.bytes);
    if (!digests)
      return std::move(digests.error());
    auto closed = detail::blocking_request<caf::unit_t>(
      sys, store, timeout, copy_close{ticket->id, std::move(*digests)});
    if (!closed)
      return std::move(closed.error());
    ++outcome.databases;
  }
  return outcome;
}

namespace {

// Reads one file of a database from `store` (at `address`) into `copy`;
// the digest the store computed over what it sent.
caf::expected<uint64_t>
receive_file(caf::actor_system& sys, const caf::actor& store,
             const std::string& node, const std::string& wire_db,
             const database_file& file, database_copy& copy,
             std::chrono::milliseconds timeout, uint64_t& received,
             const std::string& address, const copy_stream_ends& streams) {
  auto ticket = detail::blocking_request<copy_ticket>(
    sys, store, timeout,
    copy_open{node, wire_db, file.name, streams.fetch != nullptr});
  if (!ticket)
    return std::move(ticket.error());
  if (!ticket->token.empty()) {
    if (!streams.fetch)
      return unasked_token(address, "an open");
    auto sink = [&](const char* data, size_t size) {
      return copy.append(file.name, data, size);
    };
    auto before = received;
    auto digest
      = streams.fetch(address, ticket->token, file.bytes, sink, received);
    // Only a stream that never began may be tried again as messages: its
    // copy holds none of the file's bytes.
    if (digest || !is_error(digest.error(), actors_errc::unreachable)
        || received != before)
      return digest;
    // The store's daemon took no stream just now: as messages instead.
    ticket = detail::blocking_request<copy_ticket>(
      sys, store, timeout, copy_open{node, wire_db, file.name, false});
    if (!ticket)
      return std::move(ticket.error());
  }
  for (;;) {
    auto piece = detail::blocking_request<copy_piece>(
      sys, store, timeout, copy_read{ticket->id, copy_piece_bytes});
    if (!piece)
      return std::move(piece.error());
    received += piece->bytes.size();
    if (!piece->bytes.empty())
      if (auto err
          = copy.append(file.name, piece->bytes.data(), piece->bytes.size()))
        return err;
    if (piece->last)
      return piece->digest;
  }
}

} // namespace

caf::expected<copy_outcome>
pull_copy(caf::actor_system& sys, const caf::actor& store,
          const std::string& node, const std::string& db, int64_t epoch,
          const place_function& place, std::chrono::milliseconds timeout,
          fault_injector* faults, const std::string& address,
          const copy_stream_ends& streams) {
  auto listings = detail::blocking_request<copy_listings>(
    sys, store, timeout, copy_list{node, db, epoch});
  if (!listings)
    return std::move(listings.error());
  copy_outcome outcome;
  for (auto& listing : listings->databases) {
    auto names = names_of(db, epoch, listing.epoch, place);
    if (!names)
      return std::move(names.error());
    copy_options opts;
    opts.faults = faults;
    opts.node = node;
    opts.epoch = listing.epoch;
    auto copy = database_copy::create(names->local, listing, opts);
    if (!copy)
      return std::move(copy.error());
    std::vector<uint64_t> digests;
    for (auto& file : listing.files) {
      auto digest = receive_file(sys, store, node, names->wire, file, **copy,
                                 timeout, outcome.bytes, address, streams);
      if (!digest)
        return std::move(digest.error());
      digests.push_back(*digest);
    }
    if (auto err = (*copy)->finish(digests))
      return err;
    ++outcome.databases;
  }
  return outcome;
}

} // namespace epochrt
