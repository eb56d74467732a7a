// cuRAND on the fake GPU server: LibraryCall ops of library CURAND run
// through the executor's generated cuRAND code (curand_library_calls.cpp,
// via its library_descriptor) over the fake cuRAND of
// tests/support/fake_curand.hpp, writing into the fake server's host memory.
#include "tests/interpose_runtime/fake_library_calls.hpp"

#include <curand.h>

#include <cstring>
#include <map>
#include <string>
#include <utility>

#include "executor/curand_api.hpp"
#include "executor/library_call.hpp"
#include "executor/library_runner.hpp"
#include "tests/support/fake_curand.hpp"

namespace gleam::test {

namespace {

/// The memory of the call being run (one thread at a time).
thread_local const fake_memory* current = nullptr;

/// The fake server's host bytes behind a device range (the fake cuRAND's
/// translate).
void* backing(void* device, uint64_t bytes) {
  bool known = false;
  return (*current)(reinterpret_cast<uintptr_t>(device), bytes, &known);
}

executor::curand_api& fake_api() {
  static executor::curand_api api;
  static bool filled = false;
  if (!filled) {
    install_fake_curand(api);
    fake_curand().translate = backing;
    filled = true;
  }
  return api;
}

const executor::library_descriptor& curand() {
  return *executor::find_library(proto::LibraryCall::CURAND);
}

/// The fake's handles (type, id) -> (library handle, host object), and the
/// outputs kept for LibraryOutputRead, by hold id. One session at a time.
std::map<std::pair<int32_t, uint64_t>, std::pair<void*, bool>>& handles() {
  static std::map<std::pair<int32_t, uint64_t>, std::pair<void*, bool>> h;
  return h;
}

std::map<uint64_t, std::string>& held() {
  static std::map<uint64_t, std::string> h;
  return h;
}

class curand_env final : public executor::library_call_env {
public:
  curand_env(const fake_memory& memory, proto::OpResult& r)
    : library_call_env(false), memory_(memory), r_(r) {
  }

  void* handle(uint64_t) override {
    fail(CURAND_STATUS_INTERNAL_ERROR, "cuRAND has no legacy handle");
    return nullptr;
  }
  bool device(uint64_t ptr, uint64_t bytes, const char* what) override {
    bool known = bytes == 0;
    if (!known)
      memory_(ptr, bytes, &known);
    if (!known)
      fail(CURAND_STATUS_OUT_OF_RANGE, std::string(what) + ": outside the fake server's memory");
    return known;
  }
  void report(int status, const char* function) override {
    ok_ = status == CURAND_STATUS_SUCCESS;
    if (ok_)
      r_.set_blas_status(status);
    else
      fail(status, std::string(function) + " returned " + curand().status_name(status));
  }
  void malformed(const char* function) override {
    fail(CURAND_STATUS_OUT_OF_RANGE, std::string(function) + ": the packed arguments do not match");
  }
  void unavailable(const char* function) override {
    fail(CURAND_STATUS_ARCH_MISMATCH, std::string(function) + " is missing from this server's cuRAND");
  }
  void* library_handle(uint64_t id, int32_t type, executor::handle_use) override {
    auto i = handles().find({type, id});
    if (i == handles().end()) {
      fail(CURAND_STATUS_NOT_INITIALIZED, "not a handle of this session");
      return nullptr;
    }
    note_handle_host(i->second.second);
    return i->second.first;
  }
  bool fresh(uint64_t id, int32_t type) override {
    if (id != 0 && handles().count({type, id}) == 0)
      return true;
    fail(CURAND_STATUS_OUT_OF_RANGE, "handle id in use");
    return false;
  }
  bool adopt(uint64_t id, int32_t type, void* handle, bool host_side) override {
    handles()[{type, id}] = {handle, host_side};
    return true;
  }
  bool adopt_address(int32_t type, void* handle) override {
    auto id = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(handle));
    auto* out = host_output(sizeof(id), "handle");
    if (out == nullptr)
      return false;
    std::memcpy(out, &id, sizeof(id));
    handles()[{type, id}] = {handle, false};
    return true;
  }
  void destroy(uint64_t id, int32_t type, const char* function) override {
    auto i = handles().find({type, id});
    if (i == handles().end()) {
      fail(CURAND_STATUS_NOT_INITIALIZED, "not a handle of this session");
      return;
    }
    auto* h = i->second.first;
    handles().erase(i);
    report(curand().handle_types[type].destroy(&fake_api(), h), function);
  }
  CUstream stream(uint64_t id, bool) override {
    return reinterpret_cast<CUstream>(static_cast<uintptr_t>(0x1000 + id));
  }

  /// After the call: outputs into the result, or kept under `hold`.
  void deliver(uint64_t hold) {
    if (!ok_)
      return;
    if (hold == 0)
      take_outputs(*r_.mutable_library_outputs());
    else
      held()[hold] = take_joined_outputs();
  }

protected:
  void invalid(std::string detail) override {
    fail(CURAND_STATUS_OUT_OF_RANGE, std::move(detail));
  }
  void too_large(std::string detail) override {
    fail(CURAND_STATUS_ALLOCATION_FAILED, std::move(detail));
  }

private:
  void fail(int32_t status, std::string detail) {
    ok_ = false;
    r_.set_blas_status(status);
    r_.set_status(static_cast<int32_t>(curand().cu_of(status)));
    r_.set_error(std::move(detail));
  }

  const fake_memory& memory_;
  proto::OpResult& r_;
  bool ok_ = false;
};

} // namespace

void fake_curand_call(const fake_memory& memory, const proto::LibraryCall& op,
                      proto::OpResult& r) {
  current = &memory;
  curand_env env(memory, r);
  wire::arg_reader in(op.args());
  if (!curand().run(&fake_api(), env, op.function(), in)) {
    r.set_blas_status(CURAND_STATUS_ARCH_MISMATCH);
    r.set_status(CUDA_ERROR_NOT_SUPPORTED);
    r.set_error("unknown cuRAND function id");
  } else {
    env.deliver(op.hold());
  }
  current = nullptr;
}

void fake_library_output_read(const proto::LibraryOutputRead& op, proto::OpResult& r) {
  auto i = held().find(op.hold());
  if (i == held().end() || op.offset() > i->second.size()
      || op.size() > i->second.size() - op.offset()) {
    r.set_status(CUDA_ERROR_INVALID_VALUE);
    r.set_error("no such kept library output");
    return;
  }
  r.set_data(i->second.substr(op.offset(), op.size()));
  if (op.release())
    held().erase(i);
}

} // namespace gleam::test
