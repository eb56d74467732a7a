// The streams and events family: the session's streams (non-blocking on the
// driver, executor/session_streams.hpp) and events, their syncs, queries
// and waits.

#include <fmt/format.h>

#include "executor/op_table.hpp"

namespace gleam::executor {

namespace {

void stream_create(op_context& cx, const proto::StreamCreate& op) {
  if (op.stream() <= stream_handle::per_thread
      || cx.s.streams.count(op.stream()) != 0) {
    cx.fail(CUDA_ERROR_INVALID_VALUE,
            fmt::format("stream handle {} is reserved or already in use in "
                        "this session; handles 0, 1 and 2 are the default "
                        "streams",
                        op.stream()));
    return;
  }
  // Non-blocking on the driver: the context's legacy stream is every
  // session's; a blocking stream waits for the session's own legacy
  // stream only (executor/session_streams.hpp).
  CUstream s = nullptr;
  if (!cx.check(cx.api.cuStreamCreateWithPriority(&s, op.flags() | CU_STREAM_NON_BLOCKING,
                                                  op.priority()),
                "cuStreamCreateWithPriority"))
    return;
  cx.s.streams.emplace(op.stream(), s);
  if ((op.flags() & CU_STREAM_NON_BLOCKING) == 0)
    cx.s.blocking[op.stream()];
}

void stream_destroy(op_context& cx, const proto::StreamDestroy& op) {
  auto i = cx.s.streams.find(op.stream());
  if (i == cx.s.streams.end()) {
    cx.fail(CUDA_ERROR_INVALID_HANDLE,
            fmt::format("stream handle {} is not a stream this session "
                        "created",
                        op.stream()));
    return;
  }
  if (!cx.check(cx.api.cuStreamDestroy(i->second), "cuStreamDestroy"))
    return;
  cx.s.streams.erase(i);
  auto b = cx.s.blocking.find(op.stream());
  if (b != cx.s.blocking.end()) {
    if (b->second.done != nullptr)
      static_cast<void>(cx.api.cuEventDestroy(b->second.done));
    cx.s.blocking.erase(b);
  }
}

void stream_synchronize(op_context& cx, const proto::StreamSynchronize& op) {
  CUstream s = nullptr;
  if (cx.lookup_stream(op.stream(), s))
    cx.check(cx.api.cuStreamSynchronize(s), "cuStreamSynchronize");
}

void stream_query(op_context& cx, const proto::StreamQuery& op) {
  CUstream s = nullptr;
  if (cx.lookup_stream(op.stream(), s))
    cx.check_query(cx.api.cuStreamQuery(s), "cuStreamQuery");
}

void stream_wait_event(op_context& cx, const proto::StreamWaitEvent& op) {
  CUstream s = nullptr;
  CUevent e = nullptr;
  if (cx.lookup_stream(op.stream(), s) && cx.lookup_event(op.event(), e))
    cx.check(cx.api.cuStreamWaitEvent(s, e, op.flags()), "cuStreamWaitEvent");
}

void event_create(op_context& cx, const proto::EventCreate& op) {
  if (cx.s.events.count(op.event()) != 0) {
    cx.fail(CUDA_ERROR_INVALID_VALUE,
            fmt::format("event handle {} is already in use in this session",
                        op.event()));
    return;
  }
  CUevent e = nullptr;
  if (cx.check(cx.api.cuEventCreate(&e, op.flags()), "cuEventCreate"))
    cx.s.events.emplace(op.event(), e);
}

void event_destroy(op_context& cx, const proto::EventDestroy& op) {
  auto i = cx.s.events.find(op.event());
  if (i == cx.s.events.end()) {
    cx.fail(CUDA_ERROR_INVALID_HANDLE,
            fmt::format("event handle {} is not an event of this session",
                        op.event()));
    return;
  }
  if (cx.check(cx.api.cuEventDestroy(i->second), "cuEventDestroy"))
    cx.s.events.erase(i);
}

void event_record(op_context& cx, const proto::EventRecord& op) {
  CUevent e = nullptr;
  CUstream s = nullptr;
  if (cx.lookup_event(op.event(), e) && cx.lookup_stream(op.stream(), s))
    cx.check(cx.api.cuEventRecordWithFlags(e, s, op.flags()),
             "cuEventRecordWithFlags");
}

void event_synchronize(op_context& cx, const proto::EventSynchronize& op) {
  CUevent e = nullptr;
  if (cx.lookup_event(op.event(), e))
    cx.check(cx.api.cuEventSynchronize(e), "cuEventSynchronize");
}

void event_query(op_context& cx, const proto::EventQuery& op) {
  CUevent e = nullptr;
  if (cx.lookup_event(op.event(), e))
    cx.check_query(cx.api.cuEventQuery(e), "cuEventQuery");
}

void event_elapsed_time(op_context& cx, const proto::EventElapsedTime& op) {
  CUevent start = nullptr;
  CUevent end = nullptr;
  if (!cx.lookup_event(op.start(), start) || !cx.lookup_event(op.end(), end))
    return;
  float ms = 0;
  if (cx.check(cx.api.cuEventElapsedTime(&ms, start, end), "cuEventElapsedTime"))
    cx.r.set_elapsed_ms(ms);
}

using k = proto::Op::KindCase;

constexpr op_route routes[] = {
  {k::kStreamCreate, with_message<&proto::Op::stream_create, stream_create>},
  {k::kStreamDestroy, with_message<&proto::Op::stream_destroy, stream_destroy>},
  {k::kStreamSynchronize, with_message<&proto::Op::stream_synchronize, stream_synchronize>},
  {k::kStreamQuery, with_message<&proto::Op::stream_query, stream_query>},
  {k::kStreamWaitEvent, with_message<&proto::Op::stream_wait_event, stream_wait_event>},
  {k::kEventCreate, with_message<&proto::Op::event_create, event_create>},
  {k::kEventDestroy, with_message<&proto::Op::event_destroy, event_destroy>},
  {k::kEventRecord, with_message<&proto::Op::event_record, event_record>},
  {k::kEventSynchronize, with_message<&proto::Op::event_synchronize, event_synchronize>},
  {k::kEventQuery, with_message<&proto::Op::event_query, event_query>},
  {k::kEventElapsedTime, with_message<&proto::Op::event_elapsed_time, event_elapsed_time>},
};

} // namespace

const op_family stream_family = make_family(routes);

} // namespace gleam::executor
