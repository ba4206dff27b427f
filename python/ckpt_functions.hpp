#pragma once

namespace pybind11 {
class module_;
} // namespace pybind11

namespace epochrt::python {

/// Defines ckpt_ls, ckpt_show and ckpt_verify in `m`: `epochrt ckpt ls`,
/// `show` and `verify` of a checkpoint directory as functions returning
/// Python values. They read the directory only (never lock or write it),
/// so they may run beside a job; each releases the GIL while it reads.
void bind_ckpt_functions(pybind11::module_& m);

} // namespace epochrt::python
