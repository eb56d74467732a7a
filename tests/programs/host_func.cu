// cudaLaunchHostFunc: host callbacks run in stream order, after the kernels
// and copies before them (a callback sees the bytes an earlier async copy
// brought back) and before the work after them.
#include "common.cuh"

#include <atomic>

namespace {

constexpr int rounds = 4;

struct trace {
  std::atomic<int> next{0};
  int order[rounds] = {};
  unsigned seen[rounds] = {};
  const unsigned* staged = nullptr;
};

struct callback_arg {
  trace* t;
  int id;
};

void CUDART_CB record(void* p) {
  auto* arg = static_cast<callback_arg*>(p);
  int slot = arg->t->next.fetch_add(1);
  arg->t->order[slot] = arg->id;
  arg->t->seen[slot] = arg->t->staged[arg->id];
}

} // namespace

__global__ void bump(unsigned* value, unsigned by) {
  *value += by;
}

int main() {
  gleam_program::checksum sum;
  unsigned* staged = nullptr;
  GLEAM_PROGRAM_CHECK(cudaMallocHost(&staged, rounds * sizeof(unsigned)));
  unsigned* value = nullptr;
  GLEAM_PROGRAM_CHECK(cudaMalloc(&value, sizeof(unsigned)));
  GLEAM_PROGRAM_CHECK(cudaMemset(value, 0, sizeof(unsigned)));
  trace t;
  t.staged = staged;
  callback_arg args[rounds];
  for (int i = 0; i < rounds; ++i)
    args[i] = {&t, i};

  cudaStream_t stream;
  GLEAM_PROGRAM_CHECK(cudaStreamCreate(&stream));
  for (int i = 0; i < rounds; ++i) {
    bump<<<1, 1, 0, stream>>>(value, static_cast<unsigned>(10 * (i + 1)));
    GLEAM_PROGRAM_CHECK_LAUNCH();
    GLEAM_PROGRAM_CHECK(cudaMemcpyAsync(staged + i, value, sizeof(unsigned),
                                        cudaMemcpyDeviceToHost, stream));
    GLEAM_PROGRAM_CHECK(cudaLaunchHostFunc(stream, record, &args[i]));
  }
  GLEAM_PROGRAM_CHECK(cudaStreamSynchronize(stream));
  GLEAM_PROGRAM_EXPECT(t.next.load() == rounds, "every callback ran");
  for (int i = 0; i < rounds; ++i) {
    std::printf("callback %d ran as #%d and saw %u\n", t.order[i], i, t.seen[i]);
    GLEAM_PROGRAM_EXPECT(t.order[i] == i, "callbacks in stream order");
  }
  GLEAM_PROGRAM_EXPECT(t.seen[0] == 10 && t.seen[1] == 30 && t.seen[3] == 100,
                       "callbacks see the copies before them");
  sum.add(t.order, sizeof t.order);
  sum.add(t.seen, sizeof t.seen);

  GLEAM_PROGRAM_CHECK(cudaStreamDestroy(stream));
  GLEAM_PROGRAM_CHECK(cudaFree(value));
  GLEAM_PROGRAM_CHECK(cudaFreeHost(staged));
  sum.print("host_func");
  return 0;
}
