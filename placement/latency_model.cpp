#include "placement/latency_model.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "placement/error.hpp"

namespace gleam::placement {

namespace {

constexpr double infinity = std::numeric_limits<double>::infinity();

std::size_t index_of(resource r) {
  return static_cast<std::size_t>(r);
}

} // namespace

// -- occupancy_timeline -------------------------------------------------------

void occupancy_timeline::add(double begin_s, double end_s, double u) {
  if (!(end_s > begin_s) || !(u >= 0))
    return;
  intervals_.push_back({begin_s, end_s, u});
  rebuild();
}

void occupancy_timeline::assign(std::vector<interval> intervals) {
  intervals_.clear();
  for (const auto& x : intervals)
    if (x.end_s > x.begin_s && x.u >= 0)
      intervals_.push_back(x);
  rebuild();
}

void occupancy_timeline::rebuild() {
  steps_.clear();
  if (intervals_.empty())
    return;
  std::vector<double> points;
  points.reserve(2 * intervals_.size() + 1);
  points.push_back(0);
  for (const auto& x : intervals_) {
    points.push_back(x.begin_s);
    points.push_back(x.end_s);
  }
  std::sort(points.begin(), points.end());
  points.erase(std::unique(points.begin(), points.end()), points.end());
  for (std::size_t i = 0; i + 1 < points.size(); ++i) {
    auto mid = 0.5 * (points[i] + points[i + 1]);
    double sum = 0;
    uint32_t count = 0;
    for (const auto& x : intervals_) {
      if (x.begin_s <= mid && mid < x.end_s) {
        sum += x.u;
        ++count;
      }
    }
    if (!steps_.empty() && steps_.back().sum_u == sum && steps_.back().count == count)
      steps_.back().end_s = points[i + 1];
    else
      steps_.push_back({points[i + 1], sum, count});
  }
}

double occupancy_timeline::stretch(double start_s, double work_s, double u,
                                   double gamma) const {
  if (work_s <= 0)
    return 0;
  auto t = start_s;
  for (const auto& st : steps_) {
    if (st.end_s <= t)
      continue;
    auto alpha = contention(gamma, st.sum_u + u);
    auto capacity = (st.end_s - t) / alpha;
    if (capacity >= work_s)
      return t + work_s * alpha - start_s;
    work_s -= capacity;
    t = st.end_s;
  }
  return t + work_s * contention(gamma, u) - start_s;
}

double occupancy_timeline::inflicted(double begin_s, double end_s, double u,
                                     double gamma) const {
  // Within a step every co-runner runs at contention(γ, Σu) without the
  // task and at contention(γ, Σu + u) with it.
  double cost = 0;
  auto t = 0.0;
  for (const auto& st : steps_) {
    auto a = std::max(begin_s, t);
    auto b = std::min(end_s, st.end_s);
    t = st.end_s;
    if (a < b && st.count > 0)
      cost += (b - a) * st.count
              * (contention(gamma, st.sum_u + u) / contention(gamma, st.sum_u) - 1.0);
    if (t >= end_s)
      break;
  }
  return cost;
}

double occupancy_timeline::sum_now() const {
  return steps_.empty() ? 0.0 : steps_.front().sum_u;
}

// -- server_timeline ----------------------------------------------------------

server_timeline::server_timeline(const server& s)
  : free_now_(s.free_memory_bytes), total_(s.total_memory_bytes) {
  std::array<std::vector<occupancy_timeline::interval>, resource_count> xs;
  for (const auto& r : s.running) {
    ++count_;
    auto load_end = std::clamp(r.load_remaining_s, 0.0, std::max(0.0, r.remaining_s));
    // A load from the server's own cache (occupancy 0) is not on the ingress.
    if (load_end > 0 && r.occ.network > 0)
      xs[index_of(resource::network)].push_back({0, load_end, r.occ.network});
    if (r.remaining_s > load_end)
      xs[index_of(resource::gpu)].push_back({load_end, r.remaining_s, r.occ.gpu});
    memory_.emplace_back(std::max(0.0, r.remaining_s), static_cast<int64_t>(r.memory_bytes));
  }
  std::sort(memory_.begin(), memory_.end());
  for (std::size_t r = 0; r < resource_count; ++r)
    resources_[r].assign(std::move(xs[r]));
}

void server_timeline::add(double start_s, double load_s, double total_s, occupancy occ,
                          uint64_t memory_bytes) {
  ++count_;
  auto load_end = start_s + std::max(0.0, load_s);
  auto end = std::max(load_end, start_s + total_s);
  // A load from the server's own cache (occupancy 0) is not on the ingress.
  if (occ.network > 0)
    resources_[index_of(resource::network)].add(start_s, load_end, occ.network);
  resources_[index_of(resource::gpu)].add(load_end, end, occ.gpu);
  auto held = static_cast<int64_t>(memory_bytes);
  if (start_s > 0) {
    // A reservation: it takes its memory when it starts.
    auto take = std::make_pair(start_s, -held);
    memory_.insert(std::upper_bound(memory_.begin(), memory_.end(), take), take);
  } else {
    free_now_ = free_now_ > memory_bytes ? free_now_ - memory_bytes : 0;
  }
  auto rel = std::make_pair(end, held);
  memory_.insert(std::upper_bound(memory_.begin(), memory_.end(), rel), rel);
}

double server_timeline::stretch(resource r, double start_s, double work_s, double u,
                                double gamma) const {
  return of(r).stretch(start_s, work_s, u, gamma);
}

double server_timeline::marginal_progress(double begin_s, double end_s, double u,
                                          double gamma) const {
  auto worst = marginal_progress_at(begin_s, u, gamma);
  for (const auto& x : of(resource::gpu).intervals())
    if (begin_s < x.begin_s && x.begin_s < end_s)
      worst = std::min(worst, marginal_progress_at(x.begin_s, u, gamma));
  return worst;
}

double server_timeline::marginal_progress_at(double at_s, double u, double gamma) const {
  // Every task computing at `at_s` runs at the same α, so the progress rate
  // of n tasks of summed occupancy Σu is n / contention(γ, Σu).
  double sum = 0;
  double n = 0;
  for (const auto& x : of(resource::gpu).intervals()) {
    if (x.begin_s <= at_s && at_s < x.end_s) {
      sum += x.u;
      n += 1;
    }
  }
  return (n + 1) / contention(gamma, sum + u) - n / contention(gamma, sum);
}

double server_timeline::inflicted(resource r, double begin_s, double end_s, double u,
                                  double gamma) const {
  return of(r).inflicted(begin_s, end_s, u, gamma);
}

double server_timeline::next_release_after(double t_s) const {
  auto i = std::upper_bound(memory_.begin(), memory_.end(), t_s,
                            [](double t, const auto& e) { return t < e.first; });
  for (; i != memory_.end(); ++i)
    if (i->second > 0)
      return i->first;
  return infinity;
}

double server_timeline::earliest_fit(uint64_t bytes) const {
  if (bytes > total_)
    return infinity;
  // The start of the last stretch, running to the end, during which at
  // least `bytes` are free (reservations take memory back).
  auto need = static_cast<int64_t>(bytes);
  auto free = static_cast<int64_t>(free_now_);
  auto fit = free >= need ? 0.0 : infinity;
  for (std::size_t k = 0; k < memory_.size();) {
    auto at = memory_[k].first;
    for (; k < memory_.size() && memory_[k].first == at; ++k)
      free += memory_[k].second;
    if (free < need)
      fit = infinity;
    else if (!(fit < infinity))
      fit = at;
  }
  return fit;
}

double server_timeline::occupancy_now(resource r) const {
  return of(r).sum_now();
}

// -- predict ------------------------------------------------------------------

double uncached_rate(double peer_rate_bytes_per_s, const link& l, uint64_t weight_bytes,
                     uint64_t peer_bytes) noexcept {
  if (peer_rate_bytes_per_s > l.rate_bytes_per_s && weight_bytes > 0
      && peer_bytes >= weight_bytes)
    return peer_rate_bytes_per_s;
  return l.rate_bytes_per_s;
}

uint64_t peer_cached_bytes(const snapshot& snap, weight_set_id w) noexcept {
  uint64_t most = 0;
  for (const auto& s : snap.servers)
    most = std::max(most, s.cached_bytes(w));
  return most;
}

bool uplink_load(const server& s, const running_task& r, occupancy_timeline::interval& out) {
  if (r.uplink_client == no_client || r.uplink_client >= s.links.size()
      || !(r.load_remaining_s > 0) || !(r.uplink_occupancy > 0))
    return false;
  out = {0, r.load_remaining_s, r.uplink_occupancy};
  return true;
}

std::vector<occupancy_timeline> client_uplinks(const snapshot& snap) {
  std::vector<std::vector<occupancy_timeline::interval>> xs;
  occupancy_timeline::interval x{};
  for (const auto& s : snap.servers)
    for (const auto& r : s.running) {
      if (!uplink_load(s, r, x))
        continue;
      if (xs.size() <= r.uplink_client)
        xs.resize(r.uplink_client + 1);
      xs[r.uplink_client].push_back(x);
    }
  std::vector<occupancy_timeline> out(xs.size());
  for (std::size_t c = 0; c < xs.size(); ++c)
    out[c].assign(std::move(xs[c]));
  return out;
}

prediction predict(const task& t, const server& s, const server_timeline& tl,
                   double start_s, double gamma_gpu, double gamma_net, uint64_t peer_bytes,
                   const occupancy_timeline* uplink) {
  prediction p;
  p.start_s = start_s;
  auto bytes = t.weight_bytes != 0 ? t.weight_bytes : t.profile.weight_bytes;
  p.cached_bytes = std::min(s.cached_bytes(t.weights), bytes);
  auto uncached = bytes - p.cached_bytes;
  link l;
  if (t.client < s.links.size())
    l = s.links[t.client];
  auto rate = uncached_rate(s.peer_rate_bytes_per_s, l, bytes, peer_bytes);
  p.from_peer = uncached > 0 && rate != l.rate_bytes_per_s;
  p.solo_load_s = l.rtt_s + static_cast<double>(uncached) / rate
                  + static_cast<double>(p.cached_bytes) / s.cache_fill_rate_bytes_per_s;
  p.solo_compute_s = s.gpu_type < t.profile.compute_s.size()
                       ? t.profile.compute_s[s.gpu_type]
                       : default_compute_s;
  p.net_occupancy = load_net_occupancy(t.profile.occ.network, bytes, p.cached_bytes);
  // A load from the server's own cache does not use its ingress.
  p.load_s = uncached == 0 ? p.solo_load_s
                           : tl.stretch(resource::network, start_s, p.solo_load_s,
                                        p.net_occupancy, gamma_net);
  // Bytes from the client share its uplink with its loads to other servers.
  if (uncached > 0 && !p.from_peer) {
    p.uplink_occupancy = static_cast<double>(uncached) / static_cast<double>(bytes);
    if (uplink)
      p.load_s = std::max(p.load_s, uplink->stretch(start_s, p.solo_load_s, p.uplink_occupancy,
                                                    uplink_gamma));
  }
  p.compute_s = tl.stretch(resource::gpu, start_s + p.load_s, p.solo_compute_s,
                           t.profile.occ.gpu, gamma_gpu);
  p.total_s = p.load_s + p.compute_s;
  p.alpha_net = p.solo_load_s > 0 ? p.load_s / p.solo_load_s : 1.0;
  p.alpha_gpu = p.solo_compute_s > 0 ? p.compute_s / p.solo_compute_s : 1.0;
  return p;
}

prediction predict(const task& t, server_index s, const snapshot& snap) {
  const auto& srv = snap.servers[s];
  server_timeline tl{srv};
  auto start = tl.earliest_fit(t.profile.memory_bytes);
  auto uplinks = client_uplinks(snap);
  return predict(t, srv, tl, start, snap.gamma_of(srv.gpu_type, resource::gpu),
                 snap.gamma_of(srv.gpu_type, resource::network),
                 peer_cached_bytes(snap, t.weights),
                 snap.shared_uplinks && t.client < uplinks.size() ? &uplinks[t.client]
                                                                  : nullptr);
}

// -- gamma_fit ----------------------------------------------------------------

gamma_fit::gamma_fit(double max_sum_u, std::size_t bins)
  : max_sum_u_(max_sum_u > 0 ? max_sum_u : 8.0), bins_(std::max<std::size_t>(bins, 2)) {
}

void gamma_fit::add(double sum_u, double slowdown) {
  if (!std::isfinite(sum_u) || !std::isfinite(slowdown))
    return;
  sum_u = std::max(0.0, sum_u);
  auto width = max_sum_u_ / static_cast<double>(bins_.size());
  auto i = std::min(bins_.size() - 1, static_cast<std::size_t>(sum_u / width));
  auto& b = bins_[i];
  b.n += 1;
  b.sx += sum_u;
  b.sxx += sum_u * sum_u;
  b.sy += slowdown;
  b.syy += slowdown * slowdown;
  b.sxy += sum_u * slowdown;
  ++n_;
}

caf::expected<gamma_estimate> gamma_fit::estimate() const {
  auto nb = bins_.size();
  // suffix[k] = statistics of bins k..nb-1.
  std::vector<bin> suffix(nb + 1);
  for (std::size_t k = nb; k-- > 0;) {
    const auto& b = bins_[k];
    auto& s = suffix[k];
    s = suffix[k + 1];
    s.n += b.n;
    s.sx += b.sx;
    s.sxx += b.sxx;
    s.sy += b.sy;
    s.syy += b.syy;
    s.sxy += b.sxy;
  }
  const auto& all = suffix[0];
  // Bins are ordered by Σu, so for a given γ the contended bins (mean Σu
  // above 1/γ) form a suffix; the first contended bin is found by scan.
  auto first_active = [&](double gamma) {
    std::size_t k = 0;
    while (k < nb && (bins_[k].n == 0 || gamma * bins_[k].sx / bins_[k].n <= 1.0))
      ++k;
    return k;
  };
  auto sse = [&](double gamma, std::size_t k) {
    const auto& act = suffix[k];
    auto in_n = all.n - act.n;
    auto in_sy = all.sy - act.sy;
    auto in_syy = all.syy - act.syy;
    auto inactive = in_syy - 2 * in_sy + in_n;
    auto active = act.syy - 2 * gamma * act.sxy + gamma * gamma * act.sxx;
    return std::max(0.0, inactive + active);
  };
  gamma_estimate best;
  double best_sse = std::numeric_limits<double>::infinity();
  bool found = false;
  for (std::size_t k = 0; k < nb; ++k) {
    if (bins_[k].n == 0)
      continue;
    const auto& act = suffix[k];
    if (act.sxx <= 0)
      continue;
    auto gamma = std::max(0.0, act.sxy / act.sxx);
    auto j = first_active(gamma);
    auto err = sse(gamma, j);
    if (err < best_sse) {
      best_sse = err;
      best.gamma = gamma;
      best.active_samples = static_cast<uint64_t>(suffix[j].n);
      found = true;
    }
  }
  // Samples that identify γ: fitted α at least min_identifying_alpha. A
  // knee put just below a cluster of uncontended samples (slowdown 1 ± noise)
  // would count that cluster as contended while the data only bound γ from
  // above.
  uint64_t identifying = 0;
  if (found) {
    std::size_t k = 0;
    while (k < nb && (bins_[k].n == 0 || best.gamma * bins_[k].sx / bins_[k].n < min_identifying_alpha))
      ++k;
    identifying = static_cast<uint64_t>(suffix[k].n);
  }
  if (!found || identifying < min_active_samples)
    return make_error(error_code::not_enough_samples,
                      "gamma fit has " + std::to_string(identifying) + " of "
                        + std::to_string(n_) + " samples contended (fitted slowdown >= "
                        + std::to_string(min_identifying_alpha).substr(0, 4) + "), needs "
                        + std::to_string(min_active_samples)
                        + ": run more co-located tasks or keep the default gamma");
  best.samples = n_;
  best.rms_residual = std::sqrt(best_sse / all.n);
  return best;
}

// -- contention_calibration ---------------------------------------------------

void contention_calibration::observe(const std::string& gpu_type, resource r, double sum_u,
                                     double slowdown) {
  fits_[gpu_type][index_of(r)].add(sum_u, slowdown);
}

caf::expected<gamma_estimate> contention_calibration::estimate(const std::string& gpu_type,
                                                               resource r) const {
  auto i = fits_.find(gpu_type);
  if (i == fits_.end())
    return make_error(error_code::not_enough_samples,
                      "no finished run on GPU type " + gpu_type + " yet");
  return i->second[index_of(r)].estimate();
}

double contention_calibration::gamma(const std::string& gpu_type, resource r) const {
  auto est = estimate(gpu_type, r);
  return est ? est->gamma : default_gamma;
}

std::vector<gamma_row> contention_calibration::table(
  const std::vector<std::string>& gpu_types) const {
  std::vector<gamma_row> rows;
  rows.reserve(gpu_types.size());
  for (const auto& type : gpu_types) {
    gamma_row row{default_gamma, default_gamma};
    for (std::size_t r = 0; r < resource_count; ++r)
      row[r] = gamma(type, static_cast<resource>(r));
    rows.push_back(row);
  }
  return rows;
}

} // namespace gleam::placement
