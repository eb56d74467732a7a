#include "tests/support/gpu_probe.hpp"

#include <dlfcn.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <sys/wait.h>

namespace gleam::test {

std::string gpu_unavailable_reason() {
  static std::once_flag once;
  static std::string reason;
  std::call_once(once, [] {
    void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) {
      reason = "no CUDA driver (libcuda.so.1 not loadable)";
      return;
    }
    using init_fn = int (*)(unsigned);
    using count_fn = int (*)(int*);
    auto init = reinterpret_cast<init_fn>(dlsym(lib, "cuInit"));
    auto count = reinterpret_cast<count_fn>(dlsym(lib, "cuDeviceGetCount"));
    int n = 0;
    if (init == nullptr || count == nullptr) {
      reason = "libcuda.so.1 lacks cuInit/cuDeviceGetCount";
    } else if (int rc = init(0); rc != 0) {
      reason = "cuInit failed with CUresult " + std::to_string(rc);
    } else if (count(&n) != 0 || n == 0) {
      reason = "the CUDA driver reports no device";
    }
  });
  return reason;
}

static std::string env_path(const char* var, const std::string& rel) {
  const char* base = std::getenv(var);
  return std::string(base != nullptr ? base : ".") + "/" + rel;
}

std::string build_path(const std::string& rel) {
  return env_path("GLEAM_BUILD_DIR", rel);
}

std::string source_path(const std::string& rel) {
  return env_path("GLEAM_SOURCE_DIR", rel);
}

int run_command(const std::string& command, std::string& out) {
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr)
    return -1;
  std::array<char, 4096> buf{};
  size_t n = 0;
  while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0)
    out.append(buf.data(), n);
  int status = pclose(pipe);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

} // namespace gleam::test
