#pragma once

#include <cstddef>

#include "actors/proto/ops.pb.h"
#include "executor/op_context.hpp"

namespace gleam::executor {

/// Runs one op on `cx.s` and writes its outcome into `cx.r`.
using op_handler = void (*)(op_context& cx, const proto::Op& op);

/// One op kind and the handler that runs it.
struct op_route {
  proto::Op::KindCase kind;
  op_handler run;
};

/// The routes of one op family: an array defined in the family's handler
/// file, alive for the whole program.
struct op_family {
  const op_route* routes;
  size_t size;
};

/// The family of the routes in `routes`.
template <size_t N>
constexpr op_family make_family(const op_route (&routes)[N]) {
  return op_family{routes, N};
}

/// The handler of an op that passes the message which `Get` (an accessor
/// of proto::Op) selects to `Run(cx, message)`.
template <auto Get, auto Run>
void with_message(op_context& cx, const proto::Op& op) {
  Run(cx, (op.*Get)());
}

/// Every op family, one line each: the name its handler file defines with
/// make_family (the file in the comment). A new family is a handler file
/// plus a line here. Every kind of proto::Op has exactly one handler among
/// them, or the first op the process runs stops it (a broken invariant).
#define GLEAM_EXECUTOR_OP_FAMILIES(X)                                                   \
  X(memory_family)      /* executor/memory_ops.cpp: allocations, copies, memsets */   \
  X(module_family)      /* executor/module_ops.cpp: modules, launches, functions */   \
  X(stream_family)      /* executor/stream_ops.cpp: streams and events */             \
  X(graph_family)       /* executor/graph_ops.cpp: capture, graphs, graph memory */   \
  X(context_family)     /* executor/context_ops.cpp: context sync, limits, reset */   \
  X(cache_family)       /* executor/cache_ops.cpp: the weight cache */                \
  X(blas_family)        /* executor/blas.cpp: cuBLAS / cuBLASLt */                    \
  X(library_family)     /* executor/library_runner.cpp: generated library calls */    \
  X(mem_pool_family)    /* executor/mem_pools.cpp: stream-ordered memory pools */     \
  X(vmm_family)         /* executor/vmm.cpp: virtual memory management */             \
  X(graph_copy_family)  /* executor/graph_copies.cpp: memcpy and memset nodes */      \
  X(graph_clone_family) /* executor/graph_clone.cpp: GraphClone */

#define GLEAM_EXECUTOR_DECLARE_OP_FAMILY(name) extern const op_family name;
GLEAM_EXECUTOR_OP_FAMILIES(GLEAM_EXECUTOR_DECLARE_OP_FAMILY)
#undef GLEAM_EXECUTOR_DECLARE_OP_FAMILY

/// Runs `op` of `cx.s` into `cx.r` by the handler of its kind; an op marked
/// capture_checked runs judged by `cx.judge` (executor/capture_judge.hpp)
/// when there is one. An op without a kind this server knows fails with
/// CUDA_ERROR_NOT_SUPPORTED. Not thread-safe (like the executor).
void run_op(op_context& cx, const proto::Op& op);

} // namespace gleam::executor
