// cudaLaunchKernelEx with every launch attribute kind a launch takes:
// programmatic stream serialization (a secondary kernel overlapping its
// primary, waiting in cudaGridDependencySynchronize, as ggml does on
// Hopper), a programmatic event and a launch completion event waited on by
// another stream, cluster dimensions, cooperative launch with a grid sync,
// priority, memory sync domain and its map, an access policy window,
// preferred cluster dimension, cluster scheduling policy, preferred shared
// memory carveout, an ignored entry; then the codes of an unknown attribute
// id and of the graphs-only device-updatable attribute outside a capture,
// and the same programmatic pair captured into a graph and replayed.
#include "common.cuh"

#include <cooperative_groups.h>

#include <algorithm>
#include <vector>

namespace cg = cooperative_groups;

__global__ void primary(int* data, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    data[i] = i * 3 + 1;
  // Lets the secondary kernel start; its dependency sync still waits for
  // this grid's memory to be visible.
  cudaTriggerProgrammaticLaunchCompletion();
}

__global__ void secondary(const int* data, int* out, int n) {
  cudaGridDependencySynchronize();
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = data[i] * 2;
}

__global__ void add_one(int* data, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    data[i] += 1;
}

__global__ void cluster_sum(int* out) {
  cg::cluster_group cluster = cg::this_cluster();
  if (threadIdx.x == 0)
    out[blockIdx.x] = static_cast<int>(cluster.block_rank() * 10 + cluster.num_blocks());
}

// Two phases split by a grid-wide barrier: only correct when cooperative.
__global__ void grid_phases(int* data, int* out, int n) {
  cg::grid_group grid = cg::this_grid();
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    data[i] = i;
  grid.sync();
  if (i < n)
    out[i] = data[i] + data[(i + 1) % n];
}

cudaLaunchAttribute attribute(cudaLaunchAttributeID id) {
  cudaLaunchAttribute a;
  std::memset(&a, 0, sizeof(a));
  a.id = id;
  return a;
}

int main() {
  constexpr int n = 1 << 16;
  gleam_program::checksum sum;
  int *data = nullptr, *out = nullptr, *small = nullptr;
  GLEAM_PROGRAM_CHECK(cudaMalloc(&data, n * sizeof(int)));
  GLEAM_PROGRAM_CHECK(cudaMalloc(&out, n * sizeof(int)));
  GLEAM_PROGRAM_CHECK(cudaMalloc(&small, 1024 * sizeof(int)));
  cudaStream_t stream, other;
  GLEAM_PROGRAM_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  GLEAM_PROGRAM_CHECK(cudaStreamCreateWithFlags(&other, cudaStreamNonBlocking));
  cudaEvent_t programmatic, completion;
  GLEAM_PROGRAM_CHECK(cudaEventCreateWithFlags(&programmatic, cudaEventDisableTiming));
  GLEAM_PROGRAM_CHECK(cudaEventCreateWithFlags(&completion, cudaEventDisableTiming));
  std::vector<int> host(n);
  auto read_back = [&](const int* src, const char* what) {
    GLEAM_PROGRAM_CHECK(cudaStreamSynchronize(stream));
    GLEAM_PROGRAM_CHECK(cudaStreamSynchronize(other));
    GLEAM_PROGRAM_CHECK(cudaMemcpy(host.data(), src, n * sizeof(int), cudaMemcpyDeviceToHost));
    sum.add(host.data(), n * sizeof(int));
    std::printf("%s: [0]=%d [1000]=%d [%d]=%d\n", what, host[0], host[1000], n - 1,
                host[n - 1]);
  };

  // Programmatic stream serialization, as ggml launches on Hopper.
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(n / 256);
  config.blockDim = dim3(256);
  config.stream = stream;
  GLEAM_PROGRAM_CHECK(cudaLaunchKernelEx(&config, primary, data, n));
  auto pss = attribute(cudaLaunchAttributeProgrammaticStreamSerialization);
  pss.val.programmaticStreamSerializationAllowed = 1;
  config.attrs = &pss;
  config.numAttrs = 1;
  GLEAM_PROGRAM_CHECK(cudaLaunchKernelEx(&config, secondary, static_cast<const int*>(data), out, n));
  read_back(out, "programmatic stream serialization");
  GLEAM_PROGRAM_EXPECT(host[1000] == 2 * (1000 * 3 + 1), "secondary after primary");

  // A programmatic event and a launch completion event, each waited on by
  // another stream that then adds one.
  std::vector<cudaLaunchAttribute> attrs;
  auto ev = attribute(cudaLaunchAttributeProgrammaticEvent);
  ev.val.programmaticEvent.event = programmatic;
  ev.val.programmaticEvent.triggerAtBlockStart = 0;
  attrs.push_back(ev);
  config.attrs = attrs.data();
  config.numAttrs = static_cast<unsigned>(attrs.size());
  GLEAM_PROGRAM_CHECK(cudaLaunchKernelEx(&config, primary, data, n));
  GLEAM_PROGRAM_CHECK(cudaStreamWaitEvent(other, programmatic, 0));
  cudaLaunchConfig_t other_config = config;
  other_config.stream = other;
  other_config.attrs = &pss;
  other_config.numAttrs = 1;
  GLEAM_PROGRAM_CHECK(cudaLaunchKernelEx(&other_config, secondary, static_cast<const int*>(data), out, n));
  read_back(out, "programmatic event");
  auto done = attribute(cudaLaunchAttributeLaunchCompletionEvent);
  done.val.launchCompletionEvent.event = completion;
  config.attrs = &done;
  config.numAttrs = 1;
  GLEAM_PROGRAM_CHECK(cudaLaunchKernelEx(&config, add_one, data, n));
  GLEAM_PROGRAM_CHECK(cudaStreamWaitEvent(other, completion, 0));
  GLEAM_PROGRAM_CHECK(cudaStreamSynchronize(stream));
  read_back(data, "launch completion event");
  GLEAM_PROGRAM_EXPECT(host[1000] == 1000 * 3 + 2, "add_one after primary");

  // Cluster dimension, preferred cluster dimension, scheduling policy.
  attrs.clear();
  auto cluster = attribute(cudaLaunchAttributeClusterDimension);
  cluster.val.clusterDim.x = 4;
  cluster.val.clusterDim.y = 1;
  cluster.val.clusterDim.z = 1;
  attrs.push_back(cluster);
  auto policy = attribute(cudaLaunchAttributeClusterSchedulingPolicyPreference);
  policy.val.clusterSchedulingPolicyPreference = cudaClusterSchedulingPolicySpread;
  attrs.push_back(policy);
  cudaLaunchConfig_t cconfig = {};
  cconfig.gridDim = dim3(64);
  cconfig.blockDim = dim3(32);
  cconfig.stream = stream;
  cconfig.attrs = attrs.data();
  cconfig.numAttrs = static_cast<unsigned>(attrs.size());
  GLEAM_PROGRAM_CHECK(cudaMemset(small, 0, 1024 * sizeof(int)));
  GLEAM_PROGRAM_CHECK(cudaLaunchKernelEx(&cconfig, cluster_sum, small));
  GLEAM_PROGRAM_CHECK(cudaStreamSynchronize(stream));
  std::vector<int> ranks(64);
  GLEAM_PROGRAM_CHECK(cudaMemcpy(ranks.data(), small, 64 * sizeof(int), cudaMemcpyDeviceToHost));
  sum.add(ranks.data(), ranks.size() * sizeof(int));
  std::printf("cluster 4: block 5 -> %d\n", ranks[5]);
  GLEAM_PROGRAM_EXPECT(ranks[5] == 14, "rank 1 of a cluster of 4");

  // Cooperative launch through the attribute, with a grid-wide barrier.
  int blocks_per_sm = 0, sms = 0;
  GLEAM_PROGRAM_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks_per_sm, grid_phases, 256, 0));
  GLEAM_PROGRAM_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  int coop_blocks = std::min(sms * blocks_per_sm, n / 256);
  int coop_n = coop_blocks * 256;
  auto coop = attribute(cudaLaunchAttributeCooperative);
  coop.val.cooperative = 1;
  cudaLaunchConfig_t gconfig = {};
  gconfig.gridDim = dim3(coop_blocks);
  gconfig.blockDim = dim3(256);
  gconfig.stream = stream;
  gconfig.attrs = &coop;
  gconfig.numAttrs = 1;
  GLEAM_PROGRAM_CHECK(cudaLaunchKernelEx(&gconfig, grid_phases, data, out, coop_n));
  GLEAM_PROGRAM_CHECK(cudaStreamSynchronize(stream));
  GLEAM_PROGRAM_CHECK(cudaMemcpy(host.data(), out, coop_n * sizeof(int), cudaMemcpyDeviceToHost));
  GLEAM_PROGRAM_EXPECT(host[10] == 21 && host[coop_n - 1] == coop_n - 1, "grid sync");
  std::printf("cooperative: [10]=%d\n", host[10]);
  sum.add_value(host[10]);

  // Hints: priority, sync domain and its map, access policy window,
  // preferred cluster dimension, shared memory carveout, an ignored entry.
  attrs.clear();
  auto prio = attribute(cudaLaunchAttributePriority);
  int least = 0, greatest = 0;
  GLEAM_PROGRAM_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
  prio.val.priority = greatest;
  attrs.push_back(prio);
  auto domain = attribute(cudaLaunchAttributeMemSyncDomain);
  domain.val.memSyncDomain = cudaLaunchMemSyncDomainRemote;
  attrs.push_back(domain);
  auto map = attribute(cudaLaunchAttributeMemSyncDomainMap);
  map.val.memSyncDomainMap.default_ = 0;
  map.val.memSyncDomainMap.remote = 1;
  attrs.push_back(map);
  auto window = attribute(cudaLaunchAttributeAccessPolicyWindow);
  window.val.accessPolicyWindow.base_ptr = data;
  window.val.accessPolicyWindow.num_bytes = 1 << 16;
  window.val.accessPolicyWindow.hitRatio = 0.5f;
  window.val.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
  window.val.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;
  attrs.push_back(window);
  auto carveout = attribute(cudaLaunchAttributePreferredSharedMemoryCarveout);
  carveout.val.sharedMemCarveout = 50;
  attrs.push_back(carveout);
  attrs.push_back(attribute(cudaLaunchAttributeIgnore));
  config.attrs = attrs.data();
  config.numAttrs = static_cast<unsigned>(attrs.size());
  config.stream = stream;
  GLEAM_PROGRAM_CHECK(cudaLaunchKernelEx(&config, add_one, data, n));
  read_back(data, "hints");

  // Refusals: an attribute id CUDA does not define, and the graphs-only
  // device-updatable attribute on an ordinary stream.
  auto unknown = attribute(static_cast<cudaLaunchAttributeID>(99));
  config.attrs = &unknown;
  config.numAttrs = 1;
  cudaError_t bad = cudaLaunchKernelEx(&config, add_one, data, n);
  std::printf("unknown attribute id -> %s\n", cudaGetErrorName(bad));
  cudaGetLastError();
  auto updatable = attribute(cudaLaunchAttributeDeviceUpdatableKernelNode);
  updatable.val.deviceUpdatableKernelNode.deviceUpdatable = 1;
  config.attrs = &updatable;
  bad = cudaLaunchKernelEx(&config, add_one, data, n);
  // Gleam may report the driver's refusal at the sync instead of the launch.
  cudaError_t at_sync = cudaStreamSynchronize(stream);
  std::printf("device-updatable outside a graph -> %s\n",
              cudaGetErrorName(bad != cudaSuccess ? bad : at_sync));
  cudaGetLastError();

  // The programmatic pair captured into a graph, replayed 10 times.
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  GLEAM_PROGRAM_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  config.attrs = nullptr;
  config.numAttrs = 0;
  GLEAM_PROGRAM_CHECK(cudaLaunchKernelEx(&config, primary, data, n));
  config.attrs = &pss;
  config.numAttrs = 1;
  GLEAM_PROGRAM_CHECK(cudaLaunchKernelEx(&config, secondary, static_cast<const int*>(data), out, n));
  config.attrs = nullptr;
  config.numAttrs = 0;
  GLEAM_PROGRAM_CHECK(cudaLaunchKernelEx(&config, add_one, out, n));
  GLEAM_PROGRAM_CHECK(cudaStreamEndCapture(stream, &graph));
  GLEAM_PROGRAM_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  for (int i = 0; i < 10; ++i)
    GLEAM_PROGRAM_CHECK(cudaGraphLaunch(exec, stream));
  read_back(out, "captured programmatic pair x10");
  GLEAM_PROGRAM_EXPECT(host[7] == 2 * (7 * 3 + 1) + 1, "graph replay");
  GLEAM_PROGRAM_CHECK(cudaGraphExecDestroy(exec));
  GLEAM_PROGRAM_CHECK(cudaGraphDestroy(graph));

  GLEAM_PROGRAM_CHECK(cudaEventDestroy(programmatic));
  GLEAM_PROGRAM_CHECK(cudaEventDestroy(completion));
  GLEAM_PROGRAM_CHECK(cudaStreamDestroy(stream));
  GLEAM_PROGRAM_CHECK(cudaStreamDestroy(other));
  GLEAM_PROGRAM_CHECK(cudaFree(data));
  GLEAM_PROGRAM_CHECK(cudaFree(out));
  GLEAM_PROGRAM_CHECK(cudaFree(small));
  sum.print("launch_attrs");
  return 0;
}
