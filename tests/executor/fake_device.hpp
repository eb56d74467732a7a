#pragma once

#include <catch2/catch.hpp>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "actors/proto/ops.pb.h"
#include "executor/driver_api.hpp"
#include "executor/executor.hpp"
#include "tests/executor/fake_device_driver.hpp"

namespace gleam::test {

/// An executor over the fake device (fake_device() emptied first) with one
/// open session, whose ops run one batch each. Attach fake libraries
/// (use_blas, use_library) before the first op that uses them.
struct fake_executor {
  executor::driver_api driver;
  std::unique_ptr<executor::executor> exec;
  uint64_t session = 0;
  /// The session's secret: every batch carries it.
  std::string secret;
  uint64_t seq = 0;

  fake_executor() {
    fake_device() = fake_device_log{};
    install_fake_device(driver);
    auto ex = executor::executor::make(driver, 0);
    REQUIRE(ex);
    exec = std::move(*ex);
    proto::OpenSession req;
    req.set_client_id("cpu:1");
    auto opened = exec->open_session(req);
    REQUIRE(opened);
    session = opened->session();
    secret = opened->secret();
  }

  /// Runs one op, filled by `fill`, and returns its result.
  proto::OpResult run(const std::function<void(proto::Op&)>& fill) {
    proto::OpBatch batch;
    batch.set_session(session);
    batch.set_session_secret(secret);
    auto* op = batch.add_ops();
    op->set_seq(++seq);
    fill(*op);
    auto reply = exec->execute(batch);
    REQUIRE(reply.results_size() == 1);
    return reply.results(0);
  }

  /// A device allocation of `n` bytes (host memory: its address is a host
  /// pointer).
  uint64_t alloc(uint64_t n) {
    auto r = run([&](proto::Op& op) { op.mutable_mem_alloc()->set_size(n); });
    REQUIRE(r.status() == CUDA_SUCCESS);
    return r.dptr();
  }
};

} // namespace gleam::test
