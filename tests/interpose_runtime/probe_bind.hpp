#pragma once

// What the library probes (curand_probe.cpp, cudnn_probe.cpp) share: binding
// a function of a library they opened with dlopen, as an app would.

#include <dlfcn.h>

#include <cstdio>

namespace gleam::test {

/// Sets `out` to `name` in `lib`; false (after saying so on stderr) when
/// the library does not define it.
template <class F>
bool bind(void* lib, const char* name, F& out) {
  out = reinterpret_cast<F>(::dlsym(lib, name));
  if (out == nullptr)
    std::fprintf(stderr, "dlsym %s: %s\n", name, ::dlerror());
  return out != nullptr;
}

} // namespace gleam::test
