#include <epochrt/actors/remote/replica_store_actor.hpp>

#include <algorithm>
#include <chrono>
#include <map>

#include <caf/actor_system.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/stateful_actor.hpp>

#include <epochrt/actors/api/actors_errc.hpp>
#include <epochrt/actors/detail/log.hpp>
#include <epochrt/actors/detail/spawn_detached.hpp>
#include <epochrt/actors/remote/copy_stream_receiver.hpp>
#include <epochrt/faults/fault_injector.hpp>
#include <epochrt/messages/error_text.hpp>
#include <epochrt/messages/names.hpp>
#include <epochrt/messages/protocol.hpp>
#include <epochrt/messages/replica_protocol.hpp>
#include <epochrt/persistence/checkpoint_copy.hpp>
#include <epochrt/persistence/checkpoint_retention.hpp>
#include <epochrt/persistence/db_name.hpp>
#include <epochrt/persistence/path_guard.hpp>

namespace epochrt {

namespace {

using clock_type = std::chrono::steady_clock;

// A transfer or a read nobody used for this long is dropped: its peer died
// or gave up (each step of a peer waits far less).
constexpr auto idle_limit = std::chrono::minutes(10);

// Open transfers, and open reads, kept at most.
constexpr size_t max_open = 64;

// The most a read answers at once, whatever it asks.
constexpr uint64_t max_piece_bytes = uint64_t{16} << 20;

// Bytes of pieces that arrived ahead of their file's next offset, kept at
// most per transfer: a sender has twelve 4 MiB pieces in flight
// (replica_client.hpp); a peer's message may be far larger.
constexpr size_t max_early_bytes = size_t{64} << 20;

// Files a database may list: LevelDB's handful, the data file, and room to
// spare; a listing of more would have the store create them all.
constexpr size_t max_listed_files = 1024;

struct transfer {
  std::unique_ptr<database_copy> copy;
  std::string db; // where it goes here
  caf::node_id peer;
  clock_type::time_point used;
  // Each file's next offset, and the pieces that came before their turn.
  std::map<std::string, uint64_t, std::less<>> next = {};
  std::map<std::pair<std::string, uint64_t>, std::vector<char>> early = {};
  size_t early_bytes = 0;

  // Writes `bytes` at `offset` of `file` once every byte before it is
  // written; a piece seen before (a duplicate) is dropped.
  caf::error receive(const std::string& file, uint64_t offset,
                     std::vector<char> bytes) {
    auto& at = next[file];
    if (offset < at)
      return {};
    if (offset > at) {
      if (early_bytes + bytes.size() > max_early_bytes)
        return make_error(actors_errc::rejected,
                          "too many bytes of " + db + " out of order");
      auto size = bytes.size();
      if (early.try_emplace({file, offset}, std::move(bytes)).second)
        early_bytes += size; // else a duplicate, dropped
      return {};
    }
    if (auto err = copy->append(file, bytes.data(), bytes.size()))
      return err;
    at += bytes.size();
    for (auto i = early.find({file, at}); i != early.end();
         i = early.find({file, at})) {
      if (auto err = copy->append(file, i->second.data(), i->second.size()))
        return err;
      at += i->second.size();
      early_bytes -= i->second.size();
      early.erase(i);
    }
    return {};
  }
};

struct open_read {
  database_file_reader reader;
  caf::node_id peer;
  clock_type::time_point used;
};

struct store_state {
  std::string root;
  std::shared_ptr<fault_injector> faults;
  std::shared_ptr<copy_stream_receiver> streams;
  uint64_t next_ticket = 1;
  std::map<uint64_t, transfer> transfers;
  std::map<uint64_t, open_read> reads;
};

using store_ptr = caf::stateful_actor<store_state>*;

caf::error refuse(std::string why) {
  return make_error(actors_errc::rejected, std::move(why));
}

// Drops what nobody used for idle_limit, then the oldest while `open` is
// full: room for one more.
template <class Map>
void make_room(Map& open) {
  auto now = clock_type::now();
  for (auto i = open.begin(); i != open.end();)
    i = now - i->second.used > idle_limit ? open.erase(i) : std::next(i);
  while (open.size() >= max_open) {
    auto oldest
      = std::min_element(open.begin(), open.end(), [](auto& x, auto& y) {
          return x.second.used < y.second.used;
        });
    open.erase(oldest);
  }
}

// Where node `node`'s database `db` lives here; refused unless it is named
// as one of that node's databases (`<prefix><node>.<epoch>`), so that a
// peer can place nothing else.
caf::expected<std::string> place(store_ptr self, const std::string& node,
                                 const std::string& db, int64_t epoch) {
  if (auto problem = node_name_problem(node); !problem.empty())
    return refuse("invalid node name '" + node.substr(0, 64) + "': " + problem);
  // A path prefix may end in part of a file name (db_name.hpp).
  auto tail = node + "." + std::to_string(epoch);
  auto slash = db.find_last_of('/');
  auto base = slash == std::string::npos ? db : db.substr(slash + 1);
  if (epoch < 0 || base.size() < tail.size()
      || base.compare(base.size() - tail.size(), tail.size(), tail) != 0)
    return refuse("'" + db.substr(0, 256) + "' is not node " + node
                  + "'s database of epoch " + std::to_string(epoch));
  return resolve_under(self->state.root, db);
}

template <class Map>
auto find_open(store_ptr self, Map& open, uint64_t ticket)
  -> caf::expected<typename Map::iterator> {
  auto i = open.find(ticket);
  auto& sender = self->current_sender();
  if (i == open.end() || !sender || i->second.peer != sender->node())
    return refuse("no open copy has ticket " + std::to_string(ticket));
  i->second.used = clock_type::now();
  return i;
}

caf::result<copy_ticket> on_offer(store_ptr self, copy_offer& msg) {
  auto& st = self->state;
  auto& sender = self->current_sender();
  if (!sender)
    return refuse("an anonymous peer cannot copy here");
  if (msg.listing.files.size() > max_listed_files)
    return refuse("a database of " + std::to_string(msg.listing.files.size())
                  + " files is not a checkpoint");
  auto db = place(self, msg.node, msg.db, msg.listing.epoch);
  if (!db)
    return std::move(db.error());
  // One copy per place: an offer again (the owner retried) replaces it.
  // Before the place is looked at: a stream still writing there would
  // swap its copy in after the look.
  for (auto i = st.transfers.begin(); i != st.transfers.end();)
    i = i->second.db == *db ? st.transfers.erase(i) : std::next(i);
  if (st.streams)
    if (auto err = st.streams->release(*db))
      return err;
  if (holds_database(*db, msg.listing))
    return copy_ticket{0};
  make_room(st.transfers);
  copy_options opts;
  opts.faults = st.faults.get();
  opts.node = msg.node;
  opts.epoch = msg.listing.epoch;
  auto copy = database_copy::create(*db, std::move(msg.listing), opts);
  if (!copy)
    return std::move(copy.error());
  auto ticket = st.next_ticket++;
  if (msg.stream && st.streams)
    return copy_ticket{ticket, st.streams->expect(std::move(*copy))};
  st.transfers.emplace(
    ticket, transfer{std::move(*copy), *db, sender->node(), clock_type::now()});
  return copy_ticket{ticket};
}

caf::result<void> on_data(store_ptr self, copy_data& msg) {
  auto i = find_open(self, self->state.transfers, msg.ticket);
  if (!i)
    return std::move(i.error());
  auto err = (*i)->second.receive(msg.file, msg.offset, std::move(msg.bytes));
  if (err) {
    self->state.transfers.erase(*i);
    return err;
  }
  return caf::unit;
}

caf::result<void> on_close(store_ptr self, copy_close& msg) {
  auto i = find_open(self, self->state.transfers, msg.ticket);
  if (!i)
    return std::move(i.error());
  auto copy = std::move((*i)->second.copy);
  auto incomplete = !(*i)->second.early.empty();
  self->state.transfers.erase(*i);
  if (incomplete)
    return refuse("a transfer of " + copy->path()
                  + " was closed with pieces missing");
  if (auto err = copy->finish(msg.digests))
    return err;
  detail::log(self->system()).debug("copy of {} is durable", copy->path());
  return caf::unit;
}

caf::result<copy_listings> on_list(store_ptr self, copy_list& msg) {
  auto db = place(self, msg.node, msg.db, msg.epoch);
  if (!db)
    return std::move(db.error());
  auto listings = list_for_copy(*db, msg.epoch);
  if (!listings)
    return std::move(listings.error());
  return copy_listings{std::move(*listings)};
}

caf::result<copy_ticket> on_open(store_ptr self, copy_open& msg) {
  auto& st = self->state;
  auto& sender = self->current_sender();
  if (!sender)
    return refuse("an anonymous peer cannot read here");
  auto epoch = epoch_of_db_path(msg.db);
  if (!epoch)
    return std::move(epoch.error());
  auto db = place(self, msg.node, msg.db, *epoch);
  if (!db)
    return std::move(db.error());
  auto reader = database_file_reader::open(*db, msg.file);
  if (!reader)
    return std::move(reader.error());
  auto ticket = st.next_ticket++;
  if (msg.stream && st.streams)
    return copy_ticket{ticket, st.streams->expect_read(std::move(*reader))};
  make_room(st.reads);
  st.reads.emplace(
    ticket, open_read{std::move(*reader), sender->node(), clock_type::now()});
  return copy_ticket{ticket};
}

caf::result<copy_piece> on_read(store_ptr self, copy_read& msg) {
  auto& st = self->state;
  auto i = find_open(self, st.reads, msg.ticket);
  if (!i)
    return std::move(i.error());
  auto max = std::clamp<uint64_t>(msg.max_bytes, 1, max_piece_bytes);
  copy_piece piece;
  auto& reader = (*i)->second.reader;
  if (auto err = reader.read(max, piece.bytes)) {
    st.reads.erase(*i);
    return err;
  }
  // A short piece is the file's end (database_file_reader::read).
  if (piece.bytes.size() < max) {
    piece.last = true;
    piece.digest = reader.digest();
    st.reads.erase(*i);
  }
  return piece;
}

caf::result<pruned_checkpoints> on_prune(store_ptr self, copy_prune& msg) {
  auto& st = self->state;
  if (auto problem = node_name_problem(msg.node); !problem.empty())
    return refuse("invalid node name '" + msg.node.substr(0, 64)
                  + "': " + problem);
  std::vector<std::string> kept;
  for (auto& db : msg.kept) {
    auto placed = resolve_under(st.root, db);
    if (!placed)
      return std::move(placed.error());
    kept.push_back(std::move(*placed));
  }
  retention_options opts;
  opts.faults = st.faults.get();
  opts.node = msg.node;
  opts.kept_may_be_missing = true;
  auto report = remove_old_databases(kept, opts);
  if (!report)
    return std::move(report.error());
  return pruned_checkpoints{std::move(report->removed), report->bytes};
}

caf::behavior replica_store(store_ptr self, std::string root,
                            std::shared_ptr<fault_injector> faults,
                            std::shared_ptr<copy_stream_receiver> streams) {
  self->state.root = std::move(root);
  self->state.faults = std::move(faults);
  self->state.streams = std::move(streams);
  return {
    [self](copy_offer& msg) {
      return on_offer(self, msg);
    },
    [self](copy_data& msg) {
      return on_data(self, msg);
    },
    [self](copy_close& msg) {
      return on_close(self, msg);
    },
    [self](copy_list& msg) {
      return on_list(self, msg);
    },
    [self](copy_open& msg) {
      return on_open(self, msg);
    },
    [self](copy_read& msg) {
      return on_read(self, msg);
    },
    [self](copy_prune& msg) {
      return on_prune(self, msg);
    },
  };
}

} // namespace

caf::actor spawn_replica_store(caf::actor_system& sys, std::string root,
                               std::shared_ptr<fault_injector> faults,
                               std::shared_ptr<copy_stream_receiver> streams) {
  return detail::spawn_detached(sys, replica_store, std::move(root),
                                std::move(faults), std::move(streams));
}

} // namespace epochrt
