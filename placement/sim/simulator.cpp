#include "placement/sim/simulator.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <deque>
#include <limits>
#include <map>

namespace gleam::placement::sim {

namespace {

constexpr double infinity = std::numeric_limits<double>::infinity();
constexpr double work_epsilon_s = 1e-9;

/// Largest standard deviation of the co-runners' Σu over a phase for that
/// phase to count as an observation of γ.
constexpr double steady_sum_u_spread = 0.05;

constexpr int load_phase = 0;
constexpr int compute_phase = 1;

/// One task on a simulated server, with the hidden truth of its run.
struct job {
  std::size_t trace_index = 0;
  int phase = load_phase;
  double work_left_s = 0;      // truth solo seconds left in the phase
  double compute_truth_s = 0;  // truth solo seconds of the compute phase
  double u_net = 0;
  double u_gpu = 0;
  double net_share = 1;        // share of its weights crossing the network
  client_index client = 0;
  bool from_client = false;    // its uncached bytes cross the client's uplink
  bool uplink_bound = false;   // its client's uplink, not the ingress, set its pace

  uint64_t memory_bytes = 0;
  weight_set_id weights = 0;
  uint64_t weight_bytes = 0;
  double start_s = 0;
  double phase_start_s = 0;
  double model_solo_load_s = 0;
  double sum_u_integral = 0;    // ∫ Σu dt over the phase, self included
  double sum_u_sq_integral = 0; // ∫ Σu² dt over the phase, self included
  double others_integral = 0;   // ∫ (Σu − self) dt over the phase
  prediction predicted;
  double profile_launches = 0;  // launches per run its profile expected
  uint32_t launches = 0;        // truth launches of the run, made evenly
  double finish_s = 0;
  double model_done_s = 0;      // solo seconds done by the model's account

  double self_u() const {
    return phase == load_phase ? u_net * net_share : u_gpu;
  }

  /// A load from the server's own cache does not use the ingress: it is
  /// neither slowed by the loads crossing it nor slows them.
  bool on_ingress() const {
    return phase != load_phase || net_share > 0;
  }
};

/// One simulated GPU: truth contention, memory, LRU cache, links.
struct sim_server {
  uint32_t type = 0;
  double gamma_gpu = 1;
  double gamma_net = 1;
  uint64_t total_bytes = 0;
  uint64_t free_bytes = 0;
  uint64_t cache_capacity_bytes = 0;
  uint64_t cache_used_bytes = 0;
  double fill_rate = 2e9;
  double peer_rate = 0;
  std::vector<std::pair<weight_set_id, uint64_t>> lru; // front = most recent
  std::vector<link> links;
  std::vector<job> jobs;
  std::array<double, 2> sum_u{0, 0};
  /// Σ net_share of the loads crossing each client's uplink, all servers.
  const std::vector<double>* client_net = nullptr;

  void refresh() {
    sum_u = {0, 0};
    for (const auto& j : jobs)
      sum_u[j.phase] += j.self_u();
  }

  /// Truth contention of `j`: α = max(1, γ·Σu of every task in its phase,
  /// its own included), the form one H200 showed for 1, 2 and 3 copies.
  double alpha(const job& j) const {
    if (!j.on_ingress())
      return 1;
    auto a = contention(j.phase == load_phase ? gamma_net : gamma_gpu, sum_u[j.phase]);
    return std::max(a, uplink_alpha(j));
  }

  /// Truth contention of `j` on its client's uplink (1 when not loading
  /// over it): fair sharing among the client's loads to every server.
  double uplink_alpha(const job& j) const {
    if (j.phase != load_phase || !j.from_client || !client_net)
      return 1;
    return contention(uplink_gamma, (*client_net)[j.client]);
  }

  double next_dt() const {
    auto dt = infinity;
    for (const auto& j : jobs)
      dt = std::min(dt, std::max(0.0, j.work_left_s) * alpha(j));
    return dt;
  }

  /// Model contention of `j` with the scheduler's current γ estimates.
  double model_alpha(const job& j, const gamma_row& g) const {
    if (!j.on_ingress())
      return 1;
    return contention(j.phase == load_phase ? g[1] : g[0], sum_u[j.phase]);
  }

  void advance(double dt, const gamma_row& model_gamma) {
    if (dt <= 0)
      return;
    for (auto& j : jobs) {
      if (uplink_alpha(j) > contention(gamma_net, sum_u[load_phase]))
        j.uplink_bound = true;
      j.model_done_s += dt / model_alpha(j, model_gamma);
      j.work_left_s -= dt / alpha(j);
      j.sum_u_integral += sum_u[j.phase] * dt;
      j.sum_u_sq_integral += sum_u[j.phase] * sum_u[j.phase] * dt;
      j.others_integral += (sum_u[j.phase] - j.self_u()) * dt;
    }
  }

  uint64_t cached(weight_set_id w) const {
    for (const auto& [id, bytes] : lru)
      if (id == w)
        return bytes;
    return 0;
  }

  void touch(weight_set_id w, uint64_t bytes) {
    auto i = std::find_if(lru.begin(), lru.end(), [&](const auto& e) { return e.first == w; });
    if (i != lru.end()) {
      cache_used_bytes -= i->second;
      lru.erase(i);
    }
    if (bytes > cache_capacity_bytes)
      return;
    while (cache_used_bytes + bytes > cache_capacity_bytes && !lru.empty()) {
      cache_used_bytes -= lru.back().second;
      lru.pop_back();
    }
    lru.insert(lru.begin(), {w, bytes});
    cache_used_bytes += bytes;
  }

  /// Starts `j` now: truth load time from the cache state and the link, or
  /// a peer when some server caches `peer_bytes` of its weight set.
  void start(job j, const trace_task& tt, double now, uint64_t peer_bytes) {
    auto cached_now = std::min(cached(j.weights), j.weight_bytes);
    const auto& l = links[tt.client];
    j.model_solo_load_s = l.rtt_s
                          + static_cast<double>(j.weight_bytes - cached_now)
                              / uncached_rate(peer_rate, l, j.weight_bytes, peer_bytes)
                          + static_cast<double>(cached_now) / fill_rate;
    j.work_left_s = j.model_solo_load_s * tt.load_noise;
    j.net_share = load_net_occupancy(1.0, j.weight_bytes, cached_now);
    j.client = tt.client;
    j.from_client = j.net_share > 0 && !(peer_bytes >= j.weight_bytes && peer_rate > l.rate_bytes_per_s);
    j.phase = load_phase;
    j.start_s = now;
    j.phase_start_s = now;
    if (cached_now > 0)
      touch(j.weights, cached(j.weights));
    free_bytes -= j.memory_bytes;
    jobs.push_back(j);
    refresh();
  }
};

/// Adds each load of `s` crossing its client's uplink to `sums` (Σ share
/// crossing, per client).
void add_uplink_loads(const sim_server& s, std::vector<double>& sums) {
  for (const auto& j : s.jobs)
    if (j.phase == load_phase && j.from_client && j.client < sums.size())
      sums[j.client] += j.net_share;
}

double median(std::vector<double> xs) {
  if (xs.empty())
    return 0;
  auto mid = xs.begin() + static_cast<std::ptrdiff_t>(xs.size() / 2);
  std::nth_element(xs.begin(), mid, xs.end());
  auto m = *mid;
  if (xs.size() % 2 == 0)
    m = 0.5 * (m + *std::max_element(xs.begin(), mid));
  return m;
}

/// Learned state shared by the scheduler of one run.
struct model_state {
  profile_store profiles;
  contention_calibration calibration;
  std::vector<gamma_row> gamma;
};

class run {
public:
  run(const sim_config& cfg, policy_kind policy)
    : cfg_(cfg), policy_(policy),
      trace_(generate_trace(cfg.trace, cfg.task_types)) {
    for (const auto& g : cfg.gpu_types)
      type_names_.push_back(g.name);
    model_.gamma = model_.calibration.table(type_names_);
    boundary_ = static_cast<std::size_t>(cfg.fit_fraction * static_cast<double>(trace_.size()));
    for (uint32_t g = 0; g < cfg.gpu_types.size() && g < cfg.cluster.servers_per_type.size(); ++g)
      for (uint32_t k = 0; k < cfg.cluster.servers_per_type[g]; ++k)
        servers_.push_back(make_server(g, servers_.size()));
    client_net_.assign(std::max<uint32_t>(1, cfg.trace.clients), 0.0);
    if (cfg.cluster.shared_uplinks)
      for (auto& s : servers_)
        s.client_net = &client_net_;
    usage_.resize(cfg.gpu_types.size());
    co_time_.assign(cfg.gpu_types.size(), 0.0);
    for (std::size_t g = 0; g < cfg.gpu_types.size(); ++g) {
      usage_[g].gpu_type = cfg.gpu_types[g].name;
      usage_[g].tasks_by_type.assign(cfg.task_types.size(), 0);
    }
  }

  sim_report execute() {
    sim_report rep;
    rep.policy = policy_;
    rep.tasks = trace_.size();
    std::size_t next_arrival = 0;
    double now = 0;
    std::vector<double> latencies;
    std::vector<double> heldout;
    double queue_sum = 0;
    double first_arrival = trace_.empty() ? 0 : trace_.front().arrival_s;
    while (rep.completed < trace_.size()) {
      auto t_arrival = next_arrival < trace_.size() ? trace_[next_arrival].arrival_s : infinity;
      auto dt = infinity;
      for (const auto& s : servers_)
        dt = std::min(dt, s.next_dt());
      auto t_next = std::min(t_arrival, now + dt);
      if (!std::isfinite(t_next))
        break; // queued tasks fit nowhere: reported as not completed
      for (auto& s : servers_) {
        account(s, t_next - now);
        s.advance(t_next - now, model_.gamma[s.type]);
      }
      now = t_next;
      for (auto& s : servers_)
        finish_phases(s, now, rep, latencies, heldout, queue_sum);
      while (next_arrival < trace_.size() && trace_[next_arrival].arrival_s <= now)
        waiting_.push_back(next_arrival++);
      schedule(now);
      refresh_clients();
    }
    rep.makespan_s = now - first_arrival;
    rep.throughput_tasks_per_s = rep.makespan_s > 0 ? static_cast<double>(rep.completed) / rep.makespan_s : 0;
    if (!latencies.empty()) {
      double sum = 0;
      for (auto x : latencies)
        sum += x;
      rep.mean_latency_s = sum / static_cast<double>(latencies.size());
      rep.mean_queue_s = queue_sum / static_cast<double>(latencies.size());
      std::sort(latencies.begin(), latencies.end());
      auto idx = static_cast<std::size_t>(std::ceil(0.99 * static_cast<double>(latencies.size()))) - 1;
      rep.p99_latency_s = latencies[std::min(idx, latencies.size() - 1)];
    }
    rep.heldout_median_abs_pct = median(heldout);
    rep.heldout_samples = heldout.size();
    auto loaded = network_bytes_ + cached_bytes_;
    rep.network_bytes = network_bytes_;
    rep.cache_hit_fraction = loaded > 0 ? cached_bytes_ / loaded : 0;
    validate_mixes(rep);
    for (uint32_t g = 0; g < cfg_.gpu_types.size(); ++g) {
      for (auto r : {resource::gpu, resource::network}) {
        gamma_row_report row;
        row.gpu_type = type_names_[g];
        row.res = r;
        row.planted = r == resource::gpu ? cfg_.gpu_types[g].gamma_gpu : cfg_.gpu_types[g].gamma_net;
        row.fitted = contention_calibration::default_gamma;
        if (auto est = model_.calibration.estimate(type_names_[g], r)) {
          row.converged = true;
          row.fitted = est->gamma;
          row.samples = est->samples;
          row.active_samples = est->active_samples;
          row.rms_residual = est->rms_residual;
        }
        rep.gammas.push_back(row);
      }
    }
    std::vector<double> per_type(cfg_.gpu_types.size(), 0.0);
    for (const auto& sv : servers_)
      per_type[sv.type] += 1;
    for (std::size_t g = 0; g < usage_.size(); ++g) {
      auto& u = usage_[g];
      if (u.computing > 0)
        u.mean_co_computing = co_time_[g] / u.computing;
      auto denom = per_type[g] * rep.makespan_s;
      if (denom > 0) {
        u.computing /= denom;
        u.loading_only /= denom;
        u.idle = std::max(0.0, 1.0 - u.computing - u.loading_only);
      }
    }
    rep.usage = usage_;
    return rep;
  }

private:
  /// Σ net_share of the loads crossing each client's uplink.
  void refresh_clients() {
    std::fill(client_net_.begin(), client_net_.end(), 0.0);
    for (const auto& s : servers_)
      add_uplink_loads(s, client_net_);
  }

  void account(const sim_server& s, double dt) {
    if (dt <= 0 || !(dt < infinity))
      return;
    std::size_t computing = 0;
    for (const auto& j : s.jobs)
      computing += j.phase == compute_phase ? 1 : 0;
    auto& u = usage_[s.type];
    if (computing > 0) {
      u.computing += dt;
      co_time_[s.type] += dt * static_cast<double>(computing);
    } else if (!s.jobs.empty()) {
      u.loading_only += dt;
    }
  }

  sim_server make_server(uint32_t g, std::size_t index) const {
    const auto& spec = cfg_.gpu_types[g];
    const auto& cc = cfg_.cluster;
    sim_server s;
    s.type = g;
    s.gamma_gpu = spec.gamma_gpu;
    s.gamma_net = spec.gamma_net;
    s.total_bytes = spec.memory_bytes;
    s.free_bytes = spec.memory_bytes;
    s.cache_capacity_bytes = cc.cache_capacity_bytes;
    s.fill_rate = cc.cache_fill_rate_bytes_per_s;
    s.peer_rate = cc.peer_rate_bytes_per_s;
    auto factor = index % 2 == 1 ? cc.far_rack_factor : 1.0;
    for (uint32_t c = 0; c < std::max<uint32_t>(1, cfg_.trace.clients); ++c) {
      if (c % 2 == 0)
        s.links.push_back({cc.wired_rate_bytes_per_s * factor, cc.wired_rtt_s});
      else
        s.links.push_back({cc.wifi_rate_bytes_per_s * factor, cc.wifi_rtt_s});
    }
    return s;
  }

  task make_task(const trace_task& tt, std::map<std::string, task_profile>& memo) const {
    const auto& type = cfg_.task_types[tt.type];
    task t;
    t.id = tt.id;
    t.signature = signature_of(type, tt.variant);
    t.client = tt.client;
    t.weights = weights_of(tt.type, tt.variant);
    t.weight_bytes = type.weight_bytes;
    auto i = memo.find(t.signature);
    if (i == memo.end())
      i = memo.emplace(t.signature, model_.profiles.resolve(t.signature, type_names_, t.weight_bytes)).first;
    t.profile = i->second;
    return t;
  }

  /// The most bytes of `w` any server caches now (peer fetch).
  uint64_t peer_cached_bytes(weight_set_id w) const {
    uint64_t most = 0;
    for (const auto& s : servers_)
      most = std::max(most, s.cached(w));
    return most;
  }

  job make_job(const trace_task& tt, std::size_t index) const {
    const auto& type = cfg_.task_types[tt.type];
    job j;
    j.trace_index = index;
    j.u_net = type.net_occupancy;
    j.u_gpu = type.gpu_occupancy;
    j.memory_bytes = type.memory_bytes;
    j.weights = weights_of(tt.type, tt.variant);
    j.weight_bytes = type.weight_bytes;
    j.launches = type.launches;
    return j;
  }

  double truth_compute_s(const trace_task& tt, uint32_t gpu_type) const {
    return cfg_.task_types[tt.type].compute_s_on(cfg_.gpu_types[gpu_type]) * tt.compute_noise;
  }

  snapshot make_snapshot(double now) const {
    snapshot snap;
    snap.now_s = now;
    snap.gpu_types = type_names_;
    snap.gamma = model_.gamma;
    snap.round_robin_cursor = cursor_;
    snap.shared_uplinks = cfg_.cluster.shared_uplinks;
    snap.servers.reserve(servers_.size());
    for (std::size_t i = 0; i < servers_.size(); ++i) {
      const auto& s = servers_[i];
      server out;
      out.id = "gpu-" + std::to_string(i);
      out.gpu_type = static_cast<gpu_type_index>(s.type);
      out.total_memory_bytes = s.total_bytes;
      out.free_memory_bytes = s.free_bytes;
      out.cache_fill_rate_bytes_per_s = s.fill_rate;
      out.peer_rate_bytes_per_s = s.peer_rate;
      out.links = s.links;
      for (const auto& [w, bytes] : s.lru)
        out.cached.push_back({w, bytes});
      std::sort(out.cached.begin(), out.cached.end(),
                [](const cached_weights& a, const cached_weights& b) { return a.weights < b.weights; });
      for (const auto& j : s.jobs) {
        running_task r;
        r.id = trace_[j.trace_index].id;
        r.weights = j.weights;
        r.memory_bytes = j.memory_bytes;
        r.occ = {j.u_gpu, j.u_net * j.net_share};
        if (j.phase == load_phase && j.from_client) {
          r.uplink_client = j.client;
          r.uplink_occupancy = j.net_share;
        }
        // The server reports the bytes left of a load; the compute left is
        // the predicted solo time minus the work done by the model's own
        // account (elapsed time / model alpha), at the current model alpha.
        auto solo = std::max(1e-3, j.predicted.solo_compute_s);
        // A loading task is not yet in the GPU's Σu; it will be.
        auto computing = s.sum_u[compute_phase] + (j.phase == load_phase ? j.u_gpu : 0.0);
        auto alpha_now = contention(model_.gamma[s.type][0], computing);
        if (j.phase == load_phase) {
          r.load_remaining_s = std::max(0.0, j.work_left_s) * s.alpha(j);
          r.remaining_s = r.load_remaining_s + remaining_compute_s(solo, 0, alpha_now);
        } else {
          r.load_remaining_s = 0;
          // Work done from the progress counter the server reports
          // (launches so far), else from the model's own account.
          auto f = j.compute_truth_s > 0 ? 1.0 - std::max(0.0, j.work_left_s) / j.compute_truth_s : 0.0;
          auto launched = static_cast<uint64_t>(std::floor(std::clamp(f, 0.0, 1.0) * j.launches));
          auto done = done_solo_from_progress(solo, launched, j.profile_launches);
          r.remaining_s = remaining_compute_s(solo, done >= 0 ? done : j.model_done_s, alpha_now);
        }
        out.running.push_back(r);
      }
      snap.servers.push_back(std::move(out));
    }
    return snap;
  }

  void schedule(double now) {
    if (waiting_.empty())
      return;
    auto snap = make_snapshot(now);
    std::map<std::string, task_profile> memo;
    std::vector<task> queue;
    auto n = std::min(cfg_.lookahead, waiting_.size());
    queue.reserve(n);
    for (std::size_t i = 0; i < n; ++i)
      queue.push_back(make_task(trace_[waiting_[i]], memo));
    auto d = place(prepared_snapshot{std::move(snap)}, queue, policy_);
    cursor_ = d.next_round_robin_cursor;
    std::vector<bool> started(n, false);
    for (std::size_t i = 0; i < n; ++i) {
      const auto& a = d.assignments[i];
      if (a.server == no_server)
        continue;
      auto idx = waiting_[i];
      const auto& tt = trace_[idx];
      auto& s = servers_[a.server];
      auto j = make_job(tt, idx);
      if (j.memory_bytes > s.free_bytes)
        continue; // the profile underestimated memory: stays queued
      j.predicted = a.predicted;
      j.profile_launches = queue[i].profile.launches;
      j.compute_truth_s = truth_compute_s(tt, s.type);
      auto cached_now = std::min(s.cached(j.weights), j.weight_bytes);
      network_bytes_ += static_cast<double>(j.weight_bytes - cached_now);
      cached_bytes_ += static_cast<double>(cached_now);
      s.start(j, tt, now, peer_cached_bytes(j.weights));
      started[i] = true;
    }
    std::deque<std::size_t> rest;
    for (std::size_t i = 0; i < waiting_.size(); ++i)
      if (i >= n || !started[i])
        rest.push_back(waiting_[i]);
    waiting_.swap(rest);
  }

  void finish_phases(sim_server& s, double now, sim_report& rep, std::vector<double>& latencies,
                     std::vector<double>& heldout, double& queue_sum) {
    bool changed = false;
    for (auto& j : s.jobs) {
      if (j.work_left_s > work_epsilon_s)
        continue;
      changed = true;
      const auto& tt = trace_[j.trace_index];
      auto learn = j.trace_index < boundary_;
      auto wall = now - j.phase_start_s;
      // The regressor of γ: the phase's mean Σu, the task's own included.
      auto mean_u = wall > 0 ? j.sum_u_integral / wall : 0.0;
      // γ is fitted only from phases whose co-runners stayed steady: under a
      // fluctuating Σu the mean slowdown is not max(1, γ·mean Σu) (Jensen).
      auto var_u = wall > 0 ? std::max(0.0, j.sum_u_sq_integral / wall - mean_u * mean_u) : 0.0;
      auto steady = std::sqrt(var_u) <= steady_sum_u_spread;
      const auto& type_name = type_names_[s.type];
      if (j.phase == load_phase) {
        // A load its client's uplink held back says nothing of the ingress.
        if (learn && steady && j.net_share > 0 && !j.uplink_bound && j.model_solo_load_s > 0)
          model_.calibration.observe(type_name, resource::network, mean_u, wall / j.model_solo_load_s);
        s.touch(j.weights, j.weight_bytes);
        j.phase = compute_phase;
        j.work_left_s = j.compute_truth_s;
        j.phase_start_s = now;
        j.sum_u_integral = 0;
        j.sum_u_sq_integral = 0;
        j.others_integral = 0;
        j.model_done_s = 0;
        continue;
      }
      auto sig = signature_of(cfg_.task_types[tt.type], tt.variant);
      if (learn) {
        auto solo = model_.profiles.solo_compute_s(sig, type_name);
        if (solo > 0 && steady)
          model_.calibration.observe(type_name, resource::gpu, mean_u, wall / solo);
        run_record rec;
        rec.gpu_type = type_name;
        rec.weight_bytes = j.weight_bytes;
        rec.memory_bytes = j.memory_bytes;
        rec.compute_wall_s = wall;
        rec.shared_gpu = j.others_integral > 1e-9;
        // The solo seconds done by the model's own account (∫ dt / α_model,
        // as a gpu_server would report from its co-runners' occupancy)
        // divide the predicted contention out of the wall time.
        rec.alpha_gpu = j.model_done_s > 0 ? std::max(1.0, wall / j.model_done_s) : 1.0;
        rec.alpha_modelled = true;
        rec.occ = {j.u_gpu, j.u_net};
        rec.launches = j.launches;
        model_.profiles.observe(sig, rec);
        if (++since_refit_ >= cfg_.refit_every) {
          since_refit_ = 0;
          model_.gamma = model_.calibration.table(type_names_);
        }
      } else if (!frozen_) {
        frozen_ = true;
        model_.gamma = model_.calibration.table(type_names_);
      }
      j.finish_s = now;
      auto service = now - j.start_s;
      if (!learn && service > 0)
        heldout.push_back(100.0 * std::fabs(j.predicted.total_s - service) / service);
      latencies.push_back(now - tt.arrival_s);
      ++usage_[s.type].tasks_by_type[tt.type];
      queue_sum += j.start_s - tt.arrival_s;
      ++rep.completed;
      s.free_bytes += j.memory_bytes;
      j.phase = -1;
    }
    if (!changed)
      return;
    s.jobs.erase(std::remove_if(s.jobs.begin(), s.jobs.end(), [](const job& j) { return j.phase < 0; }),
                 s.jobs.end());
    s.refresh();
  }

  /// Runs random co-located mixes on a fresh server of a random type and
  /// compares the frozen model's predictions with the truth.
  void validate_mixes(sim_report& rep) {
    rng gen{cfg_.trace.seed ^ 0x5eed5eed5eedull};
    std::vector<double> errors;
    std::map<std::string, task_profile> memo;
    for (std::size_t m = 0; m < cfg_.holdout_mixes && !servers_.empty(); ++m) {
      auto g = static_cast<uint32_t>(gen.next() % cfg_.gpu_types.size());
      auto s = make_server(g, static_cast<std::size_t>(gen.next() % 2));
      auto k = 2 + gen.next() % 3;
      std::vector<trace_task> tts;
      std::vector<task> tasks;
      for (std::size_t i = 0; i < k; ++i) {
        trace_task tt;
        tt.id = i;
        tt.type = static_cast<uint32_t>(gen.next() % cfg_.task_types.size());
        tt.variant = static_cast<uint32_t>(gen.next() % std::max<uint32_t>(1, cfg_.task_types[tt.type].variants));
        tt.client = static_cast<client_index>(gen.next() % s.links.size());
        tt.compute_noise = std::exp(cfg_.trace.noise_sigma * gen.normal());
        tt.load_noise = std::exp(0.5 * cfg_.trace.noise_sigma * gen.normal());
        const auto& type = cfg_.task_types[tt.type];
        if (s.free_bytes < type.memory_bytes)
          continue;
        if (gen.uniform() < 0.5)
          s.touch(weights_of(tt.type, tt.variant), type.weight_bytes);
        s.free_bytes -= type.memory_bytes;
        tts.push_back(tt);
      }
      if (tts.size() < 2)
        continue;
      s.free_bytes = s.total_bytes;
      server view;
      view.id = "mix";
      view.gpu_type = static_cast<gpu_type_index>(g);
      view.total_memory_bytes = s.total_bytes;
      view.free_memory_bytes = s.total_bytes;
      view.cache_fill_rate_bytes_per_s = s.fill_rate;
      view.links = s.links;
      for (const auto& [w, bytes] : s.lru)
        view.cached.push_back({w, bytes});
      std::sort(view.cached.begin(), view.cached.end(),
                [](const cached_weights& a, const cached_weights& b) { return a.weights < b.weights; });
      for (const auto& tt : tts)
        tasks.push_back(make_task(tt, memo));
      // Each task's prediction sees the others with their own predicted
      // phases; a few rounds make the mutual estimates consistent.
      std::vector<prediction> preds(tasks.size());
      for (int round = 0; round < 5; ++round) {
        std::vector<prediction> next(tasks.size());
        for (std::size_t i = 0; i < tasks.size(); ++i) {
          server_timeline tl{view};
          occupancy_timeline uplink;
          if (round > 0)
            for (std::size_t j = 0; j < tasks.size(); ++j) {
              if (j == i)
                continue;
              tl.add(0, preds[j].load_s, preds[j].total_s,
                     {tasks[j].profile.occ.gpu, preds[j].net_occupancy}, 0);
              if (cfg_.cluster.shared_uplinks && tasks[j].client == tasks[i].client)
                uplink.add(0, preds[j].load_s, preds[j].uplink_occupancy);
            }
          next[i] = predict(tasks[i], view, tl, 0, model_.gamma[g][0], model_.gamma[g][1], 0,
                            &uplink);
        }
        preds = next;
      }
      std::vector<double> mix_clients(s.links.size(), 0.0);
      if (cfg_.cluster.shared_uplinks)
        s.client_net = &mix_clients;
      auto refresh = [&] {
        s.refresh();
        std::fill(mix_clients.begin(), mix_clients.end(), 0.0);
        add_uplink_loads(s, mix_clients);
      };
      for (std::size_t i = 0; i < tts.size(); ++i) {
        auto j = make_job(tts[i], i);
        j.compute_truth_s = truth_compute_s(tts[i], g);
        s.start(j, tts[i], 0, 0);
      }
      refresh();
      std::vector<double> finish(tts.size(), 0);
      double now = 0;
      while (!s.jobs.empty()) {
        auto dt = s.next_dt();
        s.advance(dt, model_.gamma[g]);
        now += dt;
        for (auto& j : s.jobs) {
          if (j.work_left_s > work_epsilon_s)
            continue;
          if (j.phase == load_phase) {
            j.phase = compute_phase;
            j.work_left_s = j.compute_truth_s;
          } else {
            finish[j.trace_index] = now;
            j.phase = -1;
          }
        }
        s.jobs.erase(std::remove_if(s.jobs.begin(), s.jobs.end(), [](const job& j) { return j.phase < 0; }),
                     s.jobs.end());
        refresh();
      }
      for (std::size_t i = 0; i < tts.size(); ++i)
        if (finish[i] > 0)
          errors.push_back(100.0 * std::fabs(preds[i].total_s - finish[i]) / finish[i]);
    }
    rep.mix_median_abs_pct = median(errors);
    rep.mix_samples = errors.size();
  }

  const sim_config& cfg_;
  policy_kind policy_;
  std::vector<trace_task> trace_;
  std::vector<std::string> type_names_;
  std::vector<sim_server> servers_;
  std::deque<std::size_t> waiting_;
  model_state model_;
  std::size_t boundary_ = 0;
  std::size_t since_refit_ = 0;
  bool frozen_ = false;
  server_index cursor_ = 0;
  double network_bytes_ = 0;
  double cached_bytes_ = 0;
  std::vector<gpu_usage> usage_;
  std::vector<double> co_time_;
  std::vector<double> client_net_;
};

/// Least time the cluster needs for work `w[k][g]` (γ-weighted
/// occupancy-seconds of task type k if all of it ran on GPU type g) with
/// `servers[g]` GPUs of each type: the LP min T s.t. Σ_g x_kg = 1,
/// Σ_k x_kg w_kg ≤ servers_g T through its dual, max over prices μ on the
/// simplex of Σ_k min_g μ_g w_kg / servers_g (a lower bound of T for
/// every μ), on a grid refined around its best point.
double least_makespan(const std::vector<std::vector<double>>& w, const std::vector<double>& servers) {
  std::vector<std::size_t> types;
  for (std::size_t g = 0; g < servers.size(); ++g)
    if (servers[g] > 0)
      types.push_back(g);
  if (types.empty())
    return infinity;
  auto value = [&](const std::vector<double>& mu) {
    double total = 0;
    for (const auto& wk : w) {
      auto best = infinity;
      for (std::size_t i = 0; i < types.size(); ++i)
        best = std::min(best, mu[i] * wk[types[i]] / servers[types[i]]);
      total += best;
    }
    return total;
  };
  auto n = types.size();
  std::vector<double> best_mu(n, 1.0 / static_cast<double>(n));
  auto best = value(best_mu);
  // Grid over the first n - 1 prices around `center` (the last one makes
  // the sum 1), `steps` points each side of width `width`.
  auto search = [&](std::vector<double> center, double width, int steps) {
    std::vector<int> idx(n - 1, -steps);
    std::vector<double> mu(n);
    while (true) {
      double sum = 0;
      bool ok = true;
      for (std::size_t i = 0; i + 1 < n; ++i) {
        mu[i] = center[i] + width * idx[i] / steps;
        ok = ok && mu[i] >= 0;
        sum += mu[i];
      }
      mu[n - 1] = 1 - sum;
      if (ok && mu[n - 1] >= 0) {
        auto v = value(mu);
        if (v > best) {
          best = v;
          best_mu = mu;
        }
      }
      std::size_t i = 0;
      while (i + 1 < n && ++idx[i] > steps)
        idx[i++] = -steps;
      if (i + 1 >= n)
        break;
    }
  };
  if (n > 1) {
    auto steps = n == 2 ? 1000 : n == 3 ? 100 : 8;
    search(best_mu, 1.0, steps);
    for (int round = 0; round < 6; ++round)
      search(best_mu, 2.0 / steps / (round + 1) / (round + 1), steps);
  }
  return best;
}

} // namespace

double throughput_bound(const sim_config& cfg) {
  auto trace = generate_trace(cfg.trace, cfg.task_types);
  if (trace.empty())
    return 0;
  auto types = cfg.gpu_types.size();
  std::vector<double> servers(types, 0);
  for (std::size_t g = 0; g < types && g < cfg.cluster.servers_per_type.size(); ++g)
    servers[g] = cfg.cluster.servers_per_type[g];
  auto solo = [&](const trace_task& tt, std::size_t g) {
    return cfg.task_types[tt.type].compute_s_on(cfg.gpu_types[g]) * tt.compute_noise;
  };
  auto t0 = trace.front().arrival_s;
  double makespan = 0;
  for (const auto& tt : trace) {
    auto fastest = infinity;
    for (std::size_t g = 0; g < types; ++g)
      if (servers[g] > 0)
        fastest = std::min(fastest, solo(tt, g));
    makespan = std::max(makespan, tt.arrival_s - t0 + fastest);
  }
  // Work of the tasks from index `from` on, per task type and GPU type.
  std::vector<std::vector<double>> w(cfg.task_types.size(), std::vector<double>(types, 0));
  constexpr std::size_t samples = 64;
  auto next_sample = trace.size();
  for (std::size_t i = trace.size(); i-- > 0;) {
    const auto& tt = trace[i];
    for (std::size_t g = 0; g < types; ++g)
      w[tt.type][g] += cfg.task_types[tt.type].gpu_occupancy * solo(tt, g) * cfg.gpu_types[g].gamma_gpu;
    if (i == 0 || next_sample - i >= (trace.size() + samples - 1) / samples) {
      next_sample = i;
      makespan = std::max(makespan, tt.arrival_s - t0 + least_makespan(w, servers));
    }
  }
  return makespan > 0 ? static_cast<double>(trace.size()) / makespan : 0;
}

sim_report simulate(const sim_config& cfg, policy_kind policy) {
  run r{cfg, policy};
  return r.execute();
}

bool same_report(const sim_report& a, const sim_report& b) {
  auto same_gamma = [](const gamma_row_report& x, const gamma_row_report& y) {
    return x.gpu_type == y.gpu_type && x.res == y.res && x.planted == y.planted
           && x.fitted == y.fitted && x.converged == y.converged && x.samples == y.samples
           && x.active_samples == y.active_samples && x.rms_residual == y.rms_residual;
  };
  return a.policy == b.policy && a.tasks == b.tasks && a.completed == b.completed
         && a.throughput_tasks_per_s == b.throughput_tasks_per_s
         && a.mean_latency_s == b.mean_latency_s && a.p99_latency_s == b.p99_latency_s
         && a.mean_queue_s == b.mean_queue_s && a.makespan_s == b.makespan_s
         && a.heldout_median_abs_pct == b.heldout_median_abs_pct
         && a.heldout_samples == b.heldout_samples
         && a.mix_median_abs_pct == b.mix_median_abs_pct && a.mix_samples == b.mix_samples
         && a.network_bytes == b.network_bytes && a.cache_hit_fraction == b.cache_hit_fraction
         && std::equal(a.gammas.begin(), a.gammas.end(), b.gammas.begin(), b.gammas.end(),
                       same_gamma)
         && std::equal(a.usage.begin(), a.usage.end(), b.usage.begin(), b.usage.end(),
                       [](const gpu_usage& x, const gpu_usage& y) {
                         return x.gpu_type == y.gpu_type && x.computing == y.computing
                                && x.loading_only == y.loading_only && x.idle == y.idle
                                && x.mean_co_computing == y.mean_co_computing
                                && x.tasks_by_type == y.tasks_by_type;
                       });
}

std::string format_reports(const std::vector<sim_report>& reports) {
  std::string out;
  char line[512];
  std::snprintf(line, sizeof(line), "%-13s %9s %10s %10s %10s %10s %9s %9s %8s %8s\n", "policy",
                "done", "tasks/s", "mean lat", "p99 lat", "queue", "makespan", "net GB",
                "cache%", "pred%");
  out += line;
  for (const auto& r : reports) {
    std::snprintf(line, sizeof(line), "%-13s %4zu/%-4zu %10.3f %9.1fs %9.1fs %9.1fs %8.0fs %9.0f %7.1f%% %7.1f%%\n",
                  std::string{to_string(r.policy)}.c_str(), r.completed, r.tasks,
                  r.throughput_tasks_per_s, r.mean_latency_s, r.p99_latency_s, r.mean_queue_s,
                  r.makespan_s, r.network_bytes / 1e9, 100.0 * r.cache_hit_fraction,
                  r.heldout_median_abs_pct);
    out += line;
  }
  if (reports.empty())
    return out;
  std::snprintf(line, sizeof(line), "\n%-13s %-10s %9s %9s %7s %9s  %s\n", "policy", "gpu type",
                "computing", "load only", "idle", "co-run", "tasks done per task type");
  out += line;
  for (const auto& r : reports) {
    for (const auto& u : r.usage) {
      std::string counts;
      for (auto c : u.tasks_by_type)
        counts += (counts.empty() ? "" : "/") + std::to_string(c);
      std::snprintf(line, sizeof(line), "%-13s %-10s %8.1f%% %8.1f%% %6.1f%% %9.2f  %s\n",
                    std::string{to_string(r.policy)}.c_str(), u.gpu_type.c_str(),
                    100 * u.computing, 100 * u.loading_only, 100 * u.idle, u.mean_co_computing,
                    counts.c_str());
      out += line;
    }
  }
  const auto& first = reports.front();
  std::snprintf(line, sizeof(line),
                "\nlatency model (%s run): held-out tasks median |err| %.1f%% (n=%zu), "
                "held-out mixes median |err| %.1f%% (n=%zu)\n",
                std::string{to_string(first.policy)}.c_str(), first.heldout_median_abs_pct,
                first.heldout_samples, first.mix_median_abs_pct, first.mix_samples);
  out += line;
  std::snprintf(line, sizeof(line), "%-10s %-8s %8s %8s %9s %8s %8s\n", "gpu type", "resource",
                "planted", "fitted", "samples", "active", "rms");
  out += line;
  for (const auto& g : first.gammas) {
    std::snprintf(line, sizeof(line), "%-10s %-8s %8.3f %8s %9llu %8llu %8.3f\n",
                  g.gpu_type.c_str(), g.res == resource::gpu ? "gpu" : "network", g.planted,
                  g.converged ? std::to_string(g.fitted).substr(0, 5).c_str() : "default",
                  static_cast<unsigned long long>(g.samples),
                  static_cast<unsigned long long>(g.active_samples), g.rms_residual);
    out += line;
  }
  return out;
}

} // namespace gleam::placement::sim
