#include "executor/library_runner.hpp"

#include <cstring>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "executor/blas.hpp"
#include "executor/library_graveyard.hpp"
#include "executor/op_table.hpp"
#include "executor/session_streams.hpp"

namespace gleam::executor {

// Written by generate.py from each library's spec (<lib>_library_calls.cpp).
extern const library_descriptor curand_library;
extern const library_descriptor cufft_library;
extern const library_descriptor cusparse_library;
extern const library_descriptor nvml_library;
extern const library_descriptor cudnn_library;
extern const library_descriptor cusolver_library;

const library_descriptor* find_library(proto::LibraryCall::Library library) noexcept {
  static const library_descriptor* const all[] = {&curand_library, &cufft_library,
                                                  &cusparse_library, &nvml_library,
                                                  &cudnn_library, &cusolver_library};
  for (const auto* d : all)
    if (d->library == library)
      return d;
  return nullptr;
}

namespace {

/// Host outputs a session may keep for LibraryOutputRead at once (bytes).
constexpr uint64_t max_held_bytes = uint64_t{1} << 30;

/// Largest piece one LibraryOutputRead returns (bytes), as the executor's
/// device-to-host copies.
constexpr uint64_t max_read_bytes = uint64_t{64} << 20;

/// The library_call_env of the generic runner: the session's handle table,
/// streams and allocations, and the op's result.
class generic_env final : public library_call_env {
public:
  generic_env(const library_descriptor& lib, void* api, driver_api& driver, session& s,
              proto::OpResult& r, bool device_scalars)
    : library_call_env(device_scalars), lib_(lib), api_(api), driver_(driver), s_(s), r_(r) {
  }

  // --- results ---------------------------------------------------------------

  /// Fails the call with library status `status`; `cu` is the CUresult
  /// of r.status (the library's own for the status when CUDA_SUCCESS).
  void fail(int32_t status, std::string detail, CUresult cu = CUDA_SUCCESS) {
    r_.set_blas_status(status);
    r_.set_status(static_cast<int32_t>(cu != CUDA_SUCCESS ? cu : lib_.cu_of(status)));
    r_.set_error(std::move(detail));
    succeeded_ = false;
  }

  void report(int status, const char* function) override {
    if (status == lib_.status.success) {
      r_.set_blas_status(status);
      succeeded_ = true;
      return;
    }
    fail(status, fmt::format("{} returned {} ({})", function, status, lib_.status_name(status)));
  }

  void malformed(const char* function) override {
    fail(lib_.status.invalid,
         fmt::format("{}: the packed arguments do not match its parameters; the client was "
                     "built from another {}",
                     function, lib_.spec));
  }

  void unavailable(const char* function) override {
    fail(lib_.status.not_supported,
         fmt::format("{} is missing from this server's {}", function, lib_.name));
  }

  /// True when the library reported success and nothing failed since.
  [[nodiscard]] bool succeeded() const noexcept {
    return succeeded_;
  }

  /// Puts the host outputs into the result, or keeps them under `hold`.
  void deliver(uint64_t hold) {
    if (hold == 0) {
      take_outputs(*r_.mutable_library_outputs());
      return;
    }
    auto bytes = take_joined_outputs();
    if (s_.library_held.count(hold) != 0)
      return fail(lib_.status.invalid,
                  fmt::format("hold id {} already keeps outputs of this session; use a fresh id",
                              hold));
    if (s_.library_held_bytes + bytes.size() > max_held_bytes)
      return fail(lib_.status.alloc_failed,
                  fmt::format("{} bytes of results to keep, {} kept already: a session keeps at "
                              "most {} bytes of unread results",
                              bytes.size(), s_.library_held_bytes, max_held_bytes));
    s_.library_held_bytes += bytes.size();
    s_.library_held.emplace(hold, std::move(bytes));
  }

  // --- memory and streams ------------------------------------------------------

  void* handle(uint64_t id) override {
    fail(lib_.status.internal, fmt::format("{} has no legacy handle (id {})", lib_.name, id));
    return nullptr;
  }

  bool device(uint64_t ptr, uint64_t bytes, const char* what) override {
    if (bytes == 0 || s_.memory.contains(ptr, bytes))
      return true;
    fail(lib_.status.invalid,
         fmt::format("{}: address {:#x} + {} bytes is outside this session's allocations; "
                     "pass device memory from this process's cudaMalloc, large enough for "
                     "the count",
                     what, ptr, bytes));
    return false;
  }

  /// A batched routine's array of matrix pointers, read on the stream of
  /// the call's handle once its earlier work is done.
  bool device_array(uint64_t ptr, int64_t count, uint64_t bytes_each,
                    const char* what) override {
    if (work_stream_ == nullptr && count > 0) {
      fail(lib_.status.internal,
           fmt::format("{}: a device array of pointers needs the call's handle on a stream",
                       what));
      return false;
    }
    CUresult rc = CUDA_SUCCESS;
    auto checked = check_pointer_array(
      driver_, work_stream_, ptr, count, bytes_each, what,
      [this](uint64_t p, uint64_t n, const char* w) { return device(p, n, w); }, &rc);
    if (checked == pointer_array_check::sync_failed || checked == pointer_array_check::read_failed)
      fail(lib_.status.internal,
           fmt::format("{} {} failed: {}",
                       checked == pointer_array_check::sync_failed
                         ? "the stream's work before reading"
                         : "reading",
                       what, driver_.describe(rc)),
           rc);
    return checked == pointer_array_check::ok;
  }

  CUstream stream(uint64_t id, bool work) override {
    CUstream out = nullptr;
    auto rc = work ? stream_for_work(driver_, s_, id, &out) : driver_stream(driver_, s_, id, &out);
    if (rc == CUDA_SUCCESS)
      return out;
    fail(lib_.status.invalid,
         fmt::format("stream handle {} is not a usable stream of this session ({})", id,
                     static_cast<int>(rc)),
         rc);
    return nullptr;
  }

  // --- handles ---------------------------------------------------------------

  void* library_handle(uint64_t id, int32_t type, handle_use use) override {
    auto* e = find(id, type);
    if (e == nullptr)
      return nullptr;
    note_handle_host(e->host);
    if (use != handle_use::work || e->host || e->type->set_stream == nullptr)
      return e->handle;
    // Work on the handle's stream, ordered like any work of the session;
    // the library hears of a stream only when it changes.
    CUstream st = nullptr;
    auto rc = stream_for_work(driver_, s_, e->stream, &st);
    if (rc != CUDA_SUCCESS) {
      fail(lib_.status.invalid,
           fmt::format("stream handle {} of {} {} is not a usable stream of this session ({})",
                       e->stream, e->type->name, id, static_cast<int>(rc)),
           rc);
      return nullptr;
    }
    if (st != e->bound) {
      auto status = e->type->set_stream(e->api, e->handle, st);
      if (status != lib_.status.success) {
        fail(status, fmt::format("putting {} {} on its stream returned {} ({})", e->type->name,
                                 id, status, lib_.status_name(status)));
        return nullptr;
      }
      e->bound = st;
    }
    work_stream_ = st;
    return e->handle;
  }

  std::shared_ptr<void>* handle_note(uint64_t id, int32_t type) override {
    auto i = s_.library_handles.find(key(id, type));
    return i == s_.library_handles.end() ? nullptr : &i->second.note;
  }

  bool fresh(uint64_t id, int32_t type) override {
    if (!known_type(type))
      return false;
    if (id != 0 && s_.library_handles.count(key(id, type)) == 0)
      return true;
    fail(lib_.status.invalid, fmt::format("handle {} is 0 or already in use in this session; "
                                          "use a fresh client handle",
                                          id));
    return false;
  }

  bool adopt(uint64_t id, int32_t type, void* handle, bool host) override {
    if (!fresh(id, type)) {
      if (known_type(type))
        static_cast<void>(lib_.handle_types[type].destroy(api_, handle));
      return false;
    }
    library_handle_entry e;
    e.handle = handle;
    e.type = &lib_.handle_types[type];
    e.api = api_;
    e.host = host;
    s_.library_handles.emplace(key(id, type), e);
    return true;
  }

  bool adopt_address(int32_t type, void* handle) override {
    if (!known_type(type))
      return false;
    auto id = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(handle));
    if (id == 0 || s_.library_handles.count(key(id, type)) != 0) {
      fail(lib_.status.internal,
           fmt::format("the library returned {} {:#x}, which is null or already a handle of "
                       "this session",
                       lib_.handle_types[type].name, id));
      return false;
    }
    auto* out = host_output(sizeof(id), lib_.handle_types[type].name);
    if (out == nullptr)
      return false;
    std::memcpy(out, &id, sizeof(id));
    library_handle_entry e;
    e.handle = handle;
    e.type = &lib_.handle_types[type];
    e.api = api_;
    s_.library_handles.emplace(key(id, type), e);
    return true;
  }

  void destroy(uint64_t id, int32_t type, const char* function) override {
    auto* e = find(id, type);
    if (e == nullptr)
      return;
    auto entry = *e;
    s_.library_handles.erase(key(id, type));
    // The destruction may synchronize the device: while this session
    // captures, that invalidates its captures, as it would locally.
    if (!s_.captures.empty())
      static_cast<void>(sync_session(driver_, s_));
    report(destroy_entry(s_.graves, entry), function);
  }

  void stream_set(uint64_t handle_id, int32_t type, uint64_t stream_id, CUstream stream) override {
    auto i = s_.library_handles.find(key(handle_id, type));
    if (i == s_.library_handles.end())
      return;
    i->second.stream = stream_id;
    i->second.bound = stream;
  }

  /// Destroys `e` now or through `graves`.
  static int32_t destroy_entry(library_graveyard* graves, const library_handle_entry& e) {
    auto now = [e] { return e.type->destroy(e.api, e.handle); };
    if (graves == nullptr)
      return now();
    return graves->destroy(now, [e] {
      if (e.type->set_stream != nullptr && e.bound != nullptr)
        static_cast<void>(e.type->set_stream(e.api, e.handle, nullptr));
    });
  }

protected:
  void invalid(std::string detail) override {
    fail(lib_.status.invalid, std::move(detail));
  }

  void too_large(std::string detail) override {
    fail(lib_.status.alloc_failed, std::move(detail));
  }

private:
  library_handle_key key(uint64_t id, int32_t type) const noexcept {
    return {static_cast<int32_t>(lib_.library), type, id};
  }

  bool known_type(int32_t type) {
    if (type >= 0 && static_cast<size_t>(type) < lib_.handle_type_count)
      return true;
    fail(lib_.status.internal, fmt::format("{} has no handle type {}", lib_.name, type));
    return false;
  }

  library_handle_entry* find(uint64_t id, int32_t type) {
    if (!known_type(type))
      return nullptr;
    auto i = s_.library_handles.find(key(id, type));
    if (i != s_.library_handles.end())
      return &i->second;
    if (lib_.handle_types[type].lookup != nullptr)
      return session_gpu(id, type);
    fail(lib_.status.not_initialized,
         fmt::format("{} {} is not a handle of this session (never created, or destroyed)",
                     lib_.handle_types[type].name, id));
    return nullptr;
  }

  /// The library's handle of the session's GPU of index `id` (a session
  /// has one GPU: index 0), found by its UUID at the first use and kept in
  /// the session's table (never destroyed: the library owns it).
  library_handle_entry* session_gpu(uint64_t id, int32_t type) {
    const auto& t = lib_.handle_types[type];
    if (id != 0) {
      fail(lib_.status.not_initialized,
           fmt::format("{} {} is no GPU of this session, which has one (index 0)", t.name, id));
      return nullptr;
    }
    void* h = nullptr;
    auto status = t.lookup(api_, s_.gpu_uuid.c_str(), &h);
    if (status != lib_.status.success || h == nullptr) {
      fail(status != lib_.status.success ? status : lib_.status.internal,
           fmt::format("this server's {} does not find the session's GPU {} ({})", lib_.name,
                       s_.gpu_uuid, lib_.status_name(status)));
      return nullptr;
    }
    library_handle_entry e;
    e.handle = h;
    e.type = &t;
    e.api = api_;
    return &s_.library_handles.emplace(key(id, type), e).first->second;
  }

  const library_descriptor& lib_;
  void* api_;
  driver_api& driver_;
  session& s_;
  proto::OpResult& r_;
  bool succeeded_ = false;
  /// The driver stream of the handle this call works on (library_handle
  /// for work); null before, or for a handle without a stream.
  CUstream work_stream_ = nullptr;
};

void run_call(blas_api* blas, driver_api& driver, session& s, const proto::Op& op,
              proto::OpResult& r) {
  const auto& c = op.library_call();
  if (c.library() == proto::LibraryCall::CUBLAS)
    return run_blas(blas, driver, s, op, r);
  const auto* lib = find_library(c.library());
  if (lib == nullptr) {
    r.set_status(CUDA_ERROR_NOT_SUPPORTED);
    r.set_error(fmt::format("library {} is not one this server runs; use one Gleam release on "
                            "both sides",
                            static_cast<int>(c.library())));
    return;
  }
  void* api = nullptr;
  if (s.library_overrides != nullptr)
    if (auto i = s.library_overrides->find(static_cast<int32_t>(lib->library));
        i != s.library_overrides->end())
      api = i->second;
  if (api == nullptr) {
    auto shared = lib->shared();
    if (!shared) {
      r.set_blas_status(lib->status.not_supported);
      r.set_status(CUDA_ERROR_NOT_SUPPORTED);
      r.set_error(fmt::format("this GPU server cannot run {}: {}", lib->name,
                              to_string(shared.error())));
      return;
    }
    api = *shared;
  }
  generic_env env(*lib, api, driver, s, r, c.device_scalars());
  wire::arg_reader in(c.args());
  if (!lib->run(api, env, c.function(), in)) {
    env.fail(lib->status.not_supported,
             fmt::format("{} function id {} is unknown to this server: the client was built "
                         "from another {}; use one Gleam release on both sides",
                         lib->name, c.function(), lib->spec));
    return;
  }
  if (env.succeeded())
    env.deliver(c.hold());
}

void read_outputs(session& s, const proto::LibraryOutputRead& rd, proto::OpResult& r) {
  auto i = s.library_held.find(rd.hold());
  if (i == s.library_held.end()) {
    r.set_status(CUDA_ERROR_INVALID_VALUE);
    r.set_error(fmt::format("no library results are kept under hold id {} (never kept, or "
                            "already released)",
                            rd.hold()));
    return;
  }
  auto size = static_cast<uint64_t>(i->second.size());
  if (rd.offset() > size || rd.size() > size - rd.offset() || rd.size() > max_read_bytes) {
    r.set_status(CUDA_ERROR_INVALID_VALUE);
    r.set_error(fmt::format("read of {} bytes at {} of {} kept bytes (at most {} a read)",
                            rd.size(), rd.offset(), size, max_read_bytes));
    return;
  }
  r.set_data(i->second.data() + rd.offset(), static_cast<size_t>(rd.size()));
  if (rd.release()) {
    s.library_held_bytes -= size;
    s.library_held.erase(i);
  }
}

} // namespace

void run_library_op(blas_api* blas, driver_api& driver, session& s, const proto::Op& op,
                    proto::OpResult& r) {
  if (op.has_library_output_read())
    return read_outputs(s, op.library_output_read(), r);
  run_call(blas, driver, s, op, r);
}

size_t release_library_handles(session& s) {
  size_t failed = 0;
  // Later handle types first (the spec's order): what a library's handle
  // made (cuDNN's descriptors and plans) goes before the handle itself.
  for (auto i = s.library_handles.rbegin(); i != s.library_handles.rend(); ++i)
    if (generic_env::destroy_entry(s.graves, i->second) != 0)
      ++failed;
  s.library_handles.clear();
  s.library_held.clear();
  s.library_held_bytes = 0;
  return failed;
}

// --- registration (executor/op_table.hpp) -----------------------------------

namespace {

void run_library_route(op_context& cx, const proto::Op& op) {
  run_library_op(cx.blas, cx.api, cx.s, op, cx.r);
}

// Library calls (cuBLAS's and every other library's generated ones) and
// their kept outputs.
constexpr op_route library_routes[] = {
  {proto::Op::KindCase::kLibraryCall, run_library_route},
  {proto::Op::KindCase::kLibraryOutputRead, run_library_route},
};

} // namespace

const op_family library_family = make_family(library_routes);

} // namespace gleam::executor
