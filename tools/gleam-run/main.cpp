// gleam-run: runs an unmodified CUDA program through Gleam's interposer.
//
//   gleam-run [--config FILE] [--server HOST:PORT] [--sync] -- prog args...
//   gleam-run --doctor [--config FILE] [--server HOST:PORT] [-- prog args...]
//
// --doctor checks instead what such a run needs (tools/gleam-run/doctor.hpp).
//
// Sets GLEAM_CONFIG / GLEAM_SERVER / GLEAM_ASYNC=off as asked, puts the
// directory of our libcudart.so.13 (<exe dir>/../lib) first on
// LD_LIBRARY_PATH, preloads that library, our libcuda.so.1 from lib/driver
// and, where the bundle has them, our libcublasLt.so.13, libcublas.so.13,
// libcurand.so.10, libcufft.so.12, libcusparse.so.12, libcusolver.so.12,
// libcudnn.so.9 and libnvidia-ml.so.1
// (pynvml and PyTorch dlopen NVML by that SONAME)
// (so they win over copies that an app finds through its own RPATH, as
// PyTorch wheels do, and over the real driver: a preloaded object answers
// every later request for its SONAME), and execs the program.
#include <unistd.h>

#include "tools/gleam-run/doctor.hpp"

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

void usage() {
  std::fprintf(stderr,
               "usage: gleam-run [--config FILE] [--server HOST:PORT] [--sync] "
               "-- program [args...]\n"
               "       gleam-run --doctor [--config FILE] [--server HOST:PORT] "
               "[-- program [args...]]\n");
}

std::string self_dir() {
  char buf[PATH_MAX];
  auto n = ::readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0)
    return ".";
  buf[n] = '\0';
  std::string path{buf};
  auto slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

void prepend_env(const char* name, const std::string& value, char sep) {
  const char* old = std::getenv(name);
  std::string joined = value;
  if (old != nullptr && *old != '\0')
    joined += sep + std::string{old};
  ::setenv(name, joined.c_str(), 1);
}

} // namespace

int main(int argc, char** argv) {
  int i = 1;
  bool doctor = false;
  for (; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--") {
      ++i;
      break;
    }
    if ((arg == "--config" || arg == "--server") && i + 1 < argc) {
      ::setenv(arg == "--config" ? "GLEAM_CONFIG" : "GLEAM_SERVER", argv[++i], 1);
    } else if (arg == "--doctor") {
      doctor = true;
    } else if (arg == "--sync") {
      ::setenv("GLEAM_ASYNC", "off", 1);
    } else if (arg == "-h" || arg == "--help") {
      usage();
      return 0;
    } else if (arg.size() > 1 && arg[0] == '-') {
      std::fprintf(stderr, "gleam-run: unknown option '%s'\n", arg.c_str());
      usage();
      return 2;
    } else {
      break;
    }
  }
  auto lib_dir = self_dir() + "/../lib";
  char resolved[PATH_MAX];
  if (::realpath(lib_dir.c_str(), resolved) != nullptr)
    lib_dir = resolved;
  if (doctor) {
    gleam::tools::doctor::options opt;
    opt.lib_dir = lib_dir;
    opt.bin_dir = self_dir();
    opt.program.assign(argv + i, argv + argc);
    return gleam::tools::doctor::run(opt);
  }
  if (i >= argc) {
    usage();
    return 2;
  }
  auto lib = lib_dir + "/libcudart.so.13";
  if (::access(lib.c_str(), R_OK) != 0) {
    std::fprintf(stderr,
                 "gleam-run: Gleam's interposer %s is missing (%s): build the "
                 "gleam_cudart target or reinstall the bundle\n",
                 lib.c_str(), std::strerror(errno));
    return 127;
  }
  prepend_env("LD_LIBRARY_PATH", lib_dir + "/driver:" + lib_dir, ':');
  // Our libcuda.so.1 is preloaded too: a program's dlopen("libcuda.so.1")
  // (PyTorch's lazy NVRTC stub) then finds it already loaded, whatever the
  // program's RPATH says, and the real driver never enters the process.
  auto driver = lib_dir + "/driver/libcuda.so.1";
  if (::access(driver.c_str(), R_OK) != 0) {
    std::fprintf(stderr,
                 "gleam-run: Gleam's driver surface %s is missing (%s): build the "
                 "gleam_cuda target or reinstall the bundle\n",
                 driver.c_str(), std::strerror(errno));
    return 127;
  }
  // Preloaded in this order: libcudart, the driver surface, then the
  // library surfaces (BLAS, cuRAND, cuFFT, cuSPARSE, cuSOLVER, cuDNN, NVML).
  std::string preload = lib + ":" + driver;
  for (const char* extra : {"libcublasLt.so.13", "libcublas.so.13", "libcurand.so.10",
                            "libcufft.so.12", "libcusparse.so.12", "libcusolver.so.12",
                            "libcudnn.so.9", "libnvidia-ml.so.1"}) {
    auto path = lib_dir + "/" + extra;
    if (::access(path.c_str(), R_OK) == 0)
      preload += ":" + path;
  }
  prepend_env("LD_PRELOAD", preload, ':');
  // PyTorch >= 2.9 prefers cuDNN attention on sm_90/sm_100 when a recent
  // cuDNN is installed; its graphs pass the attention scale by value (a
  // host pointer in the variant pack), which Gleam's cuDNN refuses. This
  // PyTorch knob keeps its own flash / memory-efficient attention kernels
  // first, which run through Gleam. An explicit setting of the app's
  // environment wins.
  ::setenv("TORCH_CUDNN_SDPA_DEPRIORITIZED", "1", 0);
  ::execvp(argv[i], argv + i);
  std::fprintf(stderr, "gleam-run: cannot run '%s': %s\n", argv[i], std::strerror(errno));
  return 127;
}
