// The libraries of the generic runner on the fake GPU server: LibraryCall
// ops of cuRAND and cuDNN run through the executor's generated code (their
// <lib>_library_calls.cpp, via each library_descriptor) over the fake
// libraries of tests/support/fake_curand.hpp and fake_cudnn.hpp, writing
// into the fake server's host memory.
#include "tests/interpose_runtime/fake_library_calls.hpp"

#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <utility>

#include "executor/cudnn_api.hpp"
#include "executor/curand_api.hpp"
#include "executor/library_call.hpp"
#include "executor/library_runner.hpp"
#include "tests/support/fake_cudnn.hpp"
#include "tests/support/fake_curand.hpp"

namespace gleam::test {

namespace {

/// The memory of the call being run (one thread at a time).
thread_local const fake_memory* current = nullptr;

/// The fake server's host bytes behind a device range (the fakes'
/// translate).
void* backing(void* device, uint64_t bytes) {
  bool known = false;
  return (*current)(reinterpret_cast<uintptr_t>(device), bytes, &known);
}

executor::curand_api& fake_curand_api() {
  static executor::curand_api api;
  static bool filled = false;
  if (!filled) {
    install_fake_curand(api);
    fake_curand().translate = backing;
    filled = true;
  }
  return api;
}

executor::cudnn_api& fake_cudnn_api() {
  static executor::cudnn_api api;
  static bool filled = false;
  if (!filled) {
    install_fake_cudnn(api);
    fake_cudnn().translate = backing;
    filled = true;
  }
  return api;
}

/// A handle of the fakes: the library's handle, whether it is a host
/// object, and the runner's note.
struct fake_handle {
  void* handle = nullptr;
  bool host = false;
  std::shared_ptr<void> note;
};

/// The fakes' handles by (library, type, id), and the outputs kept for
/// LibraryOutputRead, by hold id. One session at a time.
using handle_key = std::tuple<int32_t, int32_t, uint64_t>;

std::map<handle_key, fake_handle>& handles() {
  static std::map<handle_key, fake_handle> h;
  return h;
}

std::map<uint64_t, std::string>& held() {
  static std::map<uint64_t, std::string> h;
  return h;
}

/// The library_call_env of the fake server for a library of the generic
/// runner: handles by client id, streams named by their client id, device
/// ranges in the fake server's memory.
class generic_env final : public executor::library_call_env {
public:
  generic_env(const executor::library_descriptor& lib, void* api, const fake_memory& memory,
              proto::OpResult& r)
    : library_call_env(false), lib_(lib), api_(api), memory_(memory), r_(r) {
  }

  void* handle(uint64_t) override {
    fail(lib_.status.internal, std::string(lib_.name) + " has no legacy handle");
    return nullptr;
  }
  bool device(uint64_t ptr, uint64_t bytes, const char* what) override {
    bool known = bytes == 0;
    if (!known)
      memory_(ptr, bytes, &known);
    if (!known)
      fail(lib_.status.invalid, std::string(what) + ": outside the fake server's memory");
    return known;
  }
  void report(int status, const char* function) override {
    ok_ = status == lib_.status.success;
    if (ok_)
      r_.set_blas_status(status);
    else
      fail(status, std::string(function) + " returned " + lib_.status_name(status));
  }
  void malformed(const char* function) override {
    fail(lib_.status.invalid, std::string(function) + ": the packed arguments do not match");
  }
  void unavailable(const char* function) override {
    fail(lib_.status.not_supported,
         std::string(function) + " is missing from this server's " + lib_.name);
  }
  void* library_handle(uint64_t id, int32_t type, executor::handle_use) override {
    auto i = handles().find(key(id, type));
    if (i == handles().end()) {
      fail(lib_.status.not_initialized, "not a handle of this session");
      return nullptr;
    }
    note_handle_host(i->second.host);
    return i->second.handle;
  }
  std::shared_ptr<void>* handle_note(uint64_t id, int32_t type) override {
    auto i = handles().find(key(id, type));
    return i == handles().end() ? nullptr : &i->second.note;
  }
  bool fresh(uint64_t id, int32_t type) override {
    if (id != 0 && handles().count(key(id, type)) == 0)
      return true;
    fail(lib_.status.invalid, "handle id in use");
    return false;
  }
  bool adopt(uint64_t id, int32_t type, void* handle, bool host_side) override {
    handles()[key(id, type)] = {handle, host_side, nullptr};
    return true;
  }
  bool adopt_address(int32_t type, void* handle) override {
    auto id = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(handle));
    auto* out = host_output(sizeof(id), "handle");
    if (out == nullptr)
      return false;
    std::memcpy(out, &id, sizeof(id));
    handles()[key(id, type)] = {handle, false, nullptr};
    return true;
  }
  void destroy(uint64_t id, int32_t type, const char* function) override {
    auto i = handles().find(key(id, type));
    if (i == handles().end()) {
      fail(lib_.status.not_initialized, "not a handle of this session");
      return;
    }
    auto* h = i->second.handle;
    handles().erase(i);
    report(lib_.handle_types[type].destroy(api_, h), function);
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
    fail(lib_.status.invalid, std::move(detail));
  }
  void too_large(std::string detail) override {
    fail(lib_.status.alloc_failed, std::move(detail));
  }

private:
  handle_key key(uint64_t id, int32_t type) const {
    return {static_cast<int32_t>(lib_.library), type, id};
  }

  void fail(int32_t status, std::string detail) {
    ok_ = false;
    r_.set_blas_status(status);
    r_.set_status(static_cast<int32_t>(lib_.cu_of(status)));
    r_.set_error(std::move(detail));
  }

  const executor::library_descriptor& lib_;
  void* api_;
  const fake_memory& memory_;
  proto::OpResult& r_;
  bool ok_ = false;
};

/// Runs `op` of library `lib` over its fake `api`.
void generic_call(const executor::library_descriptor& lib, void* api, const fake_memory& memory,
                  const proto::LibraryCall& op, proto::OpResult& r) {
  current = &memory;
  generic_env env(lib, api, memory, r);
  wire::arg_reader in(op.args());
  if (!lib.run(api, env, op.function(), in)) {
    r.set_blas_status(lib.status.not_supported);
    r.set_status(CUDA_ERROR_NOT_SUPPORTED);
    r.set_error(std::string("unknown ") + lib.name + " function id");
  } else {
    env.deliver(op.hold());
  }
  current = nullptr;
}

} // namespace

void fake_curand_call(const fake_memory& memory, const proto::LibraryCall& op,
                      proto::OpResult& r) {
  generic_call(*executor::find_library(proto::LibraryCall::CURAND), &fake_curand_api(), memory,
               op, r);
}

void fake_cudnn_call(const fake_memory& memory, const proto::LibraryCall& op,
                     proto::OpResult& r) {
  generic_call(*executor::find_library(proto::LibraryCall::CUDNN), &fake_cudnn_api(), memory, op,
               r);
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
