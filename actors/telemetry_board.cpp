#include "actors/telemetry_board.hpp"

namespace gleam::actors {

telemetry_board::telemetry_board(size_t gpus) : gpus_(gpus), sessions_(gpus) {
  for (size_t i = 0; i < gpus; ++i)
    gpus_[i].set_index(static_cast<uint32_t>(i));
}

void telemetry_board::post(size_t slot, proto::GpuTelemetry gpu,
                           std::vector<proto::SessionSummary> sessions) {
  std::lock_guard<std::mutex> guard{mtx_};
  if (slot >= gpus_.size())
    return;
  gpus_[slot] = std::move(gpu);
  sessions_[slot] = std::move(sessions);
}

void telemetry_board::set_cache_summary(std::function<proto::CacheSummary()> f) {
  std::lock_guard<std::mutex> guard{mtx_};
  cache_summary_ = std::move(f);
}

void telemetry_board::set_peer_fetch_rate(std::function<double()> f) {
  std::lock_guard<std::mutex> guard{mtx_};
  peer_fetch_rate_ = std::move(f);
}

proto::Telemetry telemetry_board::telemetry() const {
  proto::Telemetry result;
  std::function<proto::CacheSummary()> cache;
  std::function<double()> peer_rate;
  {
    std::lock_guard<std::mutex> guard{mtx_};
    for (const auto& g : gpus_)
      *result.add_gpus() = g;
    cache = cache_summary_;
    peer_rate = peer_fetch_rate_;
  }
  if (peer_rate)
    result.set_peer_fetch_rate(peer_rate());
  if (cache) {
    auto summary = cache();
    result.set_cached_chunks(summary.chunks());
    result.set_cached_bytes(summary.bytes());
    *result.mutable_cache() = std::move(summary);
  }
  return result;
}

std::vector<proto::SessionSummary> telemetry_board::sessions() const {
  std::lock_guard<std::mutex> guard{mtx_};
  std::vector<proto::SessionSummary> result;
  for (const auto& per_gpu : sessions_)
    result.insert(result.end(), per_gpu.begin(), per_gpu.end());
  return result;
}

void telemetry_board::post_ended(proto::SessionEnded ended) {
  std::lock_guard<std::mutex> guard{mtx_};
  if (ended_.size() >= max_ended)
    ended_.erase(ended_.begin());
  ended_.push_back(std::move(ended));
}

std::vector<proto::SessionEnded> telemetry_board::take_ended() {
  std::lock_guard<std::mutex> guard{mtx_};
  std::vector<proto::SessionEnded> out;
  out.swap(ended_);
  return out;
}

} // namespace gleam::actors
