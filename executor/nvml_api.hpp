#pragma once

#include <memory>
#include <string>

#include <caf/expected.hpp>

#include "actors/proto/ops.pb.h"
#include "executor/library_call.hpp"
#include "executor/nvml_prototypes.hpp"
#include "wire/library_args.hpp"

namespace gleam::executor {

/// The GPU host's NVML (libnvidia-ml.so.1, installed with the driver),
/// loaded at run time like cuRAND (executor/vendor_library.hpp): dlopen by
/// explicit path and dlsym of each function of interpose/spec/nvml.spec the
/// server calls (the generated ones, the manual ones with an id and the
/// device lookup), by the exact exported name. Never bundled, never linked.
///
/// Members are plain function pointers named after the library functions.
/// A default-constructed nvml_api has every pointer null; tests fill in
/// their own. A function this NVML lacks stays null (its calls fail with
/// NVML_ERROR_NOT_SUPPORTED). load() initializes the library once
/// (nvmlInit_v2) and the destructor shuts it down: the server's NVML stays
/// initialized for the process, whatever its clients' nvmlInit/nvmlShutdown
/// do. Thread safety: the pointers never change after load().
class nvml_api {
public:
  /// The LibraryCall.library this api serves (executor::use_library).
  static constexpr auto library = proto::LibraryCall::NVML;

#define X(name) decltype(&::name) name = nullptr;
#include "executor/nvml_generated_api.inc"
#undef X
  /// The server's own initialization (load(), the destructor).
  decltype(&::nvmlInit_v2) nvmlInit_v2 = nullptr;
  decltype(&::nvmlShutdown) nvmlShutdown = nullptr;

  /// Every entry point null, no library held.
  nvml_api() = default;

  nvml_api(const nvml_api&) = delete;
  nvml_api& operator=(const nvml_api&) = delete;

  /// Shuts the library down and closes it (if load() opened it).
  ~nvml_api();

  /// Opens libnvidia-ml.so.1 from `dir` (empty: the first of
  /// $GLEAM_NVML_DIR, the directory of the driver's loaded libcuda.so.1,
  /// /usr/local/nvidia/lib64, /usr/lib/x86_64-linux-gnu, /usr/lib64,
  /// /usr/lib that has it; never Gleam's own), resolves every entry point and calls
  /// nvmlInit_v2. Error: no_vendor_library when it cannot be opened or is
  /// Gleam's; missing_symbol when it lacks nvmlInit_v2; driver_call_failed
  /// when nvmlInit_v2 fails (no driver, a driver/library mismatch).
  [[nodiscard]] static caf::expected<std::unique_ptr<nvml_api>>
  load(const std::string& dir = {});

  /// The process's instance, loaded by the first call (thread-safe); the
  /// error of that load on every call when it failed.
  [[nodiscard]] static caf::expected<nvml_api*> shared();

private:
  void* lib_ = nullptr;
  bool initialized_ = false;
};

/// Runs generated NVML function `function` (its spec id) with the
/// arguments in `in`; false when no generated function has that id.
/// Generated from interpose/spec/nvml.spec (nvml_library_calls.cpp).
bool run_generated_nvml(nvml_api& api, library_call_env& env, uint32_t function,
                        wire::arg_reader& in);

/// Runs the hand-written server side of the manual NVML functions with an
/// id (the process lists, executor/nvml_processes.cpp); false when
/// `function` is none of them.
bool run_manual_nvml(nvml_api& api, library_call_env& env, uint32_t function,
                     wire::arg_reader& in);

} // namespace gleam::executor
