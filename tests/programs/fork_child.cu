// CUDA work in a parent, then fork(): the child does its own CUDA work
// (allocation, kernel, copy back) while the parent waits, then the parent
// continues. Output order is fixed: the child prints, exits, and the parent
// prints only after waitpid.
//
// The vendor's CUDA does not support CUDA in a child forked after CUDA was
// initialized; under Gleam the child gets a session of its own. So that the
// local run still yields the reference output, a child that is not running
// on Gleam's libcudart.so.13 (no gleam_private_interface_v1 in the process)
// computes its values on the host; under Gleam it must use the GPU.
#include <dlfcn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <vector>

#include "common.cuh"

__global__ void fill(int* out, int base, int step, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = base + step * i;
}

namespace {

constexpr int n = 4096;

/// Fills out[i] = base + step * i on the GPU, returns the values.
std::vector<int> gpu_fill(int base, int step) {
  int* d = nullptr;
  GLEAM_PROGRAM_CHECK(cudaMalloc(&d, n * sizeof(int)));
  fill<<<(n + 255) / 256, 256>>>(d, base, step, n);
  GLEAM_PROGRAM_CHECK_LAUNCH();
  std::vector<int> h(n);
  GLEAM_PROGRAM_CHECK(cudaMemcpy(h.data(), d, n * sizeof(int), cudaMemcpyDeviceToHost));
  GLEAM_PROGRAM_CHECK(cudaFree(d));
  return h;
}

long long total(const std::vector<int>& v) {
  long long s = 0;
  for (int x : v)
    s += x;
  return s;
}

bool on_gleam() {
  return dlsym(RTLD_DEFAULT, "gleam_private_interface_v1") != nullptr;
}

} // namespace

int main() {
  gleam_program::checksum sum;
  auto before = gpu_fill(1, 2);
  std::printf("parent before fork: v[0]=%d v[%d]=%d sum=%lld\n", before[0], n - 1,
              before[n - 1], total(before));
  sum.add(before.data(), n * sizeof(int));
  std::fflush(stdout);

  pid_t pid = fork();
  GLEAM_PROGRAM_EXPECT(pid >= 0, "fork");
  if (pid == 0) {
    std::vector<int> v;
    if (on_gleam()) {
      v = gpu_fill(100, 3);
    } else {
      v.resize(n);
      for (int i = 0; i < n; ++i)
        v[i] = 100 + 3 * i;
    }
    for (int i = 0; i < n; ++i)
      GLEAM_PROGRAM_EXPECT(v[i] == 100 + 3 * i, "child value");
    std::printf("child: v[0]=%d v[%d]=%d sum=%lld\n", v[0], n - 1, v[n - 1], total(v));
    std::fflush(stdout);
    // Under Gleam the child closes its own session at exit; the vendor's
    // runtime must not tear down the parent's context from the child.
    if (on_gleam())
      std::exit(0);
    _exit(0);
  }
  int status = 0;
  GLEAM_PROGRAM_EXPECT(waitpid(pid, &status, 0) == pid, "waitpid");
  std::printf("parent: child exited %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  GLEAM_PROGRAM_EXPECT(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status");

  auto after = gpu_fill(-5, 7);
  for (int i = 0; i < n; ++i)
    GLEAM_PROGRAM_EXPECT(after[i] == -5 + 7 * i && before[i] == 1 + 2 * i, "parent value");
  std::printf("parent after fork: v[0]=%d v[%d]=%d sum=%lld\n", after[0], n - 1,
              after[n - 1], total(after));
  sum.add(after.data(), n * sizeof(int));
  sum.print("fork_child");
  return 0;
}
