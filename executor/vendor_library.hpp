#pragma once

#include <dlfcn.h>

#include <memory>
#include <mutex>
#include <string>
#include <type_traits>
#include <vector>

#include <caf/expected.hpp>

#include "executor/error.hpp"

namespace gleam::executor {

/// Where to look for a vendor library (cuBLAS, cuRAND, …) and what to call
/// it in messages.
struct vendor_library_search {
  /// The SONAME to open, e.g. "libcurand.so.10".
  const char* soname;
  /// The environment variable naming a directory to try first, e.g.
  /// "GLEAM_CURAND_DIR".
  const char* env_var;
  /// The library as a user knows it, e.g. "CUDA 13 cuRAND".
  const char* what;
  /// The error a failure carries (no_blas_library for cuBLAS).
  error_code failure = error_code::no_vendor_library;
  /// The directories after $`env_var`, null-terminated; null: the CUDA
  /// toolkit's (/usr/local/cuda/lib64, /usr/local/cuda-13/lib64). NVML lives
  /// with the driver instead.
  const char* const* dirs = nullptr;
};

/// The directories a vendor library is looked for in: `dir` alone when it
/// is not empty, else $`env_var` (when set), then `defaults` (null: the
/// toolkit's /usr/local/cuda/lib64 and /usr/local/cuda-13/lib64). Never the
/// plain SONAME: through a gleam binary's RUNPATH it could resolve to
/// Gleam's own interposer library of the same bundle, and loading that
/// would register the wire schema a second time in this process.
std::vector<std::string> vendor_library_dirs(const std::string& dir, const char* env_var,
                                             const char* const* defaults = nullptr);

/// Opens `search.soname` (RTLD_NOW | RTLD_GLOBAL: a later library of the
/// same vendor finds it) from the first directory of vendor_library_dirs()
/// that has it and is not Gleam's: a directory holding
/// libgleam_interpose.so, or a library defining Gleam's client runtime, is
/// skipped (a server must not forward to itself). The error lists every
/// path tried and why, and names `search.env_var`. Thread-safe (dlopen).
[[nodiscard]] caf::expected<void*> open_vendor_library(const std::string& dir,
                                                       const vendor_library_search& search);

/// Looks up every entry point of `api` in `lib` (dlsym by its exact name)
/// through `api.for_each_entry(f)`, which calls f(name, member) for each of
/// its function-pointer members; whether any was found.
template <class Api>
bool resolve_vendor_entries(Api& api, void* lib) {
  bool any = false;
  api.for_each_entry([&](const char* name, auto& member) {
    member = reinterpret_cast<std::remove_reference_t<decltype(member)>>(::dlsym(lib, name));
    any = any || member != nullptr;
  });
  return any;
}

/// Loads vendor library api `Api`: opens `search.soname` (open_vendor_library())
/// and fills a new `Api` with `resolve(Api&, void* lib)`, which keeps `lib`
/// (the api closes it) and looks up every entry point, returning whether it
/// found any. Error: open_vendor_library()'s; missing_symbol with
/// `none_found` when `resolve` found none (another library of that name).
template <class Api, class Resolve>
[[nodiscard]] caf::expected<std::unique_ptr<Api>>
load_vendor_api(const std::string& dir, const vendor_library_search& search,
                const char* none_found, Resolve resolve) {
  auto lib = open_vendor_library(dir, search);
  if (!lib)
    return std::move(lib.error());
  auto api = std::make_unique<Api>();
  if (!resolve(*api, *lib))
    return make_error(error_code::missing_symbol, none_found);
  return api;
}

/// The process's instance of vendor library api `Api` (Api::load() with no
/// directory), loaded by the first call; the error of that load on every
/// call when it failed. Thread-safe; never unloaded.
template <class Api>
caf::expected<Api*> shared_vendor_api() {
  static std::once_flag once;
  static caf::expected<std::unique_ptr<Api>>* loaded = nullptr;
  std::call_once(once, [] { loaded = new caf::expected<std::unique_ptr<Api>>(Api::load()); });
  if (!*loaded)
    return loaded->error();
  return loaded->value().get();
}

} // namespace gleam::executor
