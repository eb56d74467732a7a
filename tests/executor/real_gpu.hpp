#pragma once

// The [gpu] tests' client of a real executor (blas_test.cpp, cudnn_test.cpp):
// one executor over the real driver per test binary, a session per client,
// single ops, uploads and downloads.

#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "actors/proto/ops.pb.h"
#include "executor/driver_api.hpp"
#include "executor/executor.hpp"

namespace gleam::test {

/// The test binary's executor on GPU 0 through the real driver (made at the
/// first use; the test fails when there is none).
inline executor::executor& real_executor() {
  struct real_gpu {
    std::unique_ptr<executor::driver_api> driver;
    std::unique_ptr<executor::executor> exec;
  };
  static real_gpu g = [] {
    real_gpu out;
    auto api = executor::driver_api::load();
    if (!api)
      FAIL("driver_api::load: " << caf::to_string(api.error()));
    out.driver = std::move(*api);
    auto ex = executor::executor::make(*out.driver, 0);
    if (!ex)
      FAIL("executor::make: " << caf::to_string(ex.error()));
    out.exec = std::move(*ex);
    return out;
  }();
  return *g.exec;
}

/// A session of real_executor(), closed with the client.
struct real_client {
  executor::executor& ex = real_executor();
  uint64_t session = 0;
  /// The session's secret: every batch carries it.
  std::string secret;
  uint64_t seq = 0;

  real_client() {
    proto::OpenSession req;
    req.set_client_id("gpu-test:1");
    auto opened = ex.open_session(req);
    REQUIRE(opened);
    session = opened->session();
    secret = opened->secret();
  }

  ~real_client() {
    ex.close_session(session);
  }

  real_client(const real_client&) = delete;
  real_client& operator=(const real_client&) = delete;

  /// Runs one op, filled by `fill`, and returns its result.
  proto::OpResult run(const std::function<void(proto::Op&)>& fill) {
    proto::OpBatch batch;
    batch.set_session(session);
    batch.set_session_secret(secret);
    auto* op = batch.add_ops();
    op->set_seq(++seq);
    fill(*op);
    auto reply = ex.execute(batch);
    REQUIRE(reply.results_size() == 1);
    return reply.results(0);
  }

  /// A device allocation of `n` bytes.
  uint64_t alloc(size_t n) {
    auto r = run([&](proto::Op& op) { op.mutable_mem_alloc()->set_size(n); });
    REQUIRE(r.status() == 0);
    return r.dptr();
  }

  /// A device allocation holding the `n` bytes at `data`.
  uint64_t upload(const void* data, size_t n) {
    auto p = alloc(n);
    auto w = run([&](proto::Op& op) {
      op.mutable_memcpy_htod()->set_dst(p);
      op.mutable_memcpy_htod()->set_data(std::string(static_cast<const char*>(data), n));
    });
    REQUIRE(w.status() == 0);
    return p;
  }

  /// `count` values of type T at device address `p`.
  template <class T>
  std::vector<T> download(uint64_t p, size_t count) {
    auto r = run([&](proto::Op& op) {
      op.mutable_memcpy_dtoh()->set_src(p);
      op.mutable_memcpy_dtoh()->set_size(count * sizeof(T));
    });
    REQUIRE(r.status() == 0);
    std::vector<T> out(count);
    std::memcpy(out.data(), r.data().data(), count * sizeof(T));
    return out;
  }
};

} // namespace gleam::test
