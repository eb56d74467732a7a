#pragma once

#include <memory>
#include <string>

#include <caf/expected.hpp>
#include <curand.h>

#include "actors/proto/ops.pb.h"
#include "executor/library_call.hpp"
#include "wire/library_args.hpp"

namespace gleam::executor {

/// The vendor's cuRAND (libcurand.so.10), loaded at run time like cuBLAS
/// (executor/vendor_library.hpp): dlopen by explicit path and dlsym of each
/// function of interpose/spec/curand.spec that travels as a LibraryCall
/// (generated ones and the manual ones with an id), by the exact name
/// curand.h declares. No gleam binary links cuRAND.
///
/// Members are plain function pointers named after the library functions.
/// A default-constructed curand_api has every pointer null; tests may fill
/// in their own. A function this cuRAND lacks stays null (its calls fail
/// with the library's "not supported" status). Thread safety: the pointers
/// never change after load().
class curand_api {
public:
  /// The LibraryCall.library this api serves (executor::use_library).
  static constexpr auto library = proto::LibraryCall::CURAND;

#define X(name) decltype(&::name) name = nullptr;
#include "executor/curand_generated_api.inc"
#undef X

  /// Every entry point null, no library held.
  curand_api() = default;

  /// Calls f(name, member) for every entry point (resolve_vendor_entries).
  template <class F>
  void for_each_entry(F&& f) {
#define X(name) f(#name, name);
#include "executor/curand_generated_api.inc"
#undef X
  }

  curand_api(const curand_api&) = delete;
  curand_api& operator=(const curand_api&) = delete;

  /// Closes the library (if load() opened it).
  ~curand_api();

  /// Opens libcurand.so.10 from `dir` (empty: the first of
  /// $GLEAM_CURAND_DIR, /usr/local/cuda/lib64, /usr/local/cuda-13/lib64
  /// that has it; never Gleam's own) and resolves every entry point.
  /// Error: no_vendor_library when it cannot be opened or is Gleam's;
  /// missing_symbol when it has none of the functions (not cuRAND).
  [[nodiscard]] static caf::expected<std::unique_ptr<curand_api>>
  load(const std::string& dir = {});

  /// The process's instance, loaded by the first call (thread-safe); the
  /// error of that load on every call when it failed.
  [[nodiscard]] static caf::expected<curand_api*> shared();

private:
  void* lib_ = nullptr;
};

/// Runs generated cuRAND function `function` (its spec id) with the
/// arguments in `in`; false when no generated function has that id.
/// Generated from interpose/spec/curand.spec (curand_library_calls.cpp).
bool run_generated_curand(curand_api& api, library_call_env& env, uint32_t function,
                          wire::arg_reader& in);

/// Runs the hand-written server side of the manual cuRAND functions with
/// an id (the host tables: curandGetDirectionVectors32/64,
/// curandGetScrambleConstants32/64; executor/curand_tables.cpp); false
/// when `function` is none of them.
bool run_manual_curand(curand_api& api, library_call_env& env, uint32_t function,
                       wire::arg_reader& in);

} // namespace gleam::executor
