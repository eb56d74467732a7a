#include "placement/prepared_snapshot.hpp"

#include <algorithm>
#include <utility>

namespace gleam::placement {

prepared_snapshot::prepared_snapshot(snapshot snap) : snap_(std::move(snap)) {
  aggregates_.reserve(snap_.servers.size());
  for (const auto& s : snap_.servers) {
    aggregates_.push_back(make_aggregate(s));
    hold(s);
  }
  rebuild_uplinks();
}

void prepared_snapshot::hold(const server& s) {
  for (const auto& c : s.cached)
    if (c.bytes > 0)
      held_[c.weights].insert(c.bytes);
  occupancy_timeline::interval x{};
  for (const auto& r : s.running) {
    if (!uplink_load(s, r, x))
      continue;
    if (uplink_loads_.size() <= r.uplink_client) {
      uplink_loads_.resize(r.uplink_client + 1);
      uplinks_.resize(r.uplink_client + 1);
    }
    uplink_loads_[r.uplink_client].push_back(x);
    uplinks_changed_.insert(r.uplink_client);
  }
}

void prepared_snapshot::rebuild_uplinks() {
  for (auto c : uplinks_changed_)
    uplinks_[c].assign(uplink_loads_[c]);
  uplinks_changed_.clear();
}

void prepared_snapshot::release(const server& s) {
  occupancy_timeline::interval x{};
  for (const auto& r : s.running) {
    if (!uplink_load(s, r, x) || r.uplink_client >= uplink_loads_.size())
      continue;
    auto& xs = uplink_loads_[r.uplink_client];
    auto i = std::find_if(xs.begin(), xs.end(), [&](const occupancy_timeline::interval& y) {
      return y.end_s == x.end_s && y.u == x.u;
    });
    if (i != xs.end())
      xs.erase(i);
    uplinks_changed_.insert(r.uplink_client);
  }
  for (const auto& c : s.cached) {
    auto i = held_.find(c.weights);
    if (i == held_.end())
      continue;
    if (auto j = i->second.find(c.bytes); j != i->second.end())
      i->second.erase(j);
    if (i->second.empty())
      held_.erase(i);
  }
}

uint64_t prepared_snapshot::peer_cached_bytes(weight_set_id w) const noexcept {
  auto i = held_.find(w);
  return i == held_.end() || i->second.empty() ? 0 : *i->second.rbegin();
}

prepared_snapshot::aggregate prepared_snapshot::make_aggregate(const server& s) const {
  double load = 0;
  for (const auto& r : s.running)
    load += r.occ.gpu;
  return aggregate{server_timeline{s}, snap_.gamma_of(s.gpu_type, resource::gpu),
                   snap_.gamma_of(s.gpu_type, resource::network), load};
}

void prepared_snapshot::update_server(server_index s, server srv) {
  if (s >= snap_.servers.size()) {
    snap_.servers.push_back(std::move(srv));
    aggregates_.push_back(make_aggregate(snap_.servers.back()));
    hold(snap_.servers.back());
    rebuild_uplinks();
    return;
  }
  release(snap_.servers[s]);
  snap_.servers[s] = std::move(srv);
  aggregates_[s] = make_aggregate(snap_.servers[s]);
  hold(snap_.servers[s]);
  rebuild_uplinks();
}

prediction prepared_snapshot::predict(const task& t, server_index s, double start_s) const {
  const auto& a = aggregates_[s];
  return placement::predict(t, snap_.servers[s], a.timeline, start_s, a.gamma_gpu, a.gamma_net,
                            peer_cached_bytes(t.weights),
                            snap_.shared_uplinks ? uplink(t.client) : nullptr);
}

void prepared_snapshot::pop_server() {
  if (snap_.servers.empty())
    return;
  release(snap_.servers.back());
  rebuild_uplinks();
  snap_.servers.pop_back();
  aggregates_.pop_back();
}

void prepared_snapshot::set_gamma(std::vector<gamma_row> gamma) {
  snap_.gamma = std::move(gamma);
  for (std::size_t i = 0; i < snap_.servers.size(); ++i) {
    auto type = snap_.servers[i].gpu_type;
    aggregates_[i].gamma_gpu = snap_.gamma_of(type, resource::gpu);
    aggregates_[i].gamma_net = snap_.gamma_of(type, resource::network);
  }
}

} // namespace gleam::placement
