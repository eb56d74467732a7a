#include "placement/snapshot.hpp"

#include <algorithm>

#include "placement/error.hpp"

namespace gleam::placement {

uint64_t server::cached_bytes(weight_set_id w) const noexcept {
  auto i = std::lower_bound(cached.begin(), cached.end(), w,
                            [](const cached_weights& c, weight_set_id x) {
                              return c.weights < x;
                            });
  return i != cached.end() && i->weights == w ? i->bytes : 0;
}

caf::error validate(const snapshot& snap) {
  if (!snap.gamma.empty() && snap.gamma.size() != snap.gpu_types.size())
    return make_error(error_code::invalid_snapshot,
                      "gamma table has " + std::to_string(snap.gamma.size())
                        + " rows for " + std::to_string(snap.gpu_types.size())
                        + " GPU types: give one row per GPU type or none");
  for (const auto& s : snap.servers) {
    if (s.gpu_type >= snap.gpu_types.size())
      return make_error(error_code::invalid_snapshot,
                        "server " + s.id + " has GPU type index "
                          + std::to_string(s.gpu_type) + " but only "
                          + std::to_string(snap.gpu_types.size())
                          + " types are known: add its type to gpu_types");
    if (s.free_memory_bytes > s.total_memory_bytes)
      return make_error(error_code::invalid_snapshot,
                        "server " + s.id + " reports more free memory ("
                          + std::to_string(s.free_memory_bytes) + " B) than total ("
                          + std::to_string(s.total_memory_bytes) + " B)");
    for (std::size_t i = 1; i < s.cached.size(); ++i)
      if (s.cached[i - 1].weights >= s.cached[i].weights)
        return make_error(error_code::invalid_snapshot,
                          "server " + s.id
                            + " cache list is not sorted by weight set id: sort it");
    for (const auto& l : s.links)
      if (!(l.rate_bytes_per_s > 0) || l.rtt_s < 0)
        return make_error(error_code::invalid_snapshot,
                          "server " + s.id + " has a link of rate "
                            + std::to_string(l.rate_bytes_per_s)
                            + " B/s: rates must be positive, measure the link first");
    if (!(s.cache_fill_rate_bytes_per_s > 0))
      return make_error(error_code::invalid_snapshot,
                        "server " + s.id + " has a non-positive cache fill rate");
  }
  return caf::none;
}

caf::error validate(const snapshot& snap, const task& t) {
  if (t.profile.compute_s.size() != snap.gpu_types.size())
    return make_error(error_code::invalid_task,
                      "task " + std::to_string(t.id) + " profile has "
                        + std::to_string(t.profile.compute_s.size())
                        + " compute times for " + std::to_string(snap.gpu_types.size())
                        + " GPU types: resolve it against this snapshot's gpu_types");
  for (const auto& s : snap.servers)
    if (t.client >= s.links.size())
      return make_error(error_code::invalid_task,
                        "task " + std::to_string(t.id) + " comes from client "
                          + std::to_string(t.client) + " but server " + s.id
                          + " has no link measurement for it");
  return caf::none;
}

} // namespace gleam::placement
