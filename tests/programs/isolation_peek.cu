// Two sessions on one GPU, as two tenants would run them:
//   isolation_peek hold SECONDS   allocates 64 KiB, fills it with 0x5A,
//                                 prints "address 0x..." and, after SECONDS,
//                                 "held intact=1|0" (whether every byte is
//                                 still 0x5A);
//   isolation_peek peek ADDRESS   a kernel copies 64 KiB from ADDRESS (the
//                                 other session's buffer) into its own
//                                 allocation and overwrites ADDRESS with 0;
//                                 prints "peek=ERROR saw_secret=1|0".
// In one CUDA context (gleamd's isolation = "shared") the peek reads and
// destroys the other session's bytes; in a context of its own (isolation =
// "process") the address is not the other session's memory there. Not in
// programs.txt: tests/gleamd's isolation [gpu] case runs it.
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "common.cuh"

constexpr size_t bytes = 64 << 10;

__global__ void steal(const unsigned char* from, unsigned char* to, unsigned char* wipe) {
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < bytes; i += gridDim.x * blockDim.x) {
    to[i] = from[i];
    wipe[i] = 0;
  }
}

int main(int argc, char** argv) {
  if (argc != 3)
    return 2;
  std::string mode = argv[1];
  if (mode == "hold") {
    unsigned char* buf = nullptr;
    GLEAM_PROGRAM_CHECK(cudaMalloc(&buf, bytes));
    GLEAM_PROGRAM_CHECK(cudaMemset(buf, 0x5A, bytes));
    GLEAM_PROGRAM_CHECK(cudaDeviceSynchronize());
    std::printf("address %p\n", static_cast<void*>(buf));
    std::fflush(stdout);
    ::sleep(static_cast<unsigned>(std::atoi(argv[2])));
    std::vector<unsigned char> back(bytes);
    GLEAM_PROGRAM_CHECK(cudaMemcpy(back.data(), buf, bytes, cudaMemcpyDeviceToHost));
    bool intact = true;
    for (auto b : back)
      intact = intact && b == 0x5A;
    std::printf("held intact=%d\n", intact ? 1 : 0);
    return 0;
  }
  auto* target = reinterpret_cast<unsigned char*>(std::strtoull(argv[2], nullptr, 16));
  unsigned char* mine = nullptr;
  GLEAM_PROGRAM_CHECK(cudaMalloc(&mine, bytes));
  GLEAM_PROGRAM_CHECK(cudaMemset(mine, 0, bytes));
  steal<<<64, 256>>>(target, mine, target);
  auto err = cudaDeviceSynchronize();
  std::vector<unsigned char> got(bytes);
  bool saw = false;
  if (err == cudaSuccess && cudaMemcpy(got.data(), mine, bytes, cudaMemcpyDeviceToHost) == cudaSuccess)
    for (auto b : got)
      saw = saw || b == 0x5A;
  std::printf("peek=%s saw_secret=%d\n", cudaGetErrorName(err), saw ? 1 : 0);
  return 0;
}
