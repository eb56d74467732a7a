// interpose_async_probe LIB SCENARIO [N]: loads LIB (a libcudart.so.13)
// with dlopen, as an app would, and runs one scenario of asynchronous
// forwarding against a server (fake_gpu_server in the CPU tests). Prints one
// "key=value" line per observation; exit code 0 unless the library could
// not be used.
//
//   classes    async/handle calls of each kind and local calls, then a sync
//   batching   100 async memsets then a 4 B D2H copy
//   deferred   a failing async memset, then sync calls
//   lasterror  a failing async memset, reconciled by cudaMalloc, read with
//              cudaPeekAtLastError / cudaGetLastError
//   sticky     a sticky async failure, then sync calls
//   reuse      a pageable async H2D copy whose buffer is overwritten at once
//   steady N   N times a memset of value i % 128, its 1 B read-back and a
//              10 ms pause: the first error and the wrong bytes (a link cut
//              in the middle must change neither)
//   capture_legacy
//              a memset on the legacy stream while a blocking stream
//              captures, one into the capture, one after its end, a sync
//   latency N  N sync calls (4 B D2H), N async calls (memset): median us
//   paced N    N async memsets 300 us apart (longer than the flush delay),
//              then a 1 B read-back
//   decode N   N iterations of 32 async memsets and a 4 B D2H copy (with
//              fake_gpu_server --op-us U: a decode step of 32 kernels of U
//              us): median us an iteration
//   bulk N     N MiB H2D and D2H through cudaMemcpy: Gbit/s
//   blas_batch  cuBLAS handle settings, 50 SGEMMs, a cuBLASLt matmul and a
//              destroy (libcublas.so.13 / libcublasLt.so.13 next to LIB),
//              then one D2H copy of the result
//   blas_deferred
//              a gemm the server refuses, a good one, a cublasCreate, then
//              sync calls and cudaGetLastError
//   blas_checks
//              the argument checks cuBLAS makes at the call, each refused
//              at once, then an empty gemm, a destroy and a sync
//   blas_heuristic
//              the same cuBLASLt heuristic query twice, another once, a sync
//   blas_vectors
//              cublasSet/GetVector with increments 2 and 3, Set/GetMatrix
//              with leading dimensions above rows, the contiguous, _64 and
//              Async forms, transfers of more than one message (strided and
//              sliced columns), the argument checks, and a sync GetVector
//              after a failing async memset (its error left for cudart)
//   blas_generated
//              generated cuBLAS calls: saxpy and gemv queued, a dot whose
//              result comes back to the host, the same dot into device
//              memory (device pointer mode), the gemv argument checks the
//              cuBLAS documentation names (m, n < 0, incx, incy = 0) at the
//              call, a saxpy past its allocation (deferred error), a
//              function the fake's library lacks, then the legacy API
//              (cublasInit, saxpy, a dot returning its value, a bad
//              transpose character, cublasGetError, cublasShutdown)
//   host_nodes N
//              host nodes of an explicit graph (A then B) replayed N times,
//              their parameters read back, set on the exec and on the graph;
//              a host function captured into a graph, replayed 3 times; a
//              CUDA call from inside a host function; cudaStreamAddCallback
//              during a capture; cudaLaunchHostFunc outside a capture
//   host_steady N
//              N times a replay of a graph of one host node, a stream sync
//              and a 10 ms pause: the first error and the replays whose
//              host function did not run exactly once (a link cut in the
//              middle must change neither)
//   graph_memory
//              cudaMallocAsync / cudaFreeAsync outside and inside a capture,
//              memory allocation and free nodes, their parameters,
//              cudaDeviceGraphMemTrim, and the calls that must be refused
//   tcp N [ECHO CONNECT]
//              raw TCP ping-pong of 64 B over loopback, N times: median us;
//              the echo side listens on port ECHO, the client connects to
//              CONNECT (e.g. a gleam-link in front of ECHO)
#include <arpa/inet.h>
#include <dlfcn.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <cublasLt.h>
#include <cublas_api.h>
#include <cuda_runtime_api.h>

namespace {

struct api {
  cudaError_t (*malloc)(void**, size_t);
  cudaError_t (*free)(void*);
  cudaError_t (*memset_async)(void*, int, size_t, cudaStream_t);
  cudaError_t (*memcpy)(void*, const void*, size_t, cudaMemcpyKind);
  cudaError_t (*memcpy_async)(void*, const void*, size_t, cudaMemcpyKind, cudaStream_t);
  cudaError_t (*device_synchronize)();
  cudaError_t (*get_last_error)();
  cudaError_t (*peek_at_last_error)();
  const char* (*error_name)(cudaError_t);
  cudaError_t (*stream_create)(cudaStream_t*);
  cudaError_t (*stream_destroy)(cudaStream_t);
  cudaError_t (*stream_get_flags)(cudaStream_t, unsigned*);
  cudaError_t (*stream_wait_event)(cudaStream_t, cudaEvent_t, unsigned);
  cudaError_t (*event_create)(cudaEvent_t*);
  cudaError_t (*event_record)(cudaEvent_t, cudaStream_t);
  cudaError_t (*event_destroy)(cudaEvent_t);
  cudaError_t (*get_device)(int*);
  cudaError_t (*get_device_count)(int*);
  cudaError_t (*device_get_attribute)(int*, cudaDeviceAttr, int);
  cudaError_t (*pointer_get_attributes)(cudaPointerAttributes*, const void*);
  cudaError_t (*begin_capture)(cudaStream_t, cudaStreamCaptureMode);
  cudaError_t (*end_capture)(cudaStream_t, cudaGraph_t*);
};

/// The cuBLAS / cuBLASLt entry points the blas scenarios use.
struct blas_api {
  decltype(&cublasCreate_v2) create;
  decltype(&cublasDestroy_v2) destroy;
  decltype(&cublasSetStream_v2) set_stream;
  decltype(&cublasSetMathMode) set_math_mode;
  decltype(&cublasSetWorkspace_v2) set_workspace;
  decltype(&cublasSetPointerMode_v2) set_pointer_mode;
  decltype(&cublasSgemm_v2) sgemm;
  decltype(&cublasSgemmStridedBatched) sgemm_strided;
  decltype(&cublasGetStatusName) status_name;
  decltype(&cublasLtMatmul) lt_matmul;
  decltype(&cublasLtMatmulDescCreate) lt_desc_create;
  decltype(&cublasLtMatrixLayoutCreate) lt_layout_create;
  decltype(&cublasLtMatmulPreferenceCreate) lt_pref_create;
  decltype(&cublasLtMatmulAlgoGetHeuristic) lt_heuristic;
  decltype(&cublasSetVector) set_vector;
  decltype(&cublasGetVector) get_vector;
  decltype(&cublasSetMatrix) set_matrix;
  decltype(&cublasGetMatrix) get_matrix;
  decltype(&cublasSetVector_64) set_vector_64;
  decltype(&cublasGetVector_64) get_vector_64;
  decltype(&cublasSetMatrix_64) set_matrix_64;
  decltype(&cublasSetVectorAsync) set_vector_async;
  decltype(&cublasGetVectorAsync) get_vector_async;
  decltype(&cublasSetMatrixAsync) set_matrix_async;
  decltype(&cublasGetMatrixAsync) get_matrix_async;
  decltype(&cublasSaxpy_v2) saxpy;
  decltype(&cublasSdot_v2) sdot;
  decltype(&cublasSgemv_v2) sgemv;
  decltype(&cublasSnrm2_v2) snrm2;
};

/// The graph and host-function entry points of the host scenarios.
struct graph_api {
  decltype(&cudaGraphCreate) create;
  decltype(&cudaGraphAddHostNode) add_host;
  decltype(&cudaGraphHostNodeGetParams) get_host;
  decltype(&cudaGraphHostNodeSetParams) set_host;
  decltype(&cudaGraphExecHostNodeSetParams) exec_set_host;
  decltype(&cudaGraphInstantiate) instantiate;
  decltype(&cudaGraphLaunch) launch;
  decltype(&cudaGraphExecDestroy) exec_destroy;
  decltype(&cudaGraphDestroy) destroy;
  decltype(&cudaStreamSynchronize) stream_sync;
  decltype(&cudaLaunchHostFunc) launch_host;
  decltype(&cudaStreamAddCallback) add_callback;
  decltype(&cudaMallocAsync) malloc_async;
  decltype(&cudaFreeAsync) free_async;
  decltype(&cudaGraphAddMemAllocNode) add_mem_alloc;
  decltype(&cudaGraphAddMemFreeNode) add_mem_free;
  decltype(&cudaGraphMemAllocNodeGetParams) mem_alloc_params;
  decltype(&cudaGraphMemFreeNodeGetParams) mem_free_params;
  decltype(&cudaDeviceGraphMemTrim) mem_trim;
};

/// What the host functions of the host scenarios did: the tags they
/// appended, in order, and what a CUDA call from inside one returned.
struct host_log {
  std::mutex mutex;
  std::vector<int> tags;
  cudaError_t (*malloc)(void**, size_t) = nullptr;
  cudaError_t inside = cudaSuccess;
};

host_log& hlog() {
  static host_log l;
  return l;
}

void CUDART_CB record_tag(void* data) {
  auto& l = hlog();
  std::lock_guard<std::mutex> guard{l.mutex};
  l.tags.push_back(*static_cast<int*>(data));
}

void CUDART_CB call_cuda(void*) {
  void* p = nullptr;
  hlog().inside = hlog().malloc(&p, 16);
}

/// The last `n` tags, comma-separated, and how many there are in all.
std::string tags_tail(size_t n) {
  auto& l = hlog();
  std::lock_guard<std::mutex> guard{l.mutex};
  std::string out = std::to_string(l.tags.size()) + ":";
  for (size_t i = l.tags.size() > n ? l.tags.size() - n : 0; i < l.tags.size(); ++i)
    out += (out.back() == ':' ? "" : ",") + std::to_string(l.tags[i]);
  return out;
}

template <class F>
bool bind(void* lib, const char* name, F& f) {
  f = reinterpret_cast<F>(::dlsym(lib, name));
  if (f == nullptr)
    std::fprintf(stderr, "missing symbol %s\n", name);
  return f != nullptr;
}

double now_us() {
  using namespace std::chrono;
  return duration<double, std::micro>(steady_clock::now().time_since_epoch()).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

const char* name(const api& a, cudaError_t e) {
  return a.error_name(e);
}

int tcp_pingpong(int n, int echo_port, int connect_port) {
  int listener = ::socket(AF_INET, SOCK_STREAM, 0);
  int reuse = 1;
  ::setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &reuse, sizeof(reuse));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(echo_port));
  ::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  socklen_t len = sizeof(addr);
  ::getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len);
  ::listen(listener, 1);
  std::thread echo{[listener, n] {
    int fd = ::accept(listener, nullptr, nullptr);
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    char buf[64];
    for (int i = 0; i < n; ++i) {
      size_t got = 0;
      while (got < sizeof(buf)) {
        auto r = ::read(fd, buf + got, sizeof(buf) - got);
        if (r <= 0)
          return;
        got += static_cast<size_t>(r);
      }
      if (::write(fd, buf, sizeof(buf)) != static_cast<ssize_t>(sizeof(buf)))
        return;
    }
    ::close(fd);
  }};
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  if (connect_port != 0)
    addr.sin_port = htons(static_cast<uint16_t>(connect_port));
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0)
    return 1;
  std::vector<double> rtt;
  char buf[64] = {};
  for (int i = 0; i < n; ++i) {
    auto t0 = now_us();
    if (::write(fd, buf, sizeof(buf)) != static_cast<ssize_t>(sizeof(buf)))
      return 1;
    size_t got = 0;
    while (got < sizeof(buf)) {
      auto r = ::read(fd, buf + got, sizeof(buf) - got);
      if (r <= 0)
        return 1;
      got += static_cast<size_t>(r);
    }
    rtt.push_back(now_us() - t0);
  }
  echo.join();
  ::close(fd);
  ::close(listener);
  std::printf("tcp_rtt_us=%.1f\n", median(rtt));
  return 0;
}

} // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: interpose_async_probe LIB SCENARIO [N]\n");
    return 2;
  }
  std::string scenario = argv[2];
  int n = argc > 3 ? std::atoi(argv[3]) : 1000;
  if (scenario == "tcp")
    return tcp_pingpong(n, argc > 4 ? std::atoi(argv[4]) : 0, argc > 5 ? std::atoi(argv[5]) : 0);
  void* lib = ::dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    std::fprintf(stderr, "dlopen %s: %s\n", argv[1], ::dlerror());
    return 3;
  }
  api a{};
  if (!bind(lib, "cudaMalloc", a.malloc) || !bind(lib, "cudaFree", a.free)
      || !bind(lib, "cudaMemsetAsync", a.memset_async) || !bind(lib, "cudaMemcpy", a.memcpy)
      || !bind(lib, "cudaMemcpyAsync", a.memcpy_async)
      || !bind(lib, "cudaDeviceSynchronize", a.device_synchronize)
      || !bind(lib, "cudaGetLastError", a.get_last_error)
      || !bind(lib, "cudaPeekAtLastError", a.peek_at_last_error)
      || !bind(lib, "cudaGetErrorName", a.error_name)
      || !bind(lib, "cudaStreamCreate", a.stream_create)
      || !bind(lib, "cudaStreamDestroy", a.stream_destroy)
      || !bind(lib, "cudaStreamGetFlags", a.stream_get_flags)
      || !bind(lib, "cudaStreamWaitEvent", a.stream_wait_event)
      || !bind(lib, "cudaEventCreate", a.event_create)
      || !bind(lib, "cudaEventRecord", a.event_record)
      || !bind(lib, "cudaEventDestroy", a.event_destroy)
      || !bind(lib, "cudaGetDevice", a.get_device)
      || !bind(lib, "cudaGetDeviceCount", a.get_device_count)
      || !bind(lib, "cudaDeviceGetAttribute", a.device_get_attribute)
      || !bind(lib, "cudaPointerGetAttributes", a.pointer_get_attributes)
      || !bind(lib, "cudaStreamBeginCapture", a.begin_capture)
      || !bind(lib, "cudaStreamEndCapture", a.end_capture))
    return 4;
  blas_api b{};
  if (scenario.rfind("blas_", 0) == 0) {
    std::string dir = argv[1];
    dir = dir.substr(0, dir.rfind('/') + 1);
    void* blas = ::dlopen((dir + "libcublas.so.13").c_str(), RTLD_NOW | RTLD_LOCAL);
    void* lt = ::dlopen((dir + "libcublasLt.so.13").c_str(), RTLD_NOW | RTLD_LOCAL);
    if (blas == nullptr || lt == nullptr) {
      std::fprintf(stderr, "dlopen cuBLAS next to %s: %s\n", argv[1], ::dlerror());
      return 3;
    }
    if (!bind(blas, "cublasCreate_v2", b.create) || !bind(blas, "cublasDestroy_v2", b.destroy)
        || !bind(blas, "cublasSetStream_v2", b.set_stream)
        || !bind(blas, "cublasSetMathMode", b.set_math_mode)
        || !bind(blas, "cublasSetWorkspace_v2", b.set_workspace)
        || !bind(blas, "cublasSetPointerMode_v2", b.set_pointer_mode)
        || !bind(blas, "cublasSgemm_v2", b.sgemm)
        || !bind(blas, "cublasSgemmStridedBatched", b.sgemm_strided)
        || !bind(blas, "cublasGetStatusName", b.status_name)
        || !bind(lt, "cublasLtMatmul", b.lt_matmul)
        || !bind(lt, "cublasLtMatmulDescCreate", b.lt_desc_create)
        || !bind(lt, "cublasLtMatrixLayoutCreate", b.lt_layout_create)
        || !bind(lt, "cublasLtMatmulPreferenceCreate", b.lt_pref_create)
        || !bind(lt, "cublasLtMatmulAlgoGetHeuristic", b.lt_heuristic)
        || !bind(blas, "cublasSetVector", b.set_vector)
        || !bind(blas, "cublasGetVector", b.get_vector)
        || !bind(blas, "cublasSetMatrix", b.set_matrix)
        || !bind(blas, "cublasGetMatrix", b.get_matrix)
        || !bind(blas, "cublasSetVector_64", b.set_vector_64)
        || !bind(blas, "cublasGetVector_64", b.get_vector_64)
        || !bind(blas, "cublasSetMatrix_64", b.set_matrix_64)
        || !bind(blas, "cublasSetVectorAsync", b.set_vector_async)
        || !bind(blas, "cublasGetVectorAsync", b.get_vector_async)
        || !bind(blas, "cublasSetMatrixAsync", b.set_matrix_async)
        || !bind(blas, "cublasGetMatrixAsync", b.get_matrix_async)
        || !bind(blas, "cublasSaxpy_v2", b.saxpy) || !bind(blas, "cublasSdot_v2", b.sdot)
        || !bind(blas, "cublasSgemv_v2", b.sgemv) || !bind(blas, "cublasSnrm2_v2", b.snrm2))
      return 4;
  }
  graph_api g{};
  if (scenario.rfind("host_", 0) == 0 || scenario == "graph_memory") {
    if (!bind(lib, "cudaGraphCreate", g.create) || !bind(lib, "cudaGraphAddHostNode", g.add_host)
        || !bind(lib, "cudaGraphHostNodeGetParams", g.get_host)
        || !bind(lib, "cudaGraphHostNodeSetParams", g.set_host)
        || !bind(lib, "cudaGraphExecHostNodeSetParams", g.exec_set_host)
        || !bind(lib, "cudaGraphInstantiate", g.instantiate)
        || !bind(lib, "cudaGraphLaunch", g.launch)
        || !bind(lib, "cudaGraphExecDestroy", g.exec_destroy)
        || !bind(lib, "cudaGraphDestroy", g.destroy)
        || !bind(lib, "cudaStreamSynchronize", g.stream_sync)
        || !bind(lib, "cudaLaunchHostFunc", g.launch_host)
        || !bind(lib, "cudaStreamAddCallback", g.add_callback)
        || !bind(lib, "cudaMallocAsync", g.malloc_async)
        || !bind(lib, "cudaFreeAsync", g.free_async)
        || !bind(lib, "cudaGraphAddMemAllocNode", g.add_mem_alloc)
        || !bind(lib, "cudaGraphAddMemFreeNode", g.add_mem_free)
        || !bind(lib, "cudaGraphMemAllocNodeGetParams", g.mem_alloc_params)
        || !bind(lib, "cudaGraphMemFreeNodeGetParams", g.mem_free_params)
        || !bind(lib, "cudaDeviceGraphMemTrim", g.mem_trim))
      return 4;
    hlog().malloc = a.malloc;
  }
  void* p = nullptr;
  auto err = a.malloc(&p, 4096);
  if (err != cudaSuccess) {
    std::printf("malloc=%s\n", name(a, err));
    return 5;
  }
  unsigned char byte = 0;
  auto read_byte = [&] { return a.memcpy(&byte, p, 1, cudaMemcpyDeviceToHost); };
  if (scenario == "classes") {
    void* q = nullptr;
    a.malloc(&q, 4096);
    // Error-code-only and handle calls: no round trip of their own.
    cudaStream_t s = nullptr;
    cudaEvent_t e = nullptr;
    std::vector<unsigned char> src(64, 9);
    cudaError_t errs[] = {
      a.stream_create(&s),
      a.event_create(&e),
      a.memset_async(p, 3, 4096, s),
      a.event_record(e, s),
      a.stream_wait_event(nullptr, e, 0),
      a.memcpy_async(static_cast<char*>(p) + 1024, src.data(), src.size(),
                     cudaMemcpyHostToDevice, s),
      a.memcpy_async(q, p, 4096, cudaMemcpyDeviceToDevice, s),
      a.free(q),
      a.event_destroy(e),
    };
    // Answered on the client.
    int dev = -1, count = -1, threads = -1;
    unsigned flags = 77;
    cudaPointerAttributes attrs{};
    cudaError_t local[] = {
      a.get_device(&dev),
      a.get_device_count(&count),
      a.device_get_attribute(&threads, cudaDevAttrMaxThreadsPerBlock, 0),
      a.stream_get_flags(s, &flags),
      a.pointer_get_attributes(&attrs, static_cast<char*>(p) + 100),
      a.peek_at_last_error(),
      a.get_last_error(),
    };
    cudaError_t last = a.stream_destroy(s);
    bool ok = last == cudaSuccess;
    int k = 0;
    for (auto x : errs) {
      if (x != cudaSuccess)
        std::printf("async call %d: %s\n", k, name(a, x));
      ok = ok && x == cudaSuccess;
      ++k;
    }
    k = 0;
    for (auto x : local) {
      if (x != cudaSuccess)
        std::printf("local call %d: %s\n", k, name(a, x));
      ok = ok && x == cudaSuccess;
      ++k;
    }
    auto sync = read_byte();
    std::printf("calls=%s device=%d count=%d threads=%d flags=%u type=%d sync=%s byte=%d\n",
                ok ? "cudaSuccess" : "failed", dev, count, threads, flags,
                static_cast<int>(attrs.type), name(a, sync), byte);
  } else if (scenario == "batching") {
    for (int i = 0; i < 100; ++i)
      if (auto e = a.memset_async(p, i, 4096, nullptr); e != cudaSuccess)
        std::printf("memset%d=%s\n", i, name(a, e));
    auto e = read_byte();
    std::printf("sync=%s byte=%d\n", name(a, e), byte);
  } else if (scenario == "idle_sync") {
    // A copy back, then synchronizes of its (idle) stream; then new work
    // and a synchronize that must wait for it.
    decltype(&cudaStreamSynchronize) stream_sync = nullptr;
    decltype(&cudaStreamQuery) stream_query = nullptr;
    if (!bind(lib, "cudaStreamSynchronize", stream_sync)
        || !bind(lib, "cudaStreamQuery", stream_query))
      return 4;
    a.memset_async(p, 5, 4096, nullptr);
    auto e1 = read_byte();
    auto s1 = stream_sync(nullptr);
    auto s2 = stream_query(nullptr) == cudaSuccess ? stream_sync(nullptr) : cudaErrorUnknown;
    int first = byte;
    a.memset_async(p, 6, 4096, nullptr);
    auto s3 = stream_sync(nullptr);
    auto e2 = read_byte();
    std::printf("copy=%s sync=%s %s byte=%d after_work=%s byte=%d %s\n", name(a, e1),
                name(a, s1), name(a, s2), first, name(a, s3), byte, name(a, e2));
  } else if (scenario == "upload_sync") {
    // PyTorch's blocking upload from pageable memory: work, a copy of host
    // bytes to the device, a synchronize of the stream. The synchronize
    // returns at once; the bytes and the order stay as CUDA's. After a
    // memset the synchronize waits. An async error before an upload reaches
    // the app at the next synchronizing call.
    decltype(&cudaStreamSynchronize) stream_sync = nullptr;
    if (!bind(lib, "cudaStreamSynchronize", stream_sync))
      return 4;
    a.memset_async(p, 5, 4096, nullptr);
    char host = 9;
    auto up = a.memcpy_async(p, &host, 1, cudaMemcpyHostToDevice, nullptr);
    host = 10; // the app's buffer is free once the copy is queued
    auto s1 = stream_sync(nullptr);
    auto e1 = read_byte();
    int first = byte;
    a.memset_async(p, 6, 4096, nullptr);
    auto s2 = stream_sync(nullptr);
    a.memset_async(p, 0xEE, 4096, nullptr);
    a.memcpy_async(p, &host, 1, cudaMemcpyHostToDevice, nullptr);
    auto s3 = stream_sync(nullptr);
    auto e3 = read_byte();
    auto e4 = read_byte();
    std::printf("upload=%s sync=%s byte=%d %s after_memset=%s after_error=%s %s %s byte=%d\n",
                name(a, up), name(a, s1), first, name(a, e1), name(a, s2), name(a, s3),
                name(a, e3), name(a, e4), byte);
  } else if (scenario == "deferred") {
    std::printf("failing=%s\n", name(a, a.memset_async(p, 0xEE, 4096, nullptr)));
    std::printf("next=%s\n", name(a, a.memset_async(p, 7, 4096, nullptr)));
    auto e = read_byte();
    std::printf("sync1=%s byte=%d\n", name(a, e), byte);
    std::printf("sync2=%s\n", name(a, read_byte()));
    std::printf("last1=%s\n", name(a, a.get_last_error()));
    std::printf("last2=%s\n", name(a, a.get_last_error()));
  } else if (scenario == "lasterror") {
    std::printf("failing=%s\n", name(a, a.memset_async(p, 0xEE, 4096, nullptr)));
    void* q = nullptr;
    std::printf("malloc=%s\n", name(a, a.malloc(&q, 64)));
    std::printf("peek=%s\n", name(a, a.peek_at_last_error()));
    std::printf("last1=%s\n", name(a, a.get_last_error()));
    std::printf("last2=%s\n", name(a, a.get_last_error()));
    std::printf("sync=%s\n", name(a, a.device_synchronize()));
  } else if (scenario == "sticky") {
    std::printf("failing=%s\n", name(a, a.memset_async(p, 0xDD, 4096, nullptr)));
    std::printf("next=%s\n", name(a, a.memset_async(p, 1, 4096, nullptr)));
    std::printf("sync1=%s\n", name(a, read_byte()));
    std::printf("sync2=%s\n", name(a, a.device_synchronize()));
    void* q = nullptr;
    std::printf("malloc=%s\n", name(a, a.malloc(&q, 64)));
  } else if (scenario == "hang") {
    // A memset the fake GPU of fake_gleamd runs for 30 s (value 0xCC), then
    // a copy back that waits for it, then an allocation.
    std::printf("long=%s\n", name(a, a.memset_async(p, 0xCC, 4096, nullptr)));
    std::fflush(stdout);
    std::printf("sync=%s\n", name(a, read_byte()));
    void* q = nullptr;
    std::printf("malloc=%s\n", name(a, a.malloc(&q, 64)));
  } else if (scenario == "steady") {
    int n = argc > 3 ? std::atoi(argv[3]) : 100;
    cudaError_t first = cudaSuccess;
    int wrong = 0;
    for (int i = 0; i < n; ++i) {
      auto e = a.memset_async(p, i % 128, 4096, nullptr);
      if (e == cudaSuccess)
        e = read_byte();
      if (e != cudaSuccess && first == cudaSuccess)
        first = e;
      if (e == cudaSuccess && byte != i % 128)
        ++wrong;
      std::this_thread::sleep_for(std::chrono::milliseconds{10});
    }
    std::printf("steady=%s wrong=%d\n", name(a, first), wrong);
  } else if (scenario == "capture_legacy") {
    cudaStream_t s = nullptr;
    a.stream_create(&s);
    std::printf("begin=%s\n", name(a, a.begin_capture(s, cudaStreamCaptureModeGlobal)));
    std::printf("legacy=%s\n", name(a, a.memset_async(p, 1, 4096, nullptr)));
    std::printf("captured=%s\n", name(a, a.memset_async(p, 2, 4096, s)));
    cudaGraph_t g = nullptr;
    a.end_capture(s, &g);
    a.get_last_error();
    std::printf("after=%s\n", name(a, a.memset_async(p, 3, 4096, nullptr)));
    auto e = read_byte();
    std::printf("sync=%s byte=%d\n", name(a, e), byte);
  } else if (scenario == "host_nodes") {
    int n = argc > 3 ? std::atoi(argv[3]) : 10;
    static int tag[] = {0, 1, 2, 3, 4, 5};
    cudaStream_t s = nullptr;
    a.stream_create(&s);
    cudaGraph_t graph = nullptr;
    g.create(&graph, 0);
    cudaGraphNode_t na = nullptr, nb = nullptr;
    cudaHostNodeParams pa{record_tag, &tag[1]}, pb{record_tag, &tag[2]};
    std::printf("add=%s", name(a, g.add_host(&na, graph, nullptr, 0, &pa)));
    std::printf(" %s\n", name(a, g.add_host(&nb, graph, &na, 1, &pb)));
    cudaHostNodeParams got{};
    auto e = g.get_host(nb, &got);
    std::printf("get=%s same=%d\n", name(a, e), got.fn == record_tag && got.userData == &tag[2]);
    cudaGraphExec_t exec = nullptr;
    std::printf("instantiate=%s\n", name(a, g.instantiate(&exec, graph, 0)));
    for (int i = 0; i < n; ++i)
      g.launch(exec, s);
    e = g.stream_sync(s);
    int ordered = 1;
    {
      auto& l = hlog();
      std::lock_guard<std::mutex> guard{l.mutex};
      for (size_t i = 0; i < l.tags.size(); ++i)
        ordered &= l.tags[i] == (i % 2 == 0 ? 1 : 2);
    }
    std::printf("replays=%s tags=%s ordered=%d\n", name(a, e), tags_tail(2).c_str(), ordered);
    // On the exec only: B becomes 3 there, the graph keeps B.
    cudaHostNodeParams pc{record_tag, &tag[3]}, pd{record_tag, &tag[4]};
    std::printf("exec_set=%s", name(a, g.exec_set_host(exec, nb, &pc)));
    g.launch(exec, s);
    e = g.stream_sync(s);
    std::printf(" sync=%s tags=%s\n", name(a, e), tags_tail(2).c_str());
    std::printf("graph_set=%s", name(a, g.set_host(na, &pd)));
    cudaGraphExec_t exec2 = nullptr;
    g.instantiate(&exec2, graph, 0);
    g.launch(exec2, s);
    e = g.stream_sync(s);
    std::printf(" sync=%s tags=%s\n", name(a, e), tags_tail(2).c_str());
    std::printf("bad_params=%s\n", name(a, g.add_host(&na, graph, nullptr, 0, nullptr)));
    // Captured: cudaLaunchHostFunc in a capturing stream is a host node.
    a.begin_capture(s, cudaStreamCaptureModeGlobal);
    std::printf("captured_func=%s", name(a, g.launch_host(s, record_tag, &tag[5])));
    cudaGraph_t captured = nullptr;
    std::printf(" end=%s", name(a, a.end_capture(s, &captured)));
    cudaGraphExec_t exec3 = nullptr;
    g.instantiate(&exec3, captured, 0);
    for (int i = 0; i < 3; ++i)
      g.launch(exec3, s);
    e = g.stream_sync(s);
    std::printf(" sync=%s tags=%s\n", name(a, e), tags_tail(3).c_str());
    // A CUDA call from a host function is not permitted.
    a.begin_capture(s, cudaStreamCaptureModeGlobal);
    g.launch_host(s, call_cuda, nullptr);
    cudaGraph_t calls = nullptr;
    a.end_capture(s, &calls);
    cudaGraphExec_t exec4 = nullptr;
    g.instantiate(&exec4, calls, 0);
    g.launch(exec4, s);
    e = g.stream_sync(s);
    std::printf("inside_sync=%s inside=%s\n", name(a, e), name(a, hlog().inside));
    // cudaStreamAddCallback cannot be captured; it invalidates the capture.
    a.begin_capture(s, cudaStreamCaptureModeGlobal);
    auto cb = g.add_callback(
      s, [](cudaStream_t, cudaError_t, void*) {}, nullptr, 0);
    cudaGraph_t refused = nullptr;
    std::printf("add_callback=%s end=%s\n", name(a, cb), name(a, a.end_capture(s, &refused)));
    a.get_last_error();
    // Outside a capture the client runs the function itself.
    e = g.launch_host(s, record_tag, &tag[1]);
    std::printf("outside=%s tags=%s\n", name(a, e), tags_tail(1).c_str());
    for (auto x : {exec, exec2, exec3, exec4})
      g.exec_destroy(x);
    for (auto x : {graph, captured, calls})
      g.destroy(x);
    std::printf("final=%s\n", name(a, g.stream_sync(s)));
  } else if (scenario == "graph_memory") {
    cudaStream_t s = nullptr;
    a.stream_create(&s);
    auto kind = [&](const void* q) {
      cudaPointerAttributes attr{};
      a.pointer_get_attributes(&attr, q);
      return attr.type == cudaMemoryTypeDevice ? "device" : "not-device";
    };
    // Outside a capture: usable at once, in stream order.
    void* q = nullptr;
    auto e = g.malloc_async(&q, 256, s);
    std::printf("malloc_async=%s %s", name(a, e), kind(q));
    a.memset_async(q, 0x5a, 256, s);
    unsigned char back = 0;
    e = a.memcpy(&back, q, 1, cudaMemcpyDeviceToHost);
    std::printf(" read=%s byte=%#x", name(a, e), back);
    std::printf(" free=%s", name(a, g.free_async(q, s)));
    std::printf(" again=%s\n", name(a, g.free_async(q, s)));
    auto bogus = reinterpret_cast<cudaStream_t>(uintptr_t{0x7777});
    std::printf("bad_stream=%s\n", name(a, g.malloc_async(&q, 256, bogus)));
    // Inside a capture: allocation and free nodes.
    a.begin_capture(s, cudaStreamCaptureModeGlobal);
    void* c = nullptr;
    e = g.malloc_async(&c, 512, s);
    std::printf("captured_malloc=%s %s", name(a, e), kind(c));
    a.memset_async(c, 1, 512, s);
    std::printf(" free=%s", name(a, g.free_async(c, s)));
    cudaGraph_t captured = nullptr;
    std::printf(" end=%s\n", name(a, a.end_capture(s, &captured)));
    // The explicit API.
    cudaGraph_t graph = nullptr;
    g.create(&graph, 0);
    cudaMemAllocNodeParams p{};
    p.poolProps.allocType = cudaMemAllocationTypePinned;
    p.poolProps.location.type = cudaMemLocationTypeDevice;
    p.poolProps.location.id = 0;
    p.bytesize = 1024;
    cudaGraphNode_t alloc_node = nullptr, free_node = nullptr, other = nullptr;
    e = g.add_mem_alloc(&alloc_node, graph, nullptr, 0, &p);
    std::printf("alloc_node=%s %s", name(a, e), kind(p.dptr));
    cudaMemAllocNodeParams got{};
    e = g.mem_alloc_params(alloc_node, &got);
    std::printf(" params=%s same=%d\n", name(a, e),
                got.bytesize == 1024 && got.dptr == p.dptr && got.accessDescs == nullptr);
    e = g.add_mem_free(&free_node, graph, &alloc_node, 1, p.dptr);
    void* freed = nullptr;
    auto fe = g.mem_free_params(free_node, &freed);
    std::printf("free_node=%s params=%s same=%d", name(a, e), name(a, fe), freed == p.dptr);
    std::printf(" twice=%s\n", name(a, g.add_mem_free(&other, graph, &free_node, 1, p.dptr)));
    auto bad = p;
    bad.poolProps.allocType = cudaMemAllocationTypeInvalid;
    std::printf("bad_pool=%s", name(a, g.add_mem_alloc(&other, graph, nullptr, 0, &bad)));
    cudaMemAccessDesc peer{};
    peer.location.type = cudaMemLocationTypeDevice;
    peer.location.id = 1;
    peer.flags = cudaMemAccessFlagsProtReadWrite;
    auto shared = p;
    shared.accessDescs = &peer;
    shared.accessDescCount = 1;
    std::printf(" peer=%s\n", name(a, g.add_mem_alloc(&other, graph, nullptr, 0, &shared)));
    a.get_last_error();
    std::printf("trim=%s", name(a, g.mem_trim(0)));
    std::printf(" bad_device=%s\n", name(a, g.mem_trim(5)));
    a.get_last_error();
    g.destroy(graph);
    g.destroy(captured);
    std::printf("final=%s\n", name(a, g.stream_sync(s)));
  } else if (scenario == "host_steady") {
    int n = argc > 3 ? std::atoi(argv[3]) : 100;
    static int one = 1;
    cudaStream_t s = nullptr;
    a.stream_create(&s);
    cudaGraph_t graph = nullptr;
    g.create(&graph, 0);
    cudaGraphNode_t node = nullptr;
    cudaHostNodeParams params{record_tag, &one};
    g.add_host(&node, graph, nullptr, 0, &params);
    cudaGraphExec_t exec = nullptr;
    cudaError_t first = g.instantiate(&exec, graph, 0);
    int wrong = 0;
    for (int i = 0; i < n; ++i) {
      auto e = g.launch(exec, s);
      if (e == cudaSuccess)
        e = g.stream_sync(s);
      if (e != cudaSuccess && first == cudaSuccess)
        first = e;
      size_t ran = 0;
      {
        std::lock_guard<std::mutex> guard{hlog().mutex};
        ran = hlog().tags.size();
      }
      if (e == cudaSuccess && ran != static_cast<size_t>(i) + 1)
        ++wrong;
      std::this_thread::sleep_for(std::chrono::milliseconds{10});
    }
    std::printf("host_steady=%s wrong=%d\n", name(a, first), wrong);
  } else if (scenario == "reuse") {
    std::vector<unsigned char> buf(4096, 'A');
    std::printf("copy=%s\n",
                name(a, a.memcpy_async(p, buf.data(), buf.size(), cudaMemcpyHostToDevice,
                                       nullptr)));
    std::fill(buf.begin(), buf.end(), 'B');
    auto e = read_byte();
    std::printf("sync=%s byte=%c\n", name(a, e), byte);
  } else if (scenario == "blas_batch") {
    // A (2 x 2) at p, B = identity at p + 16, C = 0 at p + 32.
    float host[12] = {1, 2, 3, 4, 1, 0, 0, 1, 0, 0, 0, 0};
    auto* A = static_cast<float*>(p);
    auto* B = A + 4;
    auto* C = A + 8;
    auto up = a.memcpy(p, host, sizeof(host), cudaMemcpyHostToDevice);
    cublasHandle_t h = nullptr;
    auto created = b.create(&h);
    bool ok = up == cudaSuccess && created == CUBLAS_STATUS_SUCCESS;
    auto note = [&](const char* what, cublasStatus_t x) {
      if (x != CUBLAS_STATUS_SUCCESS)
        std::printf("%s=%s\n", what, b.status_name(x));
      ok = ok && x == CUBLAS_STATUS_SUCCESS;
    };
    note("stream", b.set_stream(h, nullptr));
    note("math", b.set_math_mode(h, CUBLAS_DEFAULT_MATH));
    note("workspace", b.set_workspace(h, static_cast<char*>(p) + 1024, 1024));
    float one = 1.0f;
    for (int i = 0; i < 50; ++i)
      note("sgemm", b.sgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 2, &one, A, 2, B, 2, &one, C, 2));
    cublasLtMatmulDesc_t desc = nullptr;
    cublasLtMatrixLayout_t layout = nullptr;
    note("desc", b.lt_desc_create(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    note("layout", b.lt_layout_create(&layout, CUDA_R_32F, 2, 2, 2));
    float zero = 0.0f;
    // Into the spare bytes after C; the fake server answers it with success.
    note("lt", b.lt_matmul(reinterpret_cast<cublasLtHandle_t>(h), desc, &one, A, layout, B,
                           layout, &zero, C + 4, layout, C + 4, layout, nullptr, nullptr, 0,
                           nullptr));
    note("destroy", b.destroy(h));
    float c[4] = {};
    auto e = a.memcpy(c, C, sizeof(c), cudaMemcpyDeviceToHost);
    std::printf("calls=%s sync=%s c=%g,%g,%g,%g\n", ok ? "CUBLAS_STATUS_SUCCESS" : "failed",
                name(a, e), c[0], c[1], c[2], c[3]);
  } else if (scenario == "blas_deferred") {
    float host[12] = {1, 2, 3, 4, 1, 0, 0, 1, 0, 0, 0, 0};
    auto* A = static_cast<float*>(p);
    a.memcpy(p, host, sizeof(host), cudaMemcpyHostToDevice);
    cublasHandle_t h = nullptr;
    std::printf("create=%s\n", b.status_name(b.create(&h)));
    float one = 1.0f;
    auto* nowhere = reinterpret_cast<const float*>(uintptr_t{0x1000});
    std::printf("failing=%s\n", b.status_name(b.sgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 2,
                                                       &one, nowhere, 2, A + 4, 2, &one,
                                                       A + 8, 2)));
    std::printf("next=%s\n", b.status_name(b.sgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 2, &one, A,
                                                    2, A + 4, 2, &one, A + 8, 2)));
    cublasHandle_t h2 = nullptr;
    std::printf("create2=%s\n", b.status_name(b.create(&h2)));
    float c[4] = {};
    auto e = a.memcpy(c, A + 8, sizeof(c), cudaMemcpyDeviceToHost);
    std::printf("sync1=%s c3=%g\n", name(a, e), c[3]);
    std::printf("sync2=%s\n", name(a, read_byte()));
    std::printf("last1=%s\n", name(a, a.get_last_error()));
    std::printf("last2=%s\n", name(a, a.get_last_error()));
  } else if (scenario == "blas_checks") {
    auto* A = static_cast<float*>(p);
    cublasHandle_t h = nullptr;
    std::printf("create=%s\n", b.status_name(b.create(&h)));
    float one = 1.0f;
    auto N = CUBLAS_OP_N, T = CUBLAS_OP_T;
    auto show = [&](const char* what, cublasStatus_t x) {
      std::printf("%s=%s\n", what, b.status_name(x));
    };
    show("lda", b.sgemm(h, N, N, 4, 2, 2, &one, A, 3, A, 2, &one, A, 4));
    show("lda_t", b.sgemm(h, T, N, 2, 2, 4, &one, A, 3, A, 4, &one, A, 2));
    show("ldb", b.sgemm(h, N, N, 2, 2, 4, &one, A, 2, A, 3, &one, A, 2));
    show("ldc", b.sgemm(h, N, N, 4, 2, 2, &one, A, 4, A, 2, &one, A, 3));
    show("lda0", b.sgemm(h, N, N, 0, 2, 2, &one, A, 0, A, 2, &one, A, 1));
    show("m", b.sgemm(h, N, N, -1, 2, 2, &one, A, 2, A, 2, &one, A, 2));
    show("trans", b.sgemm(h, static_cast<cublasOperation_t>(7), N, 2, 2, 2, &one, A, 2, A, 2,
                          &one, A, 2));
    show("alpha", b.sgemm(h, N, N, 2, 2, 2, nullptr, A, 2, A, 2, &one, A, 2));
    show("batch", b.sgemm_strided(h, N, N, 2, 2, 2, &one, A, 2, 4, A, 2, 4, &one, A, 2, 4, -1));
    show("handle", b.sgemm(nullptr, N, N, 2, 2, 2, &one, A, 2, A, 2, &one, A, 2));
    show("pointer_mode", b.set_pointer_mode(h, CUBLAS_POINTER_MODE_DEVICE));
    show("gemm_device_mode", b.sgemm(h, N, N, 2, 2, 2, &one, A, 2, A, 2, &one, A, 2));
    show("pointer_mode_bad", b.set_pointer_mode(h, static_cast<cublasPointerMode_t>(5)));
    show("pointer_mode_host", b.set_pointer_mode(h, CUBLAS_POINTER_MODE_HOST));
    show("workspace", b.set_workspace(h, static_cast<char*>(p) + 8, 256));
    show("workspace_range", b.set_workspace(h, static_cast<char*>(p) + 256, 8192));
    show("lt_layout", b.lt_matmul(reinterpret_cast<cublasLtHandle_t>(h), nullptr, &one, A,
                                  nullptr, A, nullptr, &one, A, nullptr, A, nullptr, nullptr,
                                  nullptr, 0, nullptr));
    show("empty", b.sgemm(h, N, N, 0, 2, 2, &one, A, 1, A, 2, &one, A, 1));
    show("destroy", b.destroy(h));
    std::printf("sync=%s\n", name(a, read_byte()));
  } else if (scenario == "blas_heuristic") {
    cublasHandle_t h = nullptr;
    std::printf("create=%s\n", b.status_name(b.create(&h)));
    cublasLtMatmulDesc_t desc = nullptr;
    cublasLtMatrixLayout_t layout = nullptr;
    cublasLtMatmulPreference_t pref = nullptr;
    b.lt_desc_create(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F);
    b.lt_layout_create(&layout, CUDA_R_32F, 2, 2, 2);
    b.lt_pref_create(&pref);
    auto* lh = reinterpret_cast<cublasLtHandle_t>(h);
    for (int requested : {1, 1, 2}) {
      cublasLtMatmulHeuristicResult_t results[2] = {};
      int found = -1;
      auto x = b.lt_heuristic(lh, desc, layout, layout, layout, layout, pref, requested, results,
                              &found);
      std::printf("heuristic%d=%s found=%d workspace=%zu\n", requested, b.status_name(x), found,
                  results[0].workspaceSize);
    }
    std::printf("sync=%s\n", name(a, read_byte()));
  } else if (scenario == "blas_lt_algo") {
    // The algo-level API, the heuristics cache capacity and a matrix
    // transform through the built libcublasLt.so.13.
    std::string dir = argv[1];
    dir = dir.substr(0, dir.rfind('/') + 1);
    void* lt = ::dlopen((dir + "libcublasLt.so.13").c_str(), RTLD_NOW | RTLD_LOCAL);
    decltype(&cublasLtCreate) create = nullptr;
    decltype(&cublasLtMatmulAlgoGetIds) get_ids = nullptr;
    decltype(&cublasLtMatmulAlgoInit) init = nullptr;
    decltype(&cublasLtMatmulAlgoCapGetAttribute) cap = nullptr;
    decltype(&cublasLtMatmulAlgoConfigSetAttribute) config_set = nullptr;
    decltype(&cublasLtMatmulAlgoConfigGetAttribute) config_get = nullptr;
    decltype(&cublasLtMatmulAlgoCheck) check = nullptr;
    decltype(&cublasLtHeuristicsCacheGetCapacity) cache_get = nullptr;
    decltype(&cublasLtHeuristicsCacheSetCapacity) cache_set = nullptr;
    decltype(&cublasLtMatrixTransformDescCreate) transform_desc = nullptr;
    decltype(&cublasLtMatrixTransform) transform = nullptr;
    if (lt == nullptr || !bind(lt, "cublasLtCreate", create)
        || !bind(lt, "cublasLtMatmulAlgoGetIds", get_ids)
        || !bind(lt, "cublasLtMatmulAlgoInit", init)
        || !bind(lt, "cublasLtMatmulAlgoCapGetAttribute", cap)
        || !bind(lt, "cublasLtMatmulAlgoConfigSetAttribute", config_set)
        || !bind(lt, "cublasLtMatmulAlgoConfigGetAttribute", config_get)
        || !bind(lt, "cublasLtMatmulAlgoCheck", check)
        || !bind(lt, "cublasLtHeuristicsCacheGetCapacity", cache_get)
        || !bind(lt, "cublasLtHeuristicsCacheSetCapacity", cache_set)
        || !bind(lt, "cublasLtMatrixTransformDescCreate", transform_desc)
        || !bind(lt, "cublasLtMatrixTransform", transform))
      return 6;
    cublasLtHandle_t h = nullptr;
    std::printf("create=%s\n", b.status_name(create(&h)));
    int ids[8] = {};
    int count = -1;
    auto x = get_ids(h, CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F,
                     CUDA_R_32F, 2, ids, &count);
    std::printf("ids=%s count=%d %d,%d\n", b.status_name(x), count, ids[0], ids[1]);
    std::printf("ids0=%s\n",
                b.status_name(get_ids(h, CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F,
                                      CUDA_R_32F, CUDA_R_32F, 0, ids, &count)));
    cublasLtMatmulAlgo_t algo{};
    auto init_algo = [&](int id) {
      return init(h, CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F,
                  CUDA_R_32F, id, &algo);
    };
    std::printf("init99=%s\n", b.status_name(init_algo(99)));
    // The second, equal query is answered on the client.
    x = init_algo(9);
    x = init_algo(9);
    std::printf("init=%s id=%llu\n", b.status_name(x),
                static_cast<unsigned long long>(algo.data[0]));
    size_t written = 0;
    x = cap(&algo, CUBLASLT_ALGO_CAP_TILE_IDS, nullptr, 0, &written);
    std::printf("cap_size=%s written=%zu\n", b.status_name(x), written);
    uint32_t value[4] = {7, 7, 7, 7};
    x = cap(&algo, CUBLASLT_ALGO_CAP_TILE_IDS, value, sizeof(value), nullptr);
    std::printf("cap=%s value=%u,%u\n", b.status_name(x), value[0], value[1]);
    std::printf("cap_null=%s\n",
                b.status_name(cap(&algo, CUBLASLT_ALGO_CAP_TILE_IDS, nullptr, 0, nullptr)));
    uint32_t tile = 17;
    x = config_set(&algo, CUBLASLT_ALGO_CONFIG_TILE_ID, &tile, sizeof(tile));
    uint32_t back = 0;
    auto y = config_get(&algo, CUBLASLT_ALGO_CONFIG_TILE_ID, &back, sizeof(back), &written);
    std::printf("config=%s,%s tile=%u written=%zu\n", b.status_name(x), b.status_name(y), back,
                written);
    cublasLtMatmulDesc_t desc = nullptr;
    cublasLtMatrixLayout_t layout = nullptr;
    b.lt_desc_create(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F);
    b.lt_layout_create(&layout, CUDA_R_32F, 2, 2, 2);
    cublasLtMatmulHeuristicResult_t result{};
    result.algo.data[3] = 42;
    x = check(h, desc, layout, layout, layout, layout, &algo, &result);
    std::printf("check=%s workspace=%zu kept=%llu\n", b.status_name(x), result.workspaceSize,
                static_cast<unsigned long long>(result.algo.data[3]));
    size_t capacity = 0;
    x = cache_get(&capacity);
    std::printf("capacity=%s %zu\n", b.status_name(x), capacity);
    std::printf("capacity_set=%s\n", b.status_name(cache_set(64)));
    x = cache_get(&capacity);
    std::printf("capacity=%s %zu\n", b.status_name(x), capacity);
    // C = 2 A + B over 2 x 2 floats in p (A 0-3, B 4-7, C 8-11).
    auto* f = static_cast<float*>(p);
    float host[12] = {1, 2, 3, 4, 10, 20, 30, 40, 0, 0, 0, 0};
    a.memcpy(p, host, sizeof(host), cudaMemcpyHostToDevice);
    cublasLtMatrixTransformDesc_t td = nullptr;
    transform_desc(&td, CUDA_R_32F);
    float two = 2, one = 1;
    x = transform(h, td, &two, f, layout, &one, f + 4, layout, f + 8, layout, nullptr);
    auto z = transform(h, td, &two, f, nullptr, &one, f + 4, layout, f + 8, layout, nullptr);
    float out[12] = {};
    auto e = a.memcpy(out, p, sizeof(out), cudaMemcpyDeviceToHost);
    std::printf("transform=%s no_layout=%s sync=%s c=%g,%g,%g,%g\n", b.status_name(x),
                b.status_name(z), name(a, e), out[8], out[9], out[10], out[11]);
    // A matmul whose descriptor names an emulation descriptor: ours is sent
    // by value; anything else is refused at the call.
    decltype(&cublasLtEmulationDescCreate) emulation_create = nullptr;
    decltype(&cublasLtMatmulDescSetAttribute) desc_set = nullptr;
    if (!bind(lt, "cublasLtEmulationDescCreate", emulation_create)
        || !bind(lt, "cublasLtMatmulDescSetAttribute", desc_set))
      return 6;
    cublasLtEmulationDesc_t emulation = nullptr;
    emulation_create(&emulation);
    desc_set(desc, CUBLASLT_MATMUL_DESC_EMULATION_DESCRIPTOR, &emulation, sizeof(emulation));
    x = b.lt_matmul(h, desc, &one, f, layout, f + 4, layout, &one, f + 8, layout, f + 8, layout,
                    nullptr, nullptr, 0, nullptr);
    void* not_emulation = layout;
    desc_set(desc, CUBLASLT_MATMUL_DESC_EMULATION_DESCRIPTOR, &not_emulation,
             sizeof(not_emulation));
    z = b.lt_matmul(h, desc, &one, f, layout, f + 4, layout, &one, f + 8, layout, f + 8, layout,
                    nullptr, nullptr, 0, nullptr);
    std::printf("emulation=%s not_emulation=%s sync=%s\n", b.status_name(x), b.status_name(z),
                name(a, read_byte()));
  } else if (scenario == "blas_generated") {
    // p holds x = 1..4 (floats 0-3), y = 10,20,30,40 (4-7), A (8-15, 2 x 4).
    auto* f = static_cast<float*>(p);
    float host[16] = {1, 2, 3, 4, 10, 20, 30, 40, 1, 0, 0, 1, 1, 1, 2, 0};
    a.memcpy(p, host, sizeof(host), cudaMemcpyHostToDevice);
    cublasHandle_t h = nullptr;
    std::printf("create=%s\n", b.status_name(b.create(&h)));
    float two = 2, one = 1, zero = 0;
    std::printf("saxpy=%s\n", b.status_name(b.saxpy(h, 4, &two, f, 1, f + 4, 1)));
    // y = A^T x: A is 2 x 4 (lda 2), x its first two floats.
    std::printf("gemv=%s\n",
                b.status_name(b.sgemv(h, CUBLAS_OP_T, 2, 4, &one, f + 8, 2, f, 1, &zero, f + 4, 1)));
    float dot = -1;
    auto dot_status = b.sdot(h, 4, f, 1, f + 4, 1, &dot);
    std::printf("dot=%s value=%g\n", b.status_name(dot_status), dot);
    std::printf("device_mode=%s\n", b.status_name(b.set_pointer_mode(h, CUBLAS_POINTER_MODE_DEVICE)));
    std::printf("dot_device=%s\n", b.status_name(b.sdot(h, 4, f, 1, f + 4, 1, f + 15)));
    b.set_pointer_mode(h, CUBLAS_POINTER_MODE_HOST);
    float back[16] = {};
    auto e = a.memcpy(back, p, sizeof(back), cudaMemcpyDeviceToHost);
    std::printf("sync=%s y=%g,%g,%g,%g dot_device=%g\n", name(a, e), back[4], back[5], back[6],
                back[7], back[15]);
    std::printf("m=%s\n",
                b.status_name(b.sgemv(h, CUBLAS_OP_N, -1, 2, &one, f, 3, f, 1, &zero, f, 1)));
    std::printf("incx=%s\n",
                b.status_name(b.sgemv(h, CUBLAS_OP_N, 2, 2, &one, f, 2, f, 0, &zero, f, 1)));
    std::printf("null_alpha=%s\n", b.status_name(b.saxpy(h, 4, nullptr, f, 1, f + 4, 1)));
    std::printf("null_handle=%s\n", b.status_name(b.saxpy(nullptr, 4, &two, f, 1, f + 4, 1)));
    // 2^28 floats (1 GiB) from f run past the allocation and any slab
    // holding it.
    std::printf("past_end=%s\n", b.status_name(b.saxpy(h, 1 << 28, &two, f, 1, f + 4, 1)));
    std::printf("sync_after=%s\n", name(a, read_byte()));
    float norm = -1;
    std::printf("missing=%s\n", b.status_name(b.snrm2(h, 4, f, 1, &norm)));
    std::printf("destroy=%s\n", b.status_name(b.destroy(h)));
    // The legacy API (cublas.h) on the implicit handle of cublasInit.
    std::string dir = argv[1];
    void* lib = ::dlopen((dir.substr(0, dir.rfind('/') + 1) + "libcublas.so.13").c_str(),
                         RTLD_NOW | RTLD_LOCAL);
    using status_fn = cublasStatus_t (*)();
    using saxpy_fn = void (*)(int, float, const float*, int, float*, int);
    using sdot_fn = float (*)(int, const float*, int, const float*, int);
    using sgemv_fn = void (*)(char, int, int, float, const float*, int, const float*, int, float,
                              float*, int);
    status_fn init = nullptr, shutdown = nullptr, get_error = nullptr;
    saxpy_fn legacy_saxpy = nullptr;
    sdot_fn legacy_sdot = nullptr;
    sgemv_fn legacy_sgemv = nullptr;
    if (lib == nullptr || !bind(lib, "cublasInit", init) || !bind(lib, "cublasShutdown", shutdown)
        || !bind(lib, "cublasGetError", get_error) || !bind(lib, "cublasSaxpy", legacy_saxpy)
        || !bind(lib, "cublasSdot", legacy_sdot) || !bind(lib, "cublasSgemv", legacy_sgemv))
      return 4;
    float before = legacy_sdot(4, f, 1, f, 1);
    std::printf("legacy_before_init=%g error=%s\n", before, b.status_name(get_error()));
    std::printf("legacy_init=%s\n", b.status_name(init()));
    // y = 1,2,3,2 (above): y += 3x = 4,8,12,14; then x . y = 4+16+36+56 = 112.
    legacy_saxpy(4, 3.0f, f, 1, f + 4, 1);
    float legacy_dot = legacy_sdot(4, f, 1, f + 4, 1);
    auto dot_error = get_error();
    std::printf("legacy_dot=%g error=%s\n", legacy_dot, b.status_name(dot_error));
    legacy_sgemv('X', 2, 2, 1.0f, f, 2, f, 1, 0.0f, f, 1);
    auto first = get_error();
    auto second = get_error();
    std::printf("legacy_bad_trans error=%s then=%s\n", b.status_name(first),
                b.status_name(second));
    std::printf("legacy_shutdown=%s\n", b.status_name(shutdown()));
  } else if (scenario == "blas_vectors") {
    auto show = [&](const char* what, cublasStatus_t x) {
      std::printf("%s=%s\n", what, b.status_name(x));
    };
    auto list = [](const char* what, const float* v, size_t count) {
      std::string out;
      for (size_t i = 0; i < count; ++i)
        out += (i == 0 ? "" : ",") + std::to_string(static_cast<int>(v[i]));
      std::printf("%s=%s\n", what, out.c_str());
    };
    auto* d = static_cast<float*>(p);
    std::vector<float> zeros(1024, 0.0f);
    a.memcpy(p, zeros.data(), 4096, cudaMemcpyHostToDevice);
    // 5 elements: every other host one into every third device one, then
    // back into every other element of a buffer of -1s.
    float src[10];
    for (int i = 0; i < 10; ++i)
      src[i] = i % 2 == 0 ? static_cast<float>(10 + i / 2) : -5.0f;
    show("set_vector", b.set_vector(5, 4, src, 2, d, 3));
    float dev[16] = {};
    a.memcpy(dev, d, 15 * sizeof(float), cudaMemcpyDeviceToHost);
    list("device", dev, 15);
    float back[10];
    std::fill(back, back + 10, -1.0f);
    show("get_vector", b.get_vector(5, 4, d, 3, back, 2));
    list("host", back, 10);
    // 3 x 4 from host lda 5 (padding -7) into device ldb 4 at d + 64, back
    // into host ld 6 of -1s.
    float A[20];
    for (int j = 0; j < 4; ++j)
      for (int i = 0; i < 5; ++i)
        A[i + j * 5] = i < 3 ? static_cast<float>(1 + i + 10 * j) : -7.0f;
    show("set_matrix", b.set_matrix(3, 4, 4, A, 5, d + 64, 4));
    a.memcpy(dev, d + 64, 16 * sizeof(float), cudaMemcpyDeviceToHost);
    list("device_matrix", dev, 16);
    float out[24];
    std::fill(out, out + 24, -1.0f);
    show("get_matrix", b.get_matrix(3, 4, 4, d + 64, 4, out, 6));
    list("host_matrix", out, 24);
    // Contiguous (one plain copy each way), through the 64-bit forms too.
    float six[6] = {1, 2, 3, 4, 5, 6}, six_back[6] = {};
    show("set_vector_64", b.set_vector_64(6, 4, six, 1, d + 128, 1));
    show("get_vector_64", b.get_vector_64(6, 4, d + 128, 1, six_back, 1));
    list("contiguous", six_back, 6);
    std::fill(six_back, six_back + 6, 0.0f);
    show("set_matrix_64", b.set_matrix_64(2, 3, 4, six, 2, d + 160, 2));
    show("get_matrix", b.get_matrix(2, 3, 4, d + 160, 2, six_back, 2));
    list("contiguous_matrix", six_back, 6);
    // The Async forms on a stream; the source buffer is reused at once.
    cudaStream_t s = nullptr;
    a.stream_create(&s);
    float asrc[4] = {7, 8, 9, 10};
    show("set_vector_async", b.set_vector_async(4, 4, asrc, 1, d + 192, 2, s));
    std::fill(asrc, asrc + 4, 0.0f);
    float aback[8];
    std::fill(aback, aback + 8, -1.0f);
    show("get_vector_async", b.get_vector_async(4, 4, d + 192, 2, aback, 2, s));
    list("async_host", aback, 8);
    float am[6] = {1, 2, -7, 3, 4, -7}, amb[6];
    std::fill(amb, amb + 6, -1.0f);
    show("set_matrix_async", b.set_matrix_async(2, 2, 4, am, 3, d + 208, 2, s));
    show("get_matrix_async", b.get_matrix_async(2, 2, 4, d + 208, 2, amb, 3, s));
    list("async_matrix", amb, 6);
    a.stream_destroy(s);
    // More than one message: 300000 elements from every other host one
    // (Memcpy2D pieces) back contiguously (plain chunks); 2 columns of 1.2
    // MB each (sliced) with device ld rows + 8 and back.
    const size_t count = 300000;
    void* big = nullptr;
    a.malloc(&big, size_t{3} << 20);
    std::vector<float> bsrc(2 * count), bback(count, 0.0f), mback(2 * count, 0.0f);
    for (size_t i = 0; i < count; ++i) {
      bsrc[2 * i] = static_cast<float>(i % 1000);
      bsrc[2 * i + 1] = -1.0f;
    }
    show("big_set_vector", b.set_vector(static_cast<int>(count), 4, bsrc.data(), 2, big, 1));
    show("big_get_vector", b.get_vector(static_cast<int>(count), 4, big, 1, bback.data(), 1));
    bool same = true;
    for (size_t i = 0; i < count; ++i)
      same = same && bback[i] == static_cast<float>(i % 1000);
    auto rows = static_cast<int>(count);
    show("big_set_matrix", b.set_matrix(rows, 2, 4, bsrc.data(), rows, big, rows + 8));
    show("big_get_matrix", b.get_matrix(rows, 2, 4, big, rows + 8, mback.data(), rows));
    std::printf("big=%s\n", same && mback == bsrc ? "same" : "differs");
    // The argument checks: the vendor's INVALID_VALUE, then what its copy
    // would refuse (MAPPING_ERROR); nothing is sent for either.
    std::vector<float> large(2000, 1.0f);
    show("elem_size_0", b.set_vector(4, 0, src, 1, d, 1));
    show("incx_0", b.set_vector(4, 4, src, 0, d, 1));
    show("incy_negative", b.get_vector(4, 4, d, 1, back, -1));
    show("n_0", b.set_vector(0, 4, nullptr, 1, nullptr, 1));
    show("n_negative", b.set_vector(-1, 4, src, 1, d, 1));
    show("rows_negative", b.set_matrix(-1, 2, 4, A, 4, d, 4));
    show("lda_0", b.set_matrix(0, 2, 4, A, 0, d, 1));
    show("rows_0", b.set_matrix(0, 2, 4, A, 1, d, 1));
    show("lda_below_rows", b.set_matrix(4, 2, 4, A, 3, d, 4));
    show("ldb_below_rows", b.get_matrix(4, 2, 4, d, 4, out, 3));
    show("overflow", b.set_vector_64(int64_t{1} << 40, int64_t{1} << 20, src, int64_t{1} << 20,
                                     d, 1));
    show("null_host", b.set_vector(4, 4, nullptr, 1, d, 1));
    show("past_allocation", b.set_vector(2000, 4, large.data(), 1, d, 1));
    show("unknown_stream", b.set_vector_async(4, 4, src, 1, d, 1,
                                              reinterpret_cast<cudaStream_t>(uintptr_t{0x1234})));
    std::printf("last=%s\n", name(a, a.get_last_error()));
    // A synchronous transfer does not take an earlier async op's error.
    std::printf("failing=%s\n", name(a, a.memset_async(p, 0xEE, 4096, nullptr)));
    float one = 0;
    show("after_failure", b.get_vector(1, 4, d + 3, 1, &one, 1));
    std::printf("value=%g\n", static_cast<double>(one));
    std::printf("sync=%s\n", name(a, read_byte()));
  } else if (scenario == "latency") {
    std::vector<double> sync_us, async_us;
    for (int i = 0; i < n; ++i) {
      auto t0 = now_us();
      read_byte();
      sync_us.push_back(now_us() - t0);
    }
    for (int i = 0; i < n; ++i) {
      auto t0 = now_us();
      a.memset_async(p, 1, 64, nullptr);
      async_us.push_back(now_us() - t0);
    }
    auto e = read_byte();
    std::printf("sync_call_us=%.1f async_call_us=%.2f err=%s\n", median(sync_us),
                median(async_us), name(a, e));
  } else if (scenario == "paced") {
    for (int i = 0; i < n; ++i) {
      if (auto e = a.memset_async(p, i % 128, 4096, nullptr); e != cudaSuccess)
        std::printf("memset%d=%s\n", i, name(a, e));
      auto until = now_us() + 300;
      while (now_us() < until) {
      }
    }
    auto e = read_byte();
    std::printf("sync=%s byte=%d\n", name(a, e), byte);
  } else if (scenario == "decode") {
    std::vector<double> iter_us;
    for (int i = 0; i < n; ++i) {
      auto t0 = now_us();
      for (int k = 0; k < 32; ++k)
        a.memset_async(p, k, 64, nullptr);
      read_byte();
      iter_us.push_back(now_us() - t0);
    }
    std::printf("iter_us=%.1f byte=%d\n", median(iter_us), byte);
  } else if (scenario == "bulk") {
    size_t bytes = static_cast<size_t>(n) << 20;
    std::vector<char> host(bytes);
    for (size_t i = 0; i < bytes; ++i)
      host[i] = static_cast<char>((i * 131) >> 7);
    std::vector<char> back(bytes, 0);
    void* d = nullptr;
    if (auto e = a.malloc(&d, bytes); e != cudaSuccess) {
      std::printf("malloc=%s\n", name(a, e));
      return 5;
    }
    auto t0 = now_us();
    auto e1 = a.memcpy(d, host.data(), bytes, cudaMemcpyHostToDevice);
    auto t1 = now_us();
    auto e2 = a.memcpy(back.data(), d, bytes, cudaMemcpyDeviceToHost);
    auto t2 = now_us();
    std::printf("h2d_gbit_s=%.3f d2h_gbit_s=%.3f h2d=%s d2h=%s same=%d\n",
                bytes * 8 / (t1 - t0) / 1e3, bytes * 8 / (t2 - t1) / 1e3, name(a, e1),
                name(a, e2), host == back ? 1 : 0);
  } else {
    std::fprintf(stderr, "unknown scenario %s\n", scenario.c_str());
    return 2;
  }
  return 0;
}
