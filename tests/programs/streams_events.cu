// Streams (flags, priorities, query, synchronize, wait on events) and events
// (record, synchronize, query, elapsed time, timing disabled).
#include "common.cuh"

#include <vector>

__global__ void spin_then_write(unsigned* out, unsigned value, int rounds) {
  unsigned x = value;
  for (int i = 0; i < rounds; ++i)
    x = x * 1664525u + 1013904223u;
  out[threadIdx.x] = x;
}

__global__ void combine(const unsigned* a, const unsigned* b, unsigned* out) {
  out[threadIdx.x] = a[threadIdx.x] ^ (b[threadIdx.x] >> 1);
}

int main() {
  gleam_program::checksum sum;
  int least = 0, greatest = 0;
  GLEAM_PROGRAM_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
  GLEAM_PROGRAM_EXPECT(greatest <= least, "priority range");
  std::printf("priority range: greatest <= least\n");

  cudaStream_t high, low, plain;
  GLEAM_PROGRAM_CHECK(
      cudaStreamCreateWithPriority(&high, cudaStreamNonBlocking, greatest));
  GLEAM_PROGRAM_CHECK(
      cudaStreamCreateWithPriority(&low, cudaStreamDefault, least));
  GLEAM_PROGRAM_CHECK(cudaStreamCreate(&plain));
  int priority = 0;
  GLEAM_PROGRAM_CHECK(cudaStreamGetPriority(high, &priority));
  GLEAM_PROGRAM_EXPECT(priority == greatest, "high priority");
  GLEAM_PROGRAM_CHECK(cudaStreamGetPriority(low, &priority));
  GLEAM_PROGRAM_EXPECT(priority == least, "low priority");
  unsigned flags = 0;
  GLEAM_PROGRAM_CHECK(cudaStreamGetFlags(high, &flags));
  GLEAM_PROGRAM_EXPECT(flags == cudaStreamNonBlocking, "non-blocking flag");
  GLEAM_PROGRAM_CHECK(cudaStreamGetFlags(low, &flags));
  GLEAM_PROGRAM_EXPECT(flags == cudaStreamDefault, "default flag");
  sum.add_value(flags);

  constexpr int threads = 128;
  unsigned *a = nullptr, *b = nullptr, *c = nullptr;
  GLEAM_PROGRAM_CHECK(cudaMalloc(&a, threads * sizeof(unsigned)));
  GLEAM_PROGRAM_CHECK(cudaMalloc(&b, threads * sizeof(unsigned)));
  GLEAM_PROGRAM_CHECK(cudaMalloc(&c, threads * sizeof(unsigned)));

  cudaEvent_t start, a_done, b_done, stop, untimed;
  GLEAM_PROGRAM_CHECK(cudaEventCreate(&start));
  GLEAM_PROGRAM_CHECK(cudaEventCreate(&a_done));
  GLEAM_PROGRAM_CHECK(cudaEventCreateWithFlags(&b_done, cudaEventDisableTiming));
  GLEAM_PROGRAM_CHECK(cudaEventCreate(&stop));
  GLEAM_PROGRAM_CHECK(cudaEventCreateWithFlags(&untimed,
                                               cudaEventDisableTiming
                                                   | cudaEventBlockingSync));

  GLEAM_PROGRAM_CHECK(cudaEventRecord(start, high));
  spin_then_write<<<1, threads, 0, high>>>(a, 1, 200000);
  GLEAM_PROGRAM_CHECK_LAUNCH();
  GLEAM_PROGRAM_CHECK(cudaEventRecord(a_done, high));
  spin_then_write<<<1, threads, 0, low>>>(b, 2, 1000);
  GLEAM_PROGRAM_CHECK_LAUNCH();
  GLEAM_PROGRAM_CHECK(cudaEventRecord(b_done, low));
  // plain waits for both producers, then combines.
  GLEAM_PROGRAM_CHECK(cudaStreamWaitEvent(plain, a_done, 0));
  GLEAM_PROGRAM_CHECK(cudaStreamWaitEvent(plain, b_done, 0));
  combine<<<1, threads, 0, plain>>>(a, b, c);
  GLEAM_PROGRAM_CHECK_LAUNCH();
  GLEAM_PROGRAM_CHECK(cudaEventRecord(stop, plain));
  GLEAM_PROGRAM_CHECK(cudaEventRecord(untimed, plain));

  GLEAM_PROGRAM_CHECK(cudaEventSynchronize(stop));
  GLEAM_PROGRAM_CHECK(cudaEventQuery(stop));
  GLEAM_PROGRAM_CHECK(cudaEventSynchronize(untimed));
  GLEAM_PROGRAM_CHECK(cudaStreamQuery(plain));
  float ms = -1.0f;
  GLEAM_PROGRAM_CHECK(cudaEventElapsedTime(&ms, start, stop));
  std::printf("elapsed time >= 0: %s\n", ms >= 0.0f ? "yes" : "no");
  GLEAM_PROGRAM_EXPECT(ms >= 0.0f, "elapsed time");
  // Timing was disabled on b_done: elapsed time is an error, not a value.
  cudaError_t no_timing = cudaEventElapsedTime(&ms, start, b_done);
  std::printf("elapsed time on an untimed event -> %s\n",
              cudaGetErrorName(no_timing));
  GLEAM_PROGRAM_EXPECT(no_timing == cudaErrorInvalidResourceHandle,
                       "untimed event");
  sum.add_value(static_cast<int>(no_timing));
  // The failed call also set the last error; reading it clears it.
  GLEAM_PROGRAM_EXPECT(cudaGetLastError() == cudaErrorInvalidResourceHandle,
                       "last error after the failed call");

  std::vector<unsigned> host(threads);
  GLEAM_PROGRAM_CHECK(cudaMemcpyAsync(host.data(), c, threads * sizeof(unsigned),
                                      cudaMemcpyDeviceToHost, plain));
  GLEAM_PROGRAM_CHECK(cudaStreamSynchronize(plain));
  sum.add(host.data(), threads * sizeof(unsigned));

  // An idle stream and a completed event report success when queried.
  GLEAM_PROGRAM_CHECK(cudaStreamQuery(low));
  GLEAM_PROGRAM_CHECK(cudaEventQuery(b_done));
  GLEAM_PROGRAM_CHECK(cudaDeviceSynchronize());
  std::printf("streams and events: ok\n");

  for (auto e : {start, a_done, b_done, stop, untimed})
    GLEAM_PROGRAM_CHECK(cudaEventDestroy(e));
  for (auto s : {high, low, plain})
    GLEAM_PROGRAM_CHECK(cudaStreamDestroy(s));
  GLEAM_PROGRAM_CHECK(cudaFree(a));
  GLEAM_PROGRAM_CHECK(cudaFree(b));
  GLEAM_PROGRAM_CHECK(cudaFree(c));
  sum.print("streams_events");
  return 0;
}
