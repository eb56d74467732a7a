// The client's mirror of its stream captures (see capture_state.hpp). Pure
// logic without the network, so tests use it directly.
#include "interpose/capture_state.hpp"

#include <algorithm>

namespace gleam::interpose {

namespace {

thread_local int internal_depth = 0;

} // namespace

void capture_state::begin(uint64_t stream, uint64_t graph, uint64_t id,
                          cudaStreamCaptureMode mode, std::thread::id owner) {
  auto c = std::make_shared<capture>();
  c->origin = stream;
  c->graph = graph;
  c->id = id;
  c->mode = mode;
  c->owner = owner;
  std::lock_guard<std::mutex> guard{mutex_};
  streams_[stream] = std::move(c);
  suspect_ = false;
}

void capture_state::end(uint64_t origin) {
  std::lock_guard<std::mutex> guard{mutex_};
  auto i = streams_.find(origin);
  if (i == streams_.end())
    return;
  auto c = i->second;
  for (auto j = streams_.begin(); j != streams_.end();)
    j = j->second == c ? streams_.erase(j) : std::next(j);
}

std::shared_ptr<capture_state::capture> capture_state::of_stream(uint64_t stream) const {
  std::lock_guard<std::mutex> guard{mutex_};
  auto i = streams_.find(stream);
  return i == streams_.end() ? nullptr : i->second;
}

cudaStreamCaptureStatus capture_state::status(uint64_t stream) const {
  auto c = of_stream(stream);
  if (c == nullptr)
    return cudaStreamCaptureStatusNone;
  std::lock_guard<std::mutex> guard{mutex_};
  return c->invalidated ? cudaStreamCaptureStatusInvalidated : cudaStreamCaptureStatusActive;
}

void capture_state::invalidate(uint64_t stream) {
  std::lock_guard<std::mutex> guard{mutex_};
  auto i = streams_.find(stream);
  if (i != streams_.end())
    i->second->invalidated = true;
}

void capture_state::invalidate_all() {
  std::lock_guard<std::mutex> guard{mutex_};
  for (auto& kv : streams_)
    kv.second->invalidated = true;
}

void capture_state::record_event(uint64_t event, uint64_t stream) {
  std::lock_guard<std::mutex> guard{mutex_};
  auto i = streams_.find(stream);
  if (i == streams_.end())
    events_.erase(event);
  else
    events_[event] = i->second;
}

void capture_state::wait_event(uint64_t stream, uint64_t event) {
  std::lock_guard<std::mutex> guard{mutex_};
  auto e = events_.find(event);
  if (e == events_.end())
    return;
  auto c = e->second.lock();
  if (c == nullptr) {
    events_.erase(e);
    return;
  }
  // A capture still counts only while one of its streams captures.
  bool live = false;
  for (const auto& kv : streams_)
    live = live || kv.second == c;
  if (live && streams_.count(stream) == 0)
    streams_[stream] = c;
}

void capture_state::forget_event(uint64_t event) {
  std::lock_guard<std::mutex> guard{mutex_};
  events_.erase(event);
}

void capture_state::forget_stream(uint64_t stream) {
  std::lock_guard<std::mutex> guard{mutex_};
  streams_.erase(stream);
}

bool capture_state::any() const {
  std::lock_guard<std::mutex> guard{mutex_};
  return !streams_.empty();
}

std::vector<uint64_t> capture_state::prohibiting(std::thread::id self,
                                                 cudaStreamCaptureMode mode) const {
  // The thread's own capture begun in global or thread-local mode prohibits
  // whatever mode the thread exchanged to since (the driver on the H200
  // agrees: tests/programs/capture_illegal); another thread's global-mode
  // capture prohibits only threads in global mode.
  std::vector<uint64_t> out;
  std::lock_guard<std::mutex> guard{mutex_};
  for (const auto& kv : streams_) {
    const auto& c = *kv.second;
    bool binds = (c.owner == self && c.mode != cudaStreamCaptureModeRelaxed)
                 || (mode == cudaStreamCaptureModeGlobal && c.owner != self
                     && c.mode == cudaStreamCaptureModeGlobal);
    // A capture is listed under each of its streams; name it by its origin.
    if (binds && std::find(out.begin(), out.end(), c.origin) == out.end())
      out.push_back(c.origin);
  }
  return out;
}

capture_state& captures() {
  static auto* c = new capture_state;
  return *c;
}

cudaStreamCaptureMode& thread_capture_mode() noexcept {
  thread_local cudaStreamCaptureMode mode = cudaStreamCaptureModeGlobal;
  return mode;
}

std::vector<uint64_t> thread_prohibited_by() {
  auto& c = captures();
  if (internal_ops::active() || !c.any())
    return {};
  return c.prohibiting(std::this_thread::get_id(), thread_capture_mode());
}

internal_ops::internal_ops() noexcept {
  ++internal_depth;
}

internal_ops::~internal_ops() {
  --internal_depth;
}

bool internal_ops::active() noexcept {
  return internal_depth > 0;
}

} // namespace gleam::interpose
