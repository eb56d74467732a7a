// The context family: what acts on the session's share of the context:
// its device-wide sync, device reset (the session's resources released)
// and the context's limits.

#include "executor/op_table.hpp"
#include "executor/session_release.hpp"
#include "executor/session_streams.hpp"

namespace gleam::executor {

namespace {

void ctx_synchronize(op_context& cx, const proto::CtxSynchronize&) {
  // The session's streams: other sessions' work is not the app's.
  cx.check(sync_session(cx.api, cx.s), "cuCtxSynchronize");
}

void device_reset(op_context& cx, const proto::DeviceReset&) {
  cx.check(release_session_resources(cx.api, cx.s, cx.cache, cx.device), "DeviceReset");
}

void ctx_set_limit(op_context& cx, const proto::CtxSetLimit& op) {
  cx.check(cx.api.cuCtxSetLimit(static_cast<CUlimit>(op.limit()), op.value()),
           "cuCtxSetLimit");
}

void ctx_get_limit(op_context& cx, const proto::CtxGetLimit& op) {
  size_t value = 0;
  if (cx.check(cx.api.cuCtxGetLimit(&value, static_cast<CUlimit>(op.limit())),
               "cuCtxGetLimit"))
    cx.r.set_value(static_cast<int64_t>(value));
}

using k = proto::Op::KindCase;

constexpr op_route routes[] = {
  {k::kCtxSynchronize, with_message<&proto::Op::ctx_synchronize, ctx_synchronize>},
  {k::kDeviceReset, with_message<&proto::Op::device_reset, device_reset>},
  {k::kCtxSetLimit, with_message<&proto::Op::ctx_set_limit, ctx_set_limit>},
  {k::kCtxGetLimit, with_message<&proto::Op::ctx_get_limit, ctx_get_limit>},
};

} // namespace

const op_family context_family = make_family(routes);

} // namespace gleam::executor
