#include "executor/executor.hpp"

#include <chrono>
#include <utility>

#include <fmt/format.h>

#include "executor/device_memory_tier.hpp"
#include "executor/error.hpp"
#include "executor/op_context.hpp"
#include "executor/op_table.hpp"
#include "executor/session_release.hpp"
#include "executor/session_secret.hpp"
#include "wire/protocol.hpp"

namespace gleam::executor {

namespace {

/// Errors after which the context is unusable; the batch stops there.
bool is_sticky(CUresult rc) {
  switch (rc) {
    case CUDA_ERROR_ECC_UNCORRECTABLE:
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_LAUNCH_TIMEOUT:
    case CUDA_ERROR_ASSERT:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_LAUNCH_FAILED:
    case CUDA_ERROR_CONTEXT_IS_DESTROYED:
      return true;
    default:
      return false;
  }
}

std::string uuid_string(const std::string& bytes) {
  std::string out = "GPU-";
  for (size_t i = 0; i < bytes.size(); ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10)
      out += '-';
    out += fmt::format("{:02x}", static_cast<uint8_t>(bytes[i]));
  }
  return out;
}

uint64_t now_ns() {
  using namespace std::chrono;
  return static_cast<uint64_t>(
    duration_cast<nanoseconds>(system_clock::now().time_since_epoch()).count());
}

} // namespace

// --- executor ---------------------------------------------------------------

executor::executor(driver_api& api, int ordinal, CUdevice device,
                   CUcontext context)
  : api_(api), ordinal_(ordinal), device_(device), context_(context) {
}

caf::expected<std::unique_ptr<executor>> executor::make(driver_api& api,
                                                        int ordinal) {
  int count = 0;
  if (auto rc = api.cuDeviceGetCount(&count); rc != CUDA_SUCCESS)
    return make_error(error_code::driver_call_failed,
                      "cuDeviceGetCount failed: " + api.describe(rc));
  if (ordinal < 0 || ordinal >= count)
    return make_error(error_code::no_such_device,
                      fmt::format("GPU ordinal {} does not exist: this host "
                                  "has {} GPU(s); configure an ordinal "
                                  "below {}",
                                  ordinal, count, count));
  CUdevice device = 0;
  if (auto rc = api.cuDeviceGet(&device, ordinal); rc != CUDA_SUCCESS)
    return make_error(error_code::driver_call_failed,
                      fmt::format("cuDeviceGet({}) failed: {}", ordinal,
                                  api.describe(rc)));
  CUcontext context = nullptr;
  if (auto rc = api.cuDevicePrimaryCtxRetain(&context, device);
      rc != CUDA_SUCCESS)
    return make_error(error_code::driver_call_failed,
                      fmt::format("cuDevicePrimaryCtxRetain on GPU {} failed: "
                                  "{}; check nvidia-smi for the GPU's compute "
                                  "mode and health",
                                  ordinal, api.describe(rc)));
  std::unique_ptr<executor> self{new executor(api, ordinal, device, context)};
  if (auto rc = self->make_current(); rc != CUDA_SUCCESS)
    return make_error(error_code::driver_call_failed,
                      fmt::format("cuCtxSetCurrent on GPU {} failed: {}",
                                  ordinal, api.describe(rc)));
  auto& info = self->device_info_;
  info.set_ordinal(static_cast<uint32_t>(ordinal));
  char name[256] = {};
  if (api.cuDeviceGetName(name, sizeof(name) - 1, device) == CUDA_SUCCESS)
    info.set_name(name);
  CUuuid uuid;
  if (api.cuDeviceGetUuid(&uuid, device) == CUDA_SUCCESS)
    info.set_uuid(std::string(uuid.bytes, sizeof(uuid.bytes)));
  size_t total = 0;
  if (api.cuDeviceTotalMem(&total, device) == CUDA_SUCCESS)
    info.set_total_memory(total);
  auto& attrs = *info.mutable_attributes();
  for (int a = 1; a < CU_DEVICE_ATTRIBUTE_MAX; ++a) {
    int value = 0;
    if (api.cuDeviceGetAttribute(&value, static_cast<CUdevice_attribute>(a),
                                 device)
        == CUDA_SUCCESS)
      attrs[a] = value;
  }
  if (api.cuDriverGetVersion(&self->driver_version_) != CUDA_SUCCESS)
    self->driver_version_ = 0;
  return self;
}

executor::~executor() {
  if (make_current() == CUDA_SUCCESS)
    for (auto& kv : sessions_)
      static_cast<void>(release_session_resources(api_, kv.second, cache_.get(), device_));
  sessions_.clear();
  graves_.bury(true);
  judge_.release();
  static_cast<void>(api_.cuDevicePrimaryCtxRelease(device_));
}

bool executor::any_capture() const {
  for (const auto& kv : sessions_)
    if (!kv.second.captures.empty())
      return true;
  return false;
}

CUresult executor::make_current() const {
  // The executor's own work never takes part in an app's capture rules: its
  // thread runs in relaxed capture interaction mode, and only ops marked
  // capture_checked are judged (capture_judge, from run_op).
  if (api_.cuThreadExchangeStreamCaptureMode != nullptr) {
    CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_RELAXED;
    static_cast<void>(api_.cuThreadExchangeStreamCaptureMode(&mode));
  }
  return api_.cuCtxSetCurrent(context_);
}

caf::expected<proto::SessionOpened>
executor::open_session(const proto::OpenSession& request, const std::string& tenant) {
  if (auto rc = make_current(); rc != CUDA_SUCCESS)
    return make_error(error_code::driver_call_failed,
                      fmt::format("cuCtxSetCurrent on GPU {} failed: {}",
                                  ordinal_, api_.describe(rc)));
  // 0: a caller that states no version (the executor's own tests).
  if (request.protocol_version() != 0)
    if (auto why = wire::protocol_mismatch(request.protocol_version(), wire::protocol_version);
        !why.empty())
      return make_error(error_code::protocol_mismatch, why);
  uint64_t id = request.resume_session();
  const session* opened = nullptr;
  if (id != 0) {
    // The same answer whether the id is unknown, of another tenant or
    // presented with another secret: a resume says nothing about sessions
    // it cannot prove its own.
    auto i = sessions_.find(id);
    auto* s = i == sessions_.end() ? nullptr : &i->second;
    if (!proves(s, request.resume_secret()) || s->tenant != tenant)
      return make_error(error_code::unknown_session, refusal_text(id)
                                                       + " with resume_session = 0");
    ++s->resumes;
    opened = s;
  } else {
    auto secret = make_session_secret();
    if (!secret)
      return std::move(secret.error());
    id = next_session_++;
    auto& s = sessions_[id];
    s.id = id;
    s.secret = std::move(*secret);
    s.client_id = request.client_id();
    s.task_signature = request.task_signature();
    s.gpu_uuid = uuid_string(device_info_.uuid());
    s.tenant = tenant;
    s.memory_quota = session_memory_quota_;
    if (ledger_) {
      s.ledger = ledger_.get();
      s.ledger_slot = ledger_->join(id, tenant);
    }
    s.no_cache_reason = no_cache_reason_;
    s.opened_time_ns = now_ns();
    s.back_channel = host_calls_.get();
    s.graves = &graves_;
    s.library_overrides = &library_overrides_;
    opened = &s;
  }
  proto::SessionOpened out;
  out.set_session(id);
  out.set_secret(opened->secret);
  out.set_driver_version(driver_version_);
  out.set_protocol_version(wire::protocol_version);
  *out.add_devices() = device_info_;
  return out;
}

proto::BatchReply executor::execute(const proto::OpBatch& batch) {
  proto::BatchReply reply;
  reply.set_session(batch.session());
  auto first_seq = batch.ops_size() > 0 ? batch.ops(0).seq() : uint64_t{0};
  auto i = sessions_.find(batch.session());
  if (!proves(i == sessions_.end() ? nullptr : &i->second, batch.session_secret())) {
    auto* r = reply.add_results();
    r->set_seq(first_seq);
    r->set_status(CUDA_ERROR_INVALID_CONTEXT);
    r->set_error(refusal_text(batch.session()));
    return reply;
  }
  auto& s = i->second;
  s.replies.confirmed_through(batch.replied_through());
  auto last_seq = batch.ops_size() > 0 ? batch.ops(batch.ops_size() - 1).seq() : uint64_t{0};
  // A batch re-sent after a reconnect whose reply was lost: answered again,
  // with the results it had (also one a sticky error cut short); nothing
  // runs twice.
  if (last_seq != 0)
    if (const auto* earlier = s.replies.find(last_seq))
      return *earlier;
  reply.set_executed_through(s.executed_through);
  if (auto rc = make_current(); rc != CUDA_SUCCESS) {
    auto* r = reply.add_results();
    r->set_seq(first_seq);
    r->set_status(static_cast<int32_t>(rc));
    r->set_error(fmt::format("cuCtxSetCurrent on GPU {} failed: {}", ordinal_,
                             api_.describe(rc)));
    return reply;
  }
  for (const auto& op : batch.ops()) {
    if (op.seq() <= s.executed_through)
      continue;
    auto* r = reply.add_results();
    r->set_seq(op.seq());
    op_context cx{api_, blas_, s, *r, cache_.get(), device_, &judge_};
    run_op(cx, op);
    if (s.ledger != nullptr && (s.ledger_reserved || s.ledger_held != s.device_bytes())) {
      s.ledger_reserved = false;
      s.ledger_held = s.device_bytes();
      s.ledger->settle(s.ledger_slot, s.ledger_held);
    }
    s.executed_through = op.seq();
    ++s.ops_executed;
    if (is_sticky(static_cast<CUresult>(r->status())))
      break;
  }
  reply.set_executed_through(s.executed_through);
  graves_.bury();
  if (last_seq != 0)
    s.replies.record(last_seq, reply);
  return reply;
}

void executor::close_session(uint64_t id) {
  auto i = sessions_.find(id);
  if (i == sessions_.end())
    return;
  if (make_current() == CUDA_SUCCESS)
    static_cast<void>(release_session_resources(api_, i->second, cache_.get(), device_));
  if (i->second.ledger != nullptr)
    i->second.ledger->leave(i->second.ledger_slot);
  sessions_.erase(i);
  graves_.bury();
}

std::vector<proto::SessionSummary> executor::sessions() const {
  std::vector<proto::SessionSummary> out;
  out.reserve(sessions_.size());
  for (const auto& kv : sessions_) {
    const auto& s = kv.second;
    proto::SessionSummary x;
    x.set_session(s.id);
    x.set_client_id(s.client_id);
    x.set_gpu_index(static_cast<uint32_t>(ordinal_));
    x.set_ops_executed(s.ops_executed);
    x.set_allocated_bytes(s.device_bytes());
    x.set_opened_time_ns(s.opened_time_ns);
    x.set_resumes(s.resumes);
    x.set_tenant(s.tenant);
    x.set_memory_quota(s.memory_quota);
    if (s.ledger != nullptr) {
      auto use = s.ledger->of(s.tenant);
      x.set_tenant_memory_limit(use.limit);
      x.set_tenant_memory_guaranteed(use.guaranteed);
      x.set_tenant_memory_held(use.held);
    }
    out.push_back(std::move(x));
  }
  return out;
}

proto::GpuInfo executor::gpu_info() const {
  proto::GpuInfo out;
  out.set_index(static_cast<uint32_t>(ordinal_));
  out.set_name(device_info_.name());
  out.set_uuid(uuid_string(device_info_.uuid()));
  out.set_total_memory(device_info_.total_memory());
  size_t free = 0;
  size_t total = 0;
  if (make_current() == CUDA_SUCCESS
      && api_.cuMemGetInfo(&free, &total) == CUDA_SUCCESS)
    out.set_free_memory(free);
  auto attr = [this](CUdevice_attribute a) -> uint32_t {
    auto i = device_info_.attributes().find(static_cast<int32_t>(a));
    return i == device_info_.attributes().end() ? 0u
                                                : static_cast<uint32_t>(i->second);
  };
  out.set_sm_count(attr(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT));
  out.set_cc_major(attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR));
  out.set_cc_minor(attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR));
  return out;
}

std::unique_ptr<cache_store::tier> executor::make_device_tier(uint64_t capacity) {
  return std::make_unique<device_memory_tier>(api_, context_, capacity,
                                              fmt::format("gpu {} memory", ordinal_));
}

bool executor::proves(const session* s, std::string_view secret) const {
  // An unknown id is compared too, against a secret no session has, so
  // that the time taken does not say whether the id exists.
  static const std::string none(session_secret_bytes, '\0');
  bool match = session_secret_matches(s != nullptr ? s->secret : none, secret);
  return s != nullptr && match;
}

bool executor::authenticate(uint64_t id, std::string_view secret) const {
  auto i = sessions_.find(id);
  return proves(i == sessions_.end() ? nullptr : &i->second, secret);
}

std::string executor::refusal_text(uint64_t id) const {
  return fmt::format("no session {} with the secret presented is open on GPU {}: it was "
                     "closed, its grace period expired, or the session's secret does not "
                     "match (each batch, resume and close carries the secret its "
                     "SessionOpened gave); open a new session",
                     id, ordinal_);
}

const session* executor::find_session(uint64_t id) const {
  auto i = sessions_.find(id);
  return i == sessions_.end() ? nullptr : &i->second;
}

} // namespace gleam::executor
