@0xdeb8682b22e8546d;

# The single definition of everything epochrt stores or sends: tensors, job
# definitions, the actor protocol, and the records of a checkpoint on disk.
# The C++ value types in messages/*.hpp mirror these structs field for field;
# messages/codec.hpp converts between the two and is tested for round trips.
# Field numbers are part of the on-disk format: only ever add fields.

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

struct Tensor {
  dtype @0 :DType;
  shape @1 :List(Int64);
  data @2 :Data;             # numeric payload, little-endian, row-major
  strings @3 :List(Text);    # dtype string only
}

# ---- job definitions -------------------------------------------------------

struct Arg {
  name @0 :Text;
  value @1 :Tensor;
}

struct OpDef {
  type @0 :Text;
  inputs @1 :List(Text);
  outputs @2 :List(Text);
  args @3 :List(Arg);
}

struct StepDef {
  name @0 :Text;
  ops @1 :List(OpDef);
  numIter @2 :Int64 = 1;
  stopBlob @3 :Text;
}

enum WorkspaceType {
  global @0;
  private @1;
}

struct TaskDef {
  name @0 :Text;
  node @1 :Text;
  workspace @2 :WorkspaceType;
  steps @3 :List(StepDef);
  outputs @4 :List(Text);
}

struct TaskGroupDef {
  tasks @0 :List(TaskDef);
}

struct StopCondition {
  node @0 :Text;
  blob @1 :Text;
}

struct ChannelDef {
  name @0 :Text;
  node @1 :Text;
  capacity @2 :Int64 = 1;
  blobs @3 :List(Text);
}

struct JobDef {
  name @0 :Text;
  initGroup @1 :TaskGroupDef;
  epochGroup @2 :TaskGroupDef;
  downloadGroup @3 :TaskGroupDef;
  exitGroup @4 :TaskGroupDef;
  stopConditions @5 :List(StopCondition);
  nodesToCheckpoint @6 :List(Text);
  channels @7 :List(ChannelDef);
}

# ---- actor protocol --------------------------------------------------------

struct BlobValue {
  name @0 :Text;
  value @1 :Tensor;
}

struct TaskRef {
  node @0 :Text;
  task @1 :Text;
}

struct ChannelPlan {
  channel @0 :ChannelDef;
  putters @1 :List(TaskRef);
  takers @2 :List(TaskRef);
}

enum CollectiveKind {
  allReduce @0;
  broadcast @1;
  allGather @2;
  barrier @3;
}

enum ReduceOp {
  sum @0;
  mean @1;
  min @2;
  max @3;
}

struct CollectivePlan {
  name @0 :Text;
  kind @1 :CollectiveKind;
  op @2 :ReduceOp;
  root @3 :Text;
  participants @4 :List(TaskRef);
}

# The plan of a group run. Its peers (node -> endpoint actor) are actor
# handles, which only CAF's serialization carries: they are not here.
struct ExchangePlan {
  channels @0 :List(ChannelPlan);
  collectives @1 :List(CollectivePlan);
}

struct RunTasks {
  group @0 :Text;
  epoch @1 :Int64;
  tasks @2 :List(TaskDef);
  run @3 :UInt64;
  plan @4 :ExchangePlan;
}

struct ExchangeEnd {
  run @0 :UInt64;
  abort @1 :Bool;
}

struct ChannelState {
  channel @0 :Text;
  node @1 :Text;
  items @2 :UInt64;
  closed @3 :Bool;
}

struct ExchangeReport {
  channels @0 :List(ChannelState);
}

struct TaskOutput {
  task @0 :Text;
  blob @1 :Text;
  value @2 :Tensor;
}

struct OpTiming {
  index @0 :UInt32;
  type @1 :Text;
  offsetUs @2 :Int64;
  durationUs @3 :Int64;
}

struct TaskTiming {
  node @0 :Text;
  task @1 :Text;
  offsetUs @2 :Int64;
  durationUs @3 :Int64;
  slowOps @4 :List(OpTiming);
}

struct TasksDone {
  node @0 :Text;
  outputs @1 :List(TaskOutput);
  timings @2 :List(TaskTiming);
}

struct FetchBlobs {
  names @0 :List(Text);
}

struct BlobValues {
  blobs @0 :List(BlobValue);
}

struct PutBlobs {
  blobs @0 :List(BlobValue);
}

struct InitCheckpoint {
  node @0 :Text;
  db @1 :Text;
  replicaHolders @2 :List(Text);  # daemons that keep copies ("host:port")
  replicaSources @3 :List(Text);  # daemons a restore may pull from
  keptDbs @4 :List(Text);         # the other committed epochs' databases
}

struct BlobNames {
  names @0 :List(Text);
}

struct SaveCheckpoint {
  node @0 :Text;
  epoch @1 :Int64;
  db @2 :Text;
  blobNames @3 :List(Text);
  full @4 :Bool;             # write every payload, reuse none
}

struct LoadCheckpoint {
  node @0 :Text;
  epoch @1 :Int64;
  db @2 :Text;
  blobNames @3 :List(Text);
  allowIncomplete @4 :Bool;
}

struct CheckCheckpoint {
  db @0 :Text;
  verifyData @1 :Bool;
}

struct CheckpointStatus {
  exists @0 :Bool;
  complete @1 :Bool;
  intact @2 :Bool;
  problem @3 :Text;
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
