#include "placement/prepared_snapshot.hpp"

#include <utility>

namespace gleam::placement {

prepared_snapshot::prepared_snapshot(snapshot snap) : snap_(std::move(snap)) {
  aggregates_.reserve(snap_.servers.size());
  for (const auto& s : snap_.servers) {
    aggregates_.push_back(make_aggregate(s));
    hold(s);
  }
}

void prepared_snapshot::hold(const server& s) {
  for (const auto& c : s.cached)
    if (c.bytes > 0)
      held_[c.weights].insert(c.bytes);
}

void prepared_snapshot::release(const server& s) {
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
    return;
  }
  release(snap_.servers[s]);
  snap_.servers[s] = std::move(srv);
  aggregates_[s] = make_aggregate(snap_.servers[s]);
  hold(snap_.servers[s]);
}

void prepared_snapshot::pop_server() {
  if (snap_.servers.empty())
    return;
  release(snap_.servers.back());
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
