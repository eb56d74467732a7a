#include "executor/vendor_library.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>

#include <fmt/format.h>

namespace gleam::executor {

namespace {

/// A symbol only Gleam's interposer runtime defines (gleam::interpose::connect).
constexpr const char* interposer_marker = "_ZN5gleam9interpose7connectEv";

bool exists(const std::string& path) {
  return ::access(path.c_str(), F_OK) == 0;
}

} // namespace

std::vector<std::string> vendor_library_dirs(const std::string& dir, const char* env_var,
                                             const char* const* defaults) {
  if (!dir.empty())
    return {dir};
  static const char* const toolkit[] = {"/usr/local/cuda/lib64", "/usr/local/cuda-13/lib64",
                                        nullptr};
  std::vector<std::string> out;
  if (const char* env = std::getenv(env_var); env != nullptr && *env != '\0')
    out.emplace_back(env);
  for (auto* d = defaults != nullptr ? defaults : toolkit; *d != nullptr; ++d)
    out.emplace_back(*d);
  return out;
}

caf::expected<void*> open_vendor_library(const std::string& dir,
                                         const vendor_library_search& search) {
  std::string tried;
  for (const auto& d : vendor_library_dirs(dir, search.env_var, search.dirs)) {
    auto path = d + "/" + search.soname;
    if (exists(d + "/libgleam_interpose.so")) {
      tried += fmt::format("\n  {}: Gleam's interposer directory, not the vendor's", d);
      continue;
    }
    if (!exists(path)) {
      tried += fmt::format("\n  {}: no such file", path);
      continue;
    }
    if (void* h = ::dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL)) {
      if (::dlsym(h, interposer_marker) != nullptr) {
        ::dlclose(h);
        tried += fmt::format("\n  {}: Gleam's interposer, not the vendor's library", path);
        continue;
      }
      return h;
    }
    const char* why = ::dlerror();
    tried += fmt::format("\n  {}: {}", path, why != nullptr ? why : "not found");
  }
  return make_error(search.failure,
                    fmt::format("cannot load the vendor's {} ({}); install it or point {} at "
                                "its directory. Tried:{}",
                                search.soname, search.what, search.env_var, tried));
}

} // namespace gleam::executor
