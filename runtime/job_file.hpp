#pragma once

#include <cstdint>

#include <string>
#include <string_view>

#include <caf/expected.hpp>

#include <epochrt/runtime/job.hpp>

// Job files: a job as JSON, strictly checked. The format (also in
// docs/job-file.md):
//
//   {
//     "name": "pipeline",                  // required
//     "init":     [TASK, ...],             // each group optional, default []
//     "epoch":    [TASK, ...],
//     "download": [TASK, ...],
//     "exit":     [TASK, ...],
//     "stop_conditions": [{"node": "trainer_0", "blob": "finished"}],
//     "nodes_to_checkpoint": ["trainer_0"], // optional, default: init nodes
//     "epoch_limit": 1                      // optional: epoch_limiter(job, 1)
//   }
//   TASK = {"name": "read",                 // optional: "<group>/<node>/<i>"
//           "node": "trainer_0",            // required
//           "workspace": "global",          // or "private"; default global
//           "outputs": ["finished"],        // optional
//           "steps": [STEP, ...]}           // or "ops": [OP, ...] = one step
//   STEP = {"name": "...", "num_iter": 1, "stop_blob": "finished",
//           "ops": [OP, ...]}               // only "ops" is required
//   OP   = {"type": "Add", "inputs": ["a", "b"], "outputs": ["c"],
//           "args": {"value": 1.5, "shape": [8], "dtype": "f32",
//                    "flag": true, "names": ["x"]}}
//
// Arguments become tensors: an integer -> i64 scalar, a float -> f64
// scalar, a bool -> bool scalar, a string -> string scalar, an array of
// integers -> i64 1-D, an array of numbers with any float -> f64 1-D, an
// array of strings -> string 1-D, [] -> i64 [0]. Objects, null and mixed
// arrays are errors. `//` and `/* */` comments are allowed.
//
// Every error is one line: "<source>: <field path>: <expected, found>",
// e.g. "pipeline.json: epoch[0].steps[1].ops[0].args.value: expected a
// number, got a string"; syntax errors as "<source>:<line>:<column>: syntax
// error: ..."; unknown fields, duplicate fields, unknown ops, wrong
// argument kinds and everything `job::validate` checks are errors.

namespace epochrt {

class op_registry;

/// Parses and validates a job file's text. `source_name` prefixes every
/// error message (usually the file's path). Errors: `invalid_job`, or the
/// registry's code (`unknown_op`, `bad_argument`) for a bad op.
caf::expected<job> parse_job_json(std::string_view text,
                                  const std::string& source_name,
                                  const op_registry& registry);

/// Largest job file `load_job_file` reads: 64 MiB.
constexpr uint64_t max_job_file_bytes = uint64_t{64} << 20;

/// Reads `path` and parses it with `parse_job_json(text, path, registry)`.
/// Fails with `unreadable_file` ("<path>: <reason>") when the file cannot be
/// read, is not a regular file (a directory, a FIFO, a device such as
/// /dev/zero: refused without reading or waiting) or is larger than
/// `max_job_file_bytes`.
caf::expected<job> load_job_file(const std::string& path,
                                 const op_registry& registry);

} // namespace epochrt
