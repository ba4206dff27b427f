@0xdeb8682b22e8546d;

# What epochrt keeps on disk in Cap'n Proto: the records of a checkpoint
# (manifests, blob entries, chunks) and the job's metadata record. The C++
# value types in messages/checkpoint_records.hpp mirror these structs field
# for field; messages/codec.hpp converts between the two and is tested for
# round trips. Messages between actors travel by CAF's `inspect` and are not
# declared here. Field numbers are part of the on-disk format: only ever add
# fields.

$import "/capnp/c++.capnp".namespace("epochrt::schema");

enum DType {
  f32 @0;
  f64 @1;
  i32 @2;
  i64 @3;
  u8 @4;
  boolean @5;
  string @6;
}

# ---- checkpoint records on disk --------------------------------------------

struct BlobEntry {
  name @0 :Text;
  dtype @1 :DType;
  shape @2 :List(Int64);
  bytes @3 :UInt64;
  digest @4 :UInt64;         # XXH3-64 of the payload
  chunks @5 :UInt32;         # BlobChunk records, when inline
  dataEpoch @6 :Int64 = -1;  # -1: inline; else the epoch whose data file
  dataId @7 :UInt64;         #   (with this id in its header) holds the
  offset @8 :UInt64;         #   payload at this offset
}

# Written last, in a synced batch: its presence makes a database complete.
struct Manifest {
  node @0 :Text;
  epoch @1 :Int64;
  blobs @2 :List(BlobEntry);
  totalBytes @3 :UInt64;
  createdUnixMs @4 :Int64;
}

# One chunk of a blob's payload. A blob of n chunks is stored under keys
# chunk 0..n-1; each chunk carries the digest of its own bytes so that a
# flipped byte is found at the chunk that holds it.
struct BlobChunk {
  name @0 :Text;
  index @1 :UInt32;
  data @2 :Data;
  strings @3 :List(Text);
  digest @4 :UInt64;
}

struct CheckpointStats {
  node @0 :Text;
  db @1 :Text;
  durationUs @2 :Int64;
  bytes @3 :UInt64;
  blobs @4 :UInt64;
  writtenBytes @5 :UInt64;   # of a save: payload written, not reused
  reusedBlobs @6 :UInt64;    # of a save: blobs reusing an earlier payload
  snapshotUs @7 :Int64;      # of a save: taking the workspace's snapshot
  syncUs @8 :Int64;          # of a save: fsyncs and the synced manifest
}

struct CheckpointMetadata {
  dbPrefix @0 :Text;
  nodeNames @1 :List(Text);
  committedEpochs @2 :List(Int64);
  lastStats @3 :List(CheckpointStats);
  lastAction @4 :Text;
  finalEpoch @5 :Int64 = -1;   # the epoch after which the job stopped
  jobDefinition @6 :Text;       # canonical JSON of the job that committed
}
