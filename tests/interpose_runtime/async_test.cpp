// Asynchronous forwarding of the built libcudart.so.13 against a GPU-less
// fake server (fake_gpu_server.cpp): call classes, batching, deferred and
// sticky errors delivered at the right call, exactly once, and the strict
// synchronous mode (GLEAM_ASYNC=off).
#include <catch2/catch.hpp>

#include <stdlib.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "tests/interpose_runtime/fake_server.hpp"
#include "tests/support/files.hpp"
#include "tests/support/gpu_probe.hpp"
#include "tests/support/process.hpp"

namespace {

using gleam::test::build_path;
using gleam::test::free_port;
using gleam::test::port_open;
using gleam::test::read_file;
using gleam::test::run_command;
using gleam::test::source_path;
using gleam::test::spawn_logged;
using gleam::test::fake_server;
using gleam::test::spec_call_classes;
using gleam::test::stop_process;

/// A gleam-link child process in front of `target`, with `args` (a cut
/// schedule); SIGTERM at the end.
class link_process {
public:
  link_process(int target, const std::vector<std::string>& args) {
    port_ = free_port();
    std::vector<std::string> argv{build_path("bin/gleam-link"), "--listen",
                                  std::to_string(port_), "--target",
                                  "127.0.0.1:" + std::to_string(target)};
    argv.insert(argv.end(), args.begin(), args.end());
    pid_ = spawn_logged(argv, "/dev/null");
    for (int i = 0; i < 200 && !port_open(port_); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds{25});
    REQUIRE(port_open(port_));
  }
  ~link_process() {
    stop_process(pid_);
  }
  int port() const {
    return port_;
  }

private:
  int port_ = 0;
  pid_t pid_ = -1;
};

} // namespace

TEST_CASE("async and handle calls ride with the next sync call, local ones stay local",
          "[interpose_runtime]") {
  fake_server server;
  // No timer flush during the scenario: only the sync call sends.
  auto out = server.probe("classes", "GLEAM_FLUSH_US=60000000");
  CHECK(out == "calls=cudaSuccess device=0 count=1 threads=1024 flags=0 type=2 "
               "sync=cudaSuccess byte=3\n");
  // The first cudaMalloc asks for a slab (one round trip); both carve their
  // memory from it, and their registrations ride with stream/event create,
  // memset, event record, stream wait, two async copies, free, event
  // destroy, stream destroy and the sync copy in one batch.
  CHECK(server.stats() == "batch 1\nbatch 13\nbatches 2 ops 14\n");
  // The spec's call classes say the same of the functions the probe used.
  auto classes = spec_call_classes();
  for (const char* fn : {"cudaMemsetAsync", "cudaEventRecord", "cudaStreamWaitEvent",
                         "cudaMemcpyAsync", "cudaFree", "cudaEventDestroy",
                         "cudaStreamDestroy"}) {
    INFO(fn);
    CHECK(classes[fn] == "async");
  }
  for (const char* fn : {"cudaStreamCreate", "cudaEventCreate"}) {
    INFO(fn);
    CHECK(classes[fn] == "handle");
  }
  for (const char* fn : {"cudaGetDevice", "cudaGetDeviceCount", "cudaDeviceGetAttribute",
                         "cudaStreamGetFlags", "cudaPointerGetAttributes",
                         "cudaPeekAtLastError", "cudaGetLastError"}) {
    INFO(fn);
    CHECK(classes[fn] == "local");
  }
  CHECK(classes["cudaMemcpy"] == "sync");
}

TEST_CASE("error-code-only calls are queued and sent in few batches", "[interpose_runtime]") {
  fake_server server;
  SECTION("async") {
    auto out = server.probe("batching");
    CHECK(out == "sync=cudaSuccess byte=99\n");
    // cudaMalloc, 100 memsets and the copy: far fewer batches than ops (the
    // 200 us flush timer may split the memsets).
    auto n = server.batches();
    CHECK(n >= 2);
    CHECK(n <= 20);
  }
  SECTION("GLEAM_ASYNC=off sends every op alone") {
    auto out = server.probe("batching", "GLEAM_ASYNC=off");
    CHECK(out == "sync=cudaSuccess byte=99\n");
    CHECK(server.batches() == 102);
  }
}

TEST_CASE("GLEAM_WAIT_REPORT counts each wait for the server under the call's op",
          "[interpose_runtime]") {
  fake_server server;
  SECTION("async: the slab's allocation and the read-back") {
    CHECK(server.probe("classes", "GLEAM_FLUSH_US=60000000 GLEAM_WAIT_REPORT=1")
          == "calls=cudaSuccess device=0 count=1 threads=1024 flags=0 type=2 "
             "sync=cudaSuccess byte=3\n");
    // Two waits in all; the report's lines start at a line's beginning.
    CHECK_THAT(server.probe_errors(), Catch::Contains("gleam wait report: 2 waits, ")
                                        && Catch::Contains("\ngleam wait    mem_alloc 1 ")
                                        && Catch::Contains("\ngleam wait    memcpy_dtoh 1 "));
  }
  SECTION("GLEAM_ASYNC=off: every memset waits") {
    CHECK(server.probe("batching", "GLEAM_ASYNC=off GLEAM_WAIT_REPORT=1")
          == "sync=cudaSuccess byte=99\n");
    auto errors = server.probe_errors();
    CHECK_THAT(errors, Catch::Contains("gleam wait report: 102 waits, ")
                         && Catch::Contains("\ngleam wait    memset 100 ")
                         && Catch::Contains("\ngleam wait    mem_alloc 1 ")
                         && Catch::Contains("\ngleam wait    memcpy_dtoh 1 "));
  }
  SECTION("without the variable, no report") {
    server.probe("batching");
    CHECK_THAT(server.probe_errors(), !Catch::Contains("gleam wait"));
  }
}

TEST_CASE("a stream synchronize right after a copy back on that stream costs no round trip",
          "[interpose_runtime]") {
  fake_server server;
  CHECK(server.probe("idle_sync", "GLEAM_WAIT_REPORT=1")
        == "copy=cudaSuccess sync=cudaSuccess cudaSuccess byte=5 after_work=cudaSuccess byte=6 "
           "cudaSuccess\n");
  auto errors = server.probe_errors();
  // The allocation, two copies back and only the synchronize that follows
  // new work wait; it is reported with the op before it.
  CHECK_THAT(errors, Catch::Contains("gleam wait report: 4 waits, ")
                       && Catch::Contains("\ngleam wait    stream_synchronize 1 ")
                       && Catch::Contains("\ngleam wait      after memset 1 ")
                       && Catch::Contains("\ngleam wait    memcpy_dtoh 2 "));
}

TEST_CASE("a stream synchronize right after an upload from host memory costs no round trip",
          "[interpose_runtime]") {
  fake_server server;
  CHECK(server.probe("upload_sync", "GLEAM_WAIT_REPORT=1")
        == "upload=cudaSuccess sync=cudaSuccess byte=9 cudaSuccess after_memset=cudaSuccess "
           "after_error=cudaSuccess cudaErrorInvalidValue cudaSuccess byte=10\n");
  auto errors = server.probe_errors();
  // The allocation, three copies back and the synchronize after a memset
  // wait; both synchronizes after an upload return at once.
  CHECK_THAT(errors, Catch::Contains("gleam wait report: 5 waits, ")
                       && Catch::Contains("\ngleam wait    stream_synchronize 1 ")
                       && Catch::Contains("\ngleam wait      after memset 1 ")
                       && Catch::Contains("\ngleam local   stream_synchronize after an upload 2\n"));
}

TEST_CASE("a full window of batches in flight costs the app no wait: its ops gather",
          "[interpose_runtime]") {
  // Every memset busies the server 3 ms and comes 300 us after the last
  // (past the flush delay): the max_pending_batch (8) batches in flight are
  // all the server's backlog, and the ops after them wait in the client's
  // queue instead of making the app wait for a reply.
  fake_server server{{"--op-us", "3000"}};
  CHECK(server.probe("paced 40", "GLEAM_WAIT_REPORT=1") == "sync=cudaSuccess byte=39\n");
  auto errors = server.probe_errors();
  CHECK_THAT(errors, Catch::Contains("gleam wait report: 2 waits, ")
                       && Catch::Contains("\ngleam wait    mem_alloc 1 ")
                       && Catch::Contains("\ngleam wait    memcpy_dtoh 1 ")
                       && !Catch::Contains("window_full"));
  // Fewer batches than memsets: those behind the full window went together.
  auto n = server.batches();
  CHECK(n >= 3);
  CHECK(n < 40);
}

TEST_CASE("an async error is returned by the next synchronizing call, once",
          "[interpose_runtime]") {
  fake_server server;
  SECTION("async") {
    CHECK(server.probe("deferred") == "failing=cudaSuccess\n"
                                      "next=cudaSuccess\n"
                                      "sync1=cudaErrorInvalidValue byte=7\n"
                                      "sync2=cudaSuccess\n"
                                      "last1=cudaErrorInvalidValue\n"
                                      "last2=cudaSuccess\n");
  }
  SECTION("GLEAM_ASYNC=off returns it at the call itself") {
    CHECK(server.probe("deferred", "GLEAM_ASYNC=off") == "failing=cudaErrorInvalidValue\n"
                                                         "next=cudaSuccess\n"
                                                         "sync1=cudaSuccess byte=7\n"
                                                         "sync2=cudaSuccess\n"
                                                         "last1=cudaErrorInvalidValue\n"
                                                         "last2=cudaSuccess\n");
  }
}

TEST_CASE("cudaGetLastError takes a reconciled async error, and only once",
          "[interpose_runtime]") {
  fake_server server;
  SECTION("a cudaMalloc with a round trip reconciles it") {
    CHECK(server.probe("lasterror", "GLEAM_ALLOC_SLAB=0") == "failing=cudaSuccess\n"
                                                             "malloc=cudaSuccess\n"
                                                             "peek=cudaErrorInvalidValue\n"
                                                             "last1=cudaErrorInvalidValue\n"
                                                             "last2=cudaSuccess\n"
                                                             "sync=cudaSuccess\n");
  }
  SECTION("a carved cudaMalloc waits for nothing: the next sync delivers it") {
    // The probe's first cudaMalloc took the slab; this one is carved.
    CHECK(server.probe("lasterror") == "failing=cudaSuccess\n"
                                       "malloc=cudaSuccess\n"
                                       "peek=cudaSuccess\n"
                                       "last1=cudaSuccess\n"
                                       "last2=cudaSuccess\n"
                                       "sync=cudaErrorInvalidValue\n");
  }
}

TEST_CASE("a sticky async error surfaces at the next sync and stays", "[interpose_runtime]") {
  fake_server server;
  CHECK(server.probe("sticky") == "failing=cudaSuccess\n"
                                  "next=cudaSuccess\n"
                                  "sync1=cudaErrorIllegalAddress\n"
                                  "sync2=cudaErrorIllegalAddress\n"
                                  "malloc=cudaErrorIllegalAddress\n");
}

TEST_CASE("a legacy-stream call that a capture forbids fails at the call, not later",
          "[interpose_runtime][capture]") {
  fake_server server;
  // CUDA returns cudaErrorStreamCaptureImplicit from the memset itself; a
  // queued memset would have returned cudaSuccess and failed at the sync.
  CHECK(server.probe("capture_legacy") == "begin=cudaSuccess\n"
                                          "legacy=cudaErrorStreamCaptureImplicit\n"
                                          "captured=cudaSuccess\n"
                                          "after=cudaSuccess\n"
                                          "sync=cudaSuccess byte=3\n");
}

TEST_CASE("the buffer of a pending pageable H2D copy may be reused at once",
          "[interpose_runtime]") {
  fake_server server;
  CHECK(server.probe("reuse") == "copy=cudaSuccess\nsync=cudaSuccess byte=A\n");
}

TEST_CASE("bulk copies arrive whole in pipelined chunks", "[interpose_runtime]") {
  fake_server server;
  // 40 MiB: chunks of at most max_message_payload each way. The weight cache
  // is off: this is the plain transport (the fake server has no cache).
  auto out = server.probe("bulk 40", "GLEAM_CACHE=off");
  CHECK(out.find("h2d=cudaSuccess d2h=cudaSuccess same=1") != std::string::npos);
}

TEST_CASE("bulk copies through the weight cache arrive whole, cache cold or absent",
          "[interpose_runtime]") {
  // Cold: every key missing, so every chunk travels after its key. Absent:
  // the first CacheFill is refused and the copy goes plain, once warned.
  auto cache = GENERATE(std::string{"1"}, std::string{"0"});
  fake_server server{{"--cache", cache}};
  auto out = server.probe("bulk 40");
  CHECK(out.find("h2d=cudaSuccess d2h=cudaSuccess same=1") != std::string::npos);
  CHECK((server.probe_errors().find("has no weight cache") != std::string::npos) == (cache == "0"));
}

TEST_CASE("a bulk copy over a 20 Mbit/s link keeps its connection", "[interpose_runtime]") {
  // CAF drops a peer from which no whole message came for 2 s: each message
  // must cross the slowest link in less (16 MiB ones took 6.7 s here, and
  // the copy never finished: lost, resumed, sent again, lost...). 6 MiB each
  // way: about 5 s in all.
  fake_server server;
  link_process link{server.port(), {"--link", "20mbit,1ms"}};
  auto out = server.probe("bulk 6", "GLEAM_CACHE=off", link.port());
  CHECK(out.find("h2d=cudaSuccess d2h=cudaSuccess same=1") != std::string::npos);
  CHECK(server.probe_errors().find("lost the connection") == std::string::npos);
}

TEST_CASE("a cached upload over a 30 Mbit/s link keeps its connection", "[interpose_runtime]") {
  // 16 chunks of 1 MiB against a cold cache: once the window is full the
  // chunks queued behind it must still leave as messages of about 1 MiB
  // (merged into one batch of 8 MiB, that batch took 2.2 s to cross and
  // the server dropped the client). About 5 s each way.
  fake_server server{{"--cache", "1"}};
  link_process link{server.port(), {"--link", "30mbit,1ms"}};
  auto out = server.probe("bulk 16", "", link.port());
  CHECK(out.find("h2d=cudaSuccess d2h=cudaSuccess same=1") != std::string::npos);
  CHECK(server.probe_errors().find("lost the connection") == std::string::npos);
}

TEST_CASE("a link too slow for a message to cross in time fails after reconnect-for, not never",
          "[interpose_runtime][reconnect]") {
  // At 2 Mbit/s a 1 MiB message takes 4 s to cross: the server drops the
  // client before it arrives, after every reconnect. With no batch answered
  // in between the drops, the session fails once reconnect-for has passed.
  fake_server server;
  auto conf = server.client_config("[client]\nreconnect-for = 3s\n");
  link_process link{server.port(), {"--link", "2mbit,1ms"}};
  auto start = std::chrono::steady_clock::now();
  auto out = server.probe("bulk 4", "GLEAM_CACHE=off " + conf, link.port());
  auto took = std::chrono::steady_clock::now() - start;
  CHECK(out.find("h2d=cudaErrorDevicesUnavailable") != std::string::npos);
  CHECK(server.probe_errors().find("no batch was answered in between") != std::string::npos);
  // A guard against a hang: ~3 s of drops and reconnects, then the error.
  CHECK(took < std::chrono::seconds{40});
}

// --- cuBLAS / cuBLASLt (libcublas.so.13 and libcublasLt.so.13 of the build)

TEST_CASE("cuBLAS gemms and handle settings ride with the next sync call",
          "[interpose_runtime][blas]") {
  fake_server server;
  // C = 0, then 50 times C += A * I: the gemms run, in order, on the server.
  const std::string expected = "calls=CUBLAS_STATUS_SUCCESS sync=cudaSuccess c=50,100,150,200\n";
  SECTION("async") {
    CHECK(server.probe("blas_batch", "GLEAM_FLUSH_US=60000000") == expected);
    // The slab of the first cudaMalloc, the H2D copy (with the carved
    // allocations' registration) and cublasCreate wait for their answers;
    // SetStream, SetMathMode, SetWorkspace, 50 SGEMMs, the cuBLASLt matmul,
    // cublasDestroy and the D2H copy leave as one batch.
    CHECK(server.stats() == "batch 1\nbatch 2\nbatch 1\nbatch 56\nbatches 4 ops 60\n");
  }
  SECTION("GLEAM_ASYNC=off sends every op alone") {
    CHECK(server.probe("blas_batch", "GLEAM_ASYNC=off") == expected);
    CHECK(server.batches() == 59);
  }
  auto blas = spec_call_classes("cublas.spec");
  for (const char* fn :
       {"cublasSgemm_v2", "cublasSgemm_v2_64", "cublasDgemm_v2", "cublasHgemm", "cublasGemmEx",
        "cublasGemmEx_64", "cublasSgemmStridedBatched", "cublasGemmStridedBatchedEx",
        "cublasGemmBatchedEx", "cublasHgemmBatched_64", "cublasSetStream_v2",
        "cublasSetWorkspace_v2", "cublasSetMathMode", "cublasSetAtomicsMode",
        "cublasDestroy_v2"}) {
    INFO(fn);
    CHECK(blas[fn] == "async");
  }
  for (const char* fn : {"cublasGetStream_v2", "cublasGetMathMode", "cublasGetAtomicsMode",
                         "cublasGetPointerMode_v2", "cublasSetPointerMode_v2",
                         "cublasGetStatusString"}) {
    INFO(fn);
    CHECK(blas[fn] == "local");
  }
  CHECK(blas["cublasCreate_v2"] == "handle");
  auto lt = spec_call_classes("cublasLt.spec");
  CHECK(lt["cublasLtMatmul"] == "async");
  CHECK(lt["cublasLtDestroy"] == "async");
  CHECK(lt["cublasLtMatmulAlgoGetHeuristic"] == "sync");
}

TEST_CASE("a cuBLAS failure the server reports later is the next CUDA sync call's error, once",
          "[interpose_runtime][blas]") {
  fake_server server;
  SECTION("async") {
    // The refused gemm returns at once; cublasCreate (a synchronous cuBLAS
    // call) does not take its error; the next cudart sync does, once; the
    // gemm after it still ran.
    CHECK(server.probe("blas_deferred") == "create=CUBLAS_STATUS_SUCCESS\n"
                                           "failing=CUBLAS_STATUS_SUCCESS\n"
                                           "next=CUBLAS_STATUS_SUCCESS\n"
                                           "create2=CUBLAS_STATUS_SUCCESS\n"
                                           "sync1=cudaErrorInvalidValue c3=4\n"
                                           "sync2=cudaSuccess\n"
                                           "last1=cudaErrorInvalidValue\n"
                                           "last2=cudaSuccess\n");
  }
  SECTION("GLEAM_ASYNC=off returns the library status at the call") {
    CHECK(server.probe("blas_deferred", "GLEAM_ASYNC=off") == "create=CUBLAS_STATUS_SUCCESS\n"
                                                              "failing=CUBLAS_STATUS_INVALID_VALUE\n"
                                                              "next=CUBLAS_STATUS_SUCCESS\n"
                                                              "create2=CUBLAS_STATUS_SUCCESS\n"
                                                              "sync1=cudaSuccess c3=4\n"
                                                              "sync2=cudaSuccess\n"
                                                              "last1=cudaSuccess\n"
                                                              "last2=cudaSuccess\n");
  }
}

TEST_CASE("cuBLAS argument checks fail at the call and send nothing", "[interpose_runtime][blas]") {
  fake_server server;
  const std::string expected = "create=CUBLAS_STATUS_SUCCESS\n"
                               "lda=CUBLAS_STATUS_INVALID_VALUE\n"
                               "lda_t=CUBLAS_STATUS_INVALID_VALUE\n"
                               "ldb=CUBLAS_STATUS_INVALID_VALUE\n"
                               "ldc=CUBLAS_STATUS_INVALID_VALUE\n"
                               "lda0=CUBLAS_STATUS_INVALID_VALUE\n"
                               "m=CUBLAS_STATUS_INVALID_VALUE\n"
                               "trans=CUBLAS_STATUS_INVALID_VALUE\n"
                               "alpha=CUBLAS_STATUS_INVALID_VALUE\n"
                               "batch=CUBLAS_STATUS_INVALID_VALUE\n"
                               "handle=CUBLAS_STATUS_NOT_INITIALIZED\n"
                               "pointer_mode=CUBLAS_STATUS_SUCCESS\n"
                               "gemm_device_mode=CUBLAS_STATUS_NOT_SUPPORTED\n"
                               "pointer_mode_bad=CUBLAS_STATUS_INVALID_VALUE\n"
                               "pointer_mode_host=CUBLAS_STATUS_SUCCESS\n"
                               "workspace=CUBLAS_STATUS_INVALID_VALUE\n"
                               "workspace_range=CUBLAS_STATUS_INVALID_VALUE\n"
                               "lt_layout=CUBLAS_STATUS_INVALID_VALUE\n"
                               "empty=CUBLAS_STATUS_SUCCESS\n"
                               "destroy=CUBLAS_STATUS_SUCCESS\n"
                               "sync=cudaSuccess\n";
  SECTION("async") {
    CHECK(server.probe("blas_checks", "GLEAM_FLUSH_US=60000000") == expected);
    // cudaMalloc's slab, and cublasCreate with the carved allocation's
    // registration; then only the empty gemm, the destroy and the sync copy
    // reach the server.
    CHECK(server.stats() == "batch 1\nbatch 2\nbatch 3\nbatches 3 ops 6\n");
  }
  SECTION("GLEAM_ASYNC=off") {
    CHECK(server.probe("blas_checks", "GLEAM_ASYNC=off") == expected);
    CHECK(server.batches() == 5);
  }
}

TEST_CASE("a repeated cuBLASLt heuristic query is answered on the client",
          "[interpose_runtime][blas]") {
  fake_server server;
  CHECK(server.probe("blas_heuristic") == "create=CUBLAS_STATUS_SUCCESS\n"
                                          "heuristic1=CUBLAS_STATUS_SUCCESS found=1 workspace=1001\n"
                                          "heuristic1=CUBLAS_STATUS_SUCCESS found=1 workspace=1001\n"
                                          "heuristic2=CUBLAS_STATUS_SUCCESS found=1 workspace=1002\n"
                                          "sync=cudaSuccess\n");
  // cudaMalloc's slab, the carved allocation's registration (queued, and
  // sent at once after a quiet link), cublasCreate, the two different
  // queries, the sync copy.
  CHECK(server.stats()
        == "batch 1\nbatch 1\nbatch 1\nbatch 1\nbatch 1\nbatch 1\nbatches 6 ops 6\n");
}

TEST_CASE("the cuBLASLt algo-level API and matrix transform through the interposer",
          "[interpose_runtime][blas]") {
  fake_server server;
  CHECK(server.probe("blas_lt_algo")
        == "create=CUBLAS_STATUS_SUCCESS\n"
           "ids=CUBLAS_STATUS_SUCCESS count=2 5,9\n"
           "ids0=CUBLAS_STATUS_INVALID_VALUE\n"
           "init99=CUBLAS_STATUS_NOT_SUPPORTED\n"
           "init=CUBLAS_STATUS_SUCCESS id=9\n"
           "cap_size=CUBLAS_STATUS_SUCCESS written=4\n"
           // Only the bytes the library wrote are copied back.
           "cap=CUBLAS_STATUS_SUCCESS value=9,7\n"
           "cap_null=CUBLAS_STATUS_INVALID_VALUE\n"
           "config=CUBLAS_STATUS_SUCCESS,CUBLAS_STATUS_SUCCESS tile=17 written=4\n"
           // The result's algo field stays the app's.
           "check=CUBLAS_STATUS_SUCCESS workspace=900 kept=42\n"
           "capacity=CUBLAS_STATUS_SUCCESS 8192\n"
           "capacity_set=CUBLAS_STATUS_SUCCESS\n"
           "capacity=CUBLAS_STATUS_SUCCESS 64\n"
           // A given without its layout is refused at the call.
           "transform=CUBLAS_STATUS_SUCCESS no_layout=CUBLAS_STATUS_INVALID_VALUE "
           "sync=cudaSuccess c=12,24,36,48\n"
           "emulation=CUBLAS_STATUS_SUCCESS not_emulation=CUBLAS_STATUS_INVALID_VALUE "
           "sync=cudaSuccess\n");
  auto lt = spec_call_classes("cublasLt.spec");
  CHECK(lt["cublasLtMatrixTransform"] == "async");
  CHECK(lt["cublasLtHeuristicsCacheSetCapacity"] == "async");
  for (const char* fn : {"cublasLtMatmulAlgoGetIds", "cublasLtMatmulAlgoInit",
                         "cublasLtMatmulAlgoCheck", "cublasLtMatmulAlgoCapGetAttribute",
                         "cublasLtMatmulAlgoConfigGetAttribute",
                         "cublasLtMatmulAlgoConfigSetAttribute",
                         "cublasLtHeuristicsCacheGetCapacity"}) {
    INFO(fn);
    CHECK(lt[fn] == "sync");
  }
}

TEST_CASE("generated cuBLAS calls pack, queue and answer like the vendor's",
          "[interpose_runtime][blas]") {
  // Through the built libcublas.so.13 against the fake server, which runs
  // the generated server code over a host saxpy/sdot/sgemv.
  fake_server server;
  // y = 2x + y = 12,24,36,48; then y = A^T x with x = (1, 2) and A's
  // columns (1,0) (0,1) (1,1) (2,0): 1,2,3,2. The dot of x = 1..4 and that
  // y: 1 + 4 + 9 + 8 = 22.
  auto expected = [](const char* past_end_sync) {
    return std::string("create=CUBLAS_STATUS_SUCCESS\n"
                       "saxpy=CUBLAS_STATUS_SUCCESS\n"
                       "gemv=CUBLAS_STATUS_SUCCESS\n"
                       "dot=CUBLAS_STATUS_SUCCESS value=22\n"
                       "device_mode=CUBLAS_STATUS_SUCCESS\n"
                       "dot_device=CUBLAS_STATUS_SUCCESS\n"
                       "sync=cudaSuccess y=1,2,3,2 dot_device=22\n"
                       "m=CUBLAS_STATUS_INVALID_VALUE\n"
                       "incx=CUBLAS_STATUS_INVALID_VALUE\n"
                       "null_alpha=CUBLAS_STATUS_INVALID_VALUE\n"
                       "null_handle=CUBLAS_STATUS_NOT_INITIALIZED\n")
           + past_end_sync
           + "missing=CUBLAS_STATUS_NOT_SUPPORTED\n"
             "destroy=CUBLAS_STATUS_SUCCESS\n"
             "legacy_before_init=0 error=CUBLAS_STATUS_NOT_INITIALIZED\n"
             "legacy_init=CUBLAS_STATUS_SUCCESS\n"
             "legacy_dot=112 error=CUBLAS_STATUS_SUCCESS\n"
             "legacy_bad_trans error=CUBLAS_STATUS_INVALID_VALUE then=CUBLAS_STATUS_SUCCESS\n"
             "legacy_shutdown=CUBLAS_STATUS_SUCCESS\n";
  };
  SECTION("async: the refused saxpy is the next sync call's error") {
    CHECK(server.probe("blas_generated")
          == expected("past_end=CUBLAS_STATUS_SUCCESS\nsync_after=cudaErrorInvalidValue\n"));
  }
  SECTION("GLEAM_ASYNC=off: each call returns its own status") {
    CHECK(server.probe("blas_generated", "GLEAM_ASYNC=off")
          == expected("past_end=CUBLAS_STATUS_INVALID_VALUE\nsync_after=cudaSuccess\n"));
  }
  auto blas = spec_call_classes("cublas.spec");
  CHECK(blas["cublasSaxpy_v2"] == "async");
  CHECK(blas["cublasSgemv_v2"] == "async");
  CHECK(blas["cublasSdot_v2"] == "sync");
}

TEST_CASE("cuBLAS vector and matrix transfers move the strided bytes and check like the vendor",
          "[interpose_runtime][blas]") {
  fake_server server;
  // Strided runs land at their increments and leading dimensions and the
  // gaps keep their bytes; transfers above one message (1 MiB) come back
  // whole; the vendor's argument checks (INVALID_VALUE) and what its copy
  // refuses (MAPPING_ERROR) fail at the call and leave the CUDA last error
  // alone.
  const std::string transfers = "set_vector=CUBLAS_STATUS_SUCCESS\n"
                                "device=10,0,0,11,0,0,12,0,0,13,0,0,14,0,0\n"
                                "get_vector=CUBLAS_STATUS_SUCCESS\n"
                                "host=10,-1,11,-1,12,-1,13,-1,14,-1\n"
                                "set_matrix=CUBLAS_STATUS_SUCCESS\n"
                                "device_matrix=1,2,3,0,11,12,13,0,21,22,23,0,31,32,33,0\n"
                                "get_matrix=CUBLAS_STATUS_SUCCESS\n"
                                "host_matrix=1,2,3,-1,-1,-1,11,12,13,-1,-1,-1,21,22,23,-1,-1,"
                                "-1,31,32,33,-1,-1,-1\n"
                                "set_vector_64=CUBLAS_STATUS_SUCCESS\n"
                                "get_vector_64=CUBLAS_STATUS_SUCCESS\n"
                                "contiguous=1,2,3,4,5,6\n"
                                "set_matrix_64=CUBLAS_STATUS_SUCCESS\n"
                                "get_matrix=CUBLAS_STATUS_SUCCESS\n"
                                "contiguous_matrix=1,2,3,4,5,6\n"
                                "set_vector_async=CUBLAS_STATUS_SUCCESS\n"
                                "get_vector_async=CUBLAS_STATUS_SUCCESS\n"
                                "async_host=7,-1,8,-1,9,-1,10,-1\n"
                                "set_matrix_async=CUBLAS_STATUS_SUCCESS\n"
                                "get_matrix_async=CUBLAS_STATUS_SUCCESS\n"
                                "async_matrix=1,2,-1,3,4,-1\n"
                                "big_set_vector=CUBLAS_STATUS_SUCCESS\n"
                                "big_get_vector=CUBLAS_STATUS_SUCCESS\n"
                                "big_set_matrix=CUBLAS_STATUS_SUCCESS\n"
                                "big_get_matrix=CUBLAS_STATUS_SUCCESS\n"
                                "big=same\n"
                                "elem_size_0=CUBLAS_STATUS_INVALID_VALUE\n"
                                "incx_0=CUBLAS_STATUS_INVALID_VALUE\n"
                                "incy_negative=CUBLAS_STATUS_INVALID_VALUE\n"
                                "n_0=CUBLAS_STATUS_SUCCESS\n"
                                "n_negative=CUBLAS_STATUS_MAPPING_ERROR\n"
                                "rows_negative=CUBLAS_STATUS_INVALID_VALUE\n"
                                "lda_0=CUBLAS_STATUS_INVALID_VALUE\n"
                                "rows_0=CUBLAS_STATUS_SUCCESS\n"
                                "lda_below_rows=CUBLAS_STATUS_MAPPING_ERROR\n"
                                "ldb_below_rows=CUBLAS_STATUS_MAPPING_ERROR\n"
                                "overflow=CUBLAS_STATUS_INVALID_VALUE\n"
                                "null_host=CUBLAS_STATUS_MAPPING_ERROR\n"
                                "past_allocation=CUBLAS_STATUS_MAPPING_ERROR\n"
                                "unknown_stream=CUBLAS_STATUS_MAPPING_ERROR\n"
                                "last=cudaSuccess\n";
  SECTION("async") {
    // The failing memset's error is not the synchronous GetVector's (a
    // cuBLAS status describes its own call): the next cudart sync takes it.
    CHECK(server.probe("blas_vectors") == transfers
                                            + "failing=cudaSuccess\n"
                                              "after_failure=CUBLAS_STATUS_SUCCESS\n"
                                              "value=11\n"
                                              "sync=cudaErrorInvalidValue\n");
  }
  SECTION("GLEAM_ASYNC=off") {
    CHECK(server.probe("blas_vectors", "GLEAM_ASYNC=off") == transfers
                                                               + "failing=cudaErrorInvalidValue\n"
                                                                 "after_failure=CUBLAS_STATUS_"
                                                                 "SUCCESS\n"
                                                                 "value=11\n"
                                                                 "sync=cudaSuccess\n");
  }
}

/// Runs probe `scenario` through a gleam-link that cuts the link 1 s in, for
/// 3 s, in each cut mode: the app prints `expected` as without a cut, and
/// its client got the session back once.
void check_cut_invisible(const std::string& scenario, const std::string& expected) {
  for (const char* mode : {"hold", "reset"}) {
    INFO("cut mode " << mode);
    fake_server server;
    link_process link{server.port(), {"--cut-at", "1s", "--cut-for", "3s", "--cut-mode", mode}};
    CHECK(server.probe(scenario, "", link.port()) == expected);
    CHECK(server.probe_errors().find("reconnected to") != std::string::npos);
    CHECK(server.stats().find("resumes 1") != std::string::npos);
  }
}

TEST_CASE("a link cut of 3 s in the middle of a run is invisible to the app",
          "[interpose_runtime][reconnect]") {
  // The probe runs ~4 s (300 rounds of a memset, a read-back and 10 ms).
  check_cut_invisible("steady 300", "steady=cudaSuccess wrong=0\n");
}

TEST_CASE("graph host nodes run in the client at every replay, in order, once each",
          "[interpose_runtime][graphs]") {
  const std::string expected = "add=cudaSuccess cudaSuccess\n"
                               "get=cudaSuccess same=1\n"
                               "instantiate=cudaSuccess\n"
                               "replays=cudaSuccess tags=20:1,2 ordered=1\n"
                               "exec_set=cudaSuccess sync=cudaSuccess tags=22:1,3\n"
                               "graph_set=cudaSuccess sync=cudaSuccess tags=24:4,2\n"
                               "bad_params=cudaErrorInvalidValue\n"
                               "captured_func=cudaSuccess end=cudaSuccess sync=cudaSuccess "
                               "tags=27:5,5,5\n"
                               "inside_sync=cudaSuccess inside=cudaErrorNotPermitted\n"
                               "add_callback=cudaErrorStreamCaptureUnsupported "
                               "end=cudaErrorStreamCaptureInvalidated\n"
                               "outside=cudaSuccess tags=28:1\n"
                               "final=cudaSuccess\n";
  fake_server server;
  CHECK(server.probe("host_nodes 10") == expected);
  CHECK(server.probe("host_nodes 10", "GLEAM_ASYNC=off") == expected);
}

TEST_CASE("graph memory: allocations in and out of captures, memory nodes and their checks",
          "[interpose_runtime][graphs]") {
  const std::string expected =
    "malloc_async=cudaSuccess device read=cudaSuccess byte=0x5a free=cudaSuccess "
    "again=cudaErrorInvalidValue\n"
    "bad_stream=cudaErrorInvalidResourceHandle\n"
    "captured_malloc=cudaSuccess device free=cudaSuccess end=cudaSuccess\n"
    "alloc_node=cudaSuccess device params=cudaSuccess same=1\n"
    "free_node=cudaSuccess params=cudaSuccess same=1 twice=cudaErrorInvalidValue\n"
    "bad_pool=cudaErrorInvalidValue peer=cudaErrorNotSupported\n"
    "trim=cudaSuccess bad_device=cudaErrorInvalidDevice\n"
    "final=cudaSuccess\n";
  fake_server server;
  CHECK(server.probe("graph_memory") == expected);
  CHECK(server.probe("graph_memory", "GLEAM_ASYNC=off") == expected);
  CHECK(server.probe_errors().find("cudaGraphAddMemAllocNode peer access") != std::string::npos);
}

TEST_CASE("a link cut of 3 s while graphs with host nodes replay is invisible to the app",
          "[interpose_runtime][reconnect][graphs]") {
  // ~300 replays of 10 ms; the cut comes while the server waits on a host
  // function or between two replays.
  check_cut_invisible("host_steady 300", "host_steady=cudaSuccess wrong=0\n");
}

TEST_CASE("a cut longer than reconnect-for gives a CUDA error, not a hang",
          "[interpose_runtime][reconnect]") {
  fake_server server;
  auto conf = server.client_config("[client]\nreconnect-for = 1s\n");
  link_process link{server.port(), {"--cut-at", "1s", "--cut-for", "20s", "--cut-mode", "reset"}};
  auto start = std::chrono::steady_clock::now();
  auto out = server.probe("steady 300", conf, link.port());
  auto took = std::chrono::steady_clock::now() - start;
  CHECK(out == "steady=cudaErrorDevicesUnavailable wrong=0\n");
  CHECK(server.probe_errors().find("getting the session back failed") != std::string::npos);
  // Bounded: about 1 s of work, 1 s of reconnect attempts, the rest fails
  // at once (not a timed assertion of speed, a guard against a hang).
  CHECK(took < std::chrono::seconds{15});
}
