#include "actors/placement_service.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "executor/weight_cache.hpp"

namespace gleam::actors {

namespace {

constexpr double ns_per_s = 1e9;
constexpr double infinity = std::numeric_limits<double>::infinity();
/// Solo loads smaller than this do not teach the link rate (RTT-dominated).
constexpr uint64_t min_rate_sample_bytes = 1ull << 20;
/// Weight of a new link-rate sample.
constexpr double link_rate_ema = 0.3;

uint64_t fnv1a(const std::string& bytes, uint64_t h = 1469598103934665603ull) {
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

double seconds(uint64_t ns) {
  return static_cast<double>(ns) / ns_per_s;
}

} // namespace

std::vector<placement::cached_weights> cached_weight_sets(const proto::CacheSummary& cache,
                                                          const std::vector<keyed_weights>& sets) {
  std::vector<placement::cached_weights> out;
  if (cache.chunks() == 0)
    return out;
  for (const auto& set : sets) {
    if (set.keys.empty())
      continue;
    size_t held = 0;
    for (const auto& key : set.keys)
      held += executor::summary_may_serve(cache, key, set.tenant) ? 1 : 0;
    if (held == 0)
      continue;
    auto bytes = static_cast<uint64_t>(static_cast<double>(set.bytes) * held / set.keys.size());
    out.push_back({set.id, bytes});
  }
  std::sort(out.begin(), out.end(),
            [](const auto& a, const auto& b) { return a.weights < b.weights; });
  return out;
}

placement::weight_set_id weight_set_of(const proto::PlacementRequest& req,
                                       const std::string& tenant) {
  if (req.chunk_keys_size() == 0)
    return fnv1a(req.task_signature());
  uint64_t h = 1469598103934665603ull;
  bool tenant_bound = false;
  for (const auto& k : req.chunk_keys()) {
    h = fnv1a(k, h);
    auto key = cache_store::chunk_key::from_binary(k);
    tenant_bound = tenant_bound || !key || key->kind == cache_store::chunk_key::algo::xxh3_128;
  }
  // The tenant after a separator no key byte sequence ends with.
  return tenant_bound ? fnv1a(tenant, fnv1a(std::string{"\0tenant:", 8}, h)) : h;
}

placement_service::placement_service(placement_options opts) : opts_(opts) {
}

std::string placement_service::key(const std::string& node, uint32_t gpu) {
  return node + "/" + std::to_string(gpu);
}

std::string placement_service::server_name(size_t index) const {
  return key(gpus_[index].node_id, gpus_[index].info.index());
}

double placement_service::link_rate(const std::string& server_key,
                                     placement::client_index host) const {
  if (auto i = pair_rate_.find({server_key, host}); i != pair_rate_.end())
    return i->second;
  return unmeasured_link_rate(server_best(server_key), host);
}

double placement_service::server_best(const std::string& server_key) const {
  double best = 0;
  for (auto i = pair_rate_.lower_bound({server_key, 0});
       i != pair_rate_.end() && i->first.first == server_key; ++i)
    best = std::max(best, i->second);
  return best;
}

double placement_service::unmeasured_link_rate(double server_best,
                                               placement::client_index host) const {
  double from = host < host_best_.size() ? host_best_[host] : 0;
  if (server_best > 0 && from > 0)
    return std::min(server_best, from);
  if (server_best > 0 || from > 0)
    return std::max(server_best, from);
  return opts_.default_link_rate_bytes_per_s;
}

void placement_service::learn_link_rate(const std::string& server_key,
                                        placement::client_index host, double rate) {
  auto [it, added] = pair_rate_.emplace(std::make_pair(server_key, host), rate);
  if (!added)
    it->second += link_rate_ema * (rate - it->second);
  if (host >= host_best_.size())
    host_best_.resize(host + 1, 0);
  double best = 0;
  for (const auto& [pair, r] : pair_rate_)
    if (pair.second == host)
      best = std::max(best, r);
  host_best_[host] = best;
  // Servers take it in at their next telemetry (make_server).
}

namespace {

/// The host of a client id "host:pid" (an id without a host is its own).
std::string client_host(const std::string& client_id) {
  auto colon = client_id.rfind(':');
  return colon == std::string::npos ? client_id : client_id.substr(0, colon);
}

} // namespace

placement::client_index placement_service::uplink_of(const std::string& client_id) const {
  auto i = uplinks_.find(client_host(client_id));
  return i != uplinks_.end() ? i->second : placement::no_client;
}

placement::client_index placement_service::link_of(const std::string& client_id) const {
  auto c = uplink_of(client_id);
  return c != placement::no_client ? c : unknown_host;
}

placement::client_index placement_service::learn_uplink(const std::string& client_id) {
  if (client_id.empty())
    return placement::no_client;
  auto host = client_host(client_id);
  if (auto i = uplinks_.find(host); i != uplinks_.end())
    return i->second;
  if (uplinks_.size() >= max_uplinks)
    return placement::no_client;
  auto index = static_cast<placement::client_index>(uplinks_.size() + 1);
  uplinks_.emplace(host, index);
  for (size_t i = 0; i < gpus_.size(); ++i)
    refresh_server(i, gpus_[i].updated_ns);
  return index;
}

placement::task_profile placement_service::profile_of(const std::string& signature,
                                                      uint64_t weight_bytes_hint) const {
  return profiles_.resolve(signature, gpu_types_, weight_bytes_hint);
}

void placement_service::refresh_gamma() {
  prep_.set_gpu_types(gpu_types_);
  prep_.set_gamma(calibration_.table(gpu_types_));
}

void placement_service::on_node(const proto::NodeStatus& reg, uint64_t now_ns) {
  const auto& telemetry = reg.telemetry();
  auto rtt_ms = reg.rtt_ms();
  // A draining node takes nothing new: to placement it is not up.
  auto up = reg.up() && !reg.drain().draining();
  caches_[reg.node_id()] = telemetry.cache();
  auto peer_rate = telemetry.peer_fetch_rate();
  if (!std::isfinite(peer_rate) || peer_rate < 0)
    peer_rate = 0;
  for (const auto& info : reg.gpus()) {
    auto k = key(reg.node_id(), info.index());
    auto [it, added] = index_of_.emplace(k, gpus_.size());
    if (added)
      gpus_.emplace_back();
    auto& g = gpus_[it->second];
    g.node_id = reg.node_id();
    g.info = info;
    g.data_host = reg.data_host();
    g.data_port = reg.data_port();
    g.up = up;
    g.draining = reg.up() && reg.drain().draining();
    g.updated_ns = now_ns;
    g.peer_rate = peer_rate;
    if (rtt_ms > 0)
      g.rtt_s = rtt_ms / 1000.0;
    g.telemetry.Clear();
    g.telemetry.set_index(info.index());
    for (const auto& t : telemetry.gpus())
      if (t.index() == info.index())
        g.telemetry = t;
    if (std::find(gpu_types_.begin(), gpu_types_.end(), info.name()) == gpu_types_.end()) {
      gpu_types_.push_back(info.name());
      refresh_gamma();
    }
    // A new session on this GPU is the placement made for its signature
    // (the oldest such); forget sessions that closed.
    std::set<uint64_t> now_open;
    for (const auto& s : g.telemetry.running()) {
      now_open.insert(s.session());
      if (g.sessions_seen.count(s.session()) != 0)
        continue;
      auto p = std::find_if(g.pending.begin(), g.pending.end(), [&](const pending_task& x) {
        return x.signature == s.task_signature();
      });
      if (p != g.pending.end())
        g.pending.erase(p);
    }
    g.sessions_seen = std::move(now_open);
    for (const auto& r : g.telemetry.running())
      learn_uplink(r.client_id());
    auto timeout_ns = static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(opts_.pending_timeout).count());
    while (!g.pending.empty() && g.pending.front().placed_ns + timeout_ns < now_ns)
      g.pending.pop_front();
    refresh_server(it->second, now_ns);
  }
}

placement::server placement_service::make_server(const gpu_entry& g, uint64_t now_ns) const {
  placement::server s;
  s.id = key(g.node_id, g.info.index());
  auto type = std::find(gpu_types_.begin(), gpu_types_.end(), g.info.name());
  s.gpu_type = static_cast<placement::gpu_type_index>(type - gpu_types_.begin());
  // Every host's link (link_rate): the estimates, then the pairs measured.
  s.links.resize(uplinks_.size() + 1);
  auto best = server_best(s.id);
  for (placement::client_index c = 0; c < s.links.size(); ++c)
    s.links[c] = placement::link{unmeasured_link_rate(best, c), g.rtt_s};
  for (auto i = pair_rate_.lower_bound({s.id, 0});
       i != pair_rate_.end() && i->first.first == s.id; ++i)
    if (i->first.second < s.links.size())
      s.links[i->first.second].rate_bytes_per_s = i->second;
  s.peer_rate_bytes_per_s = g.peer_rate;
  if (auto c = caches_.find(g.node_id); c != caches_.end() && !keyed_.empty()) {
    std::vector<keyed_weights> sets;
    sets.reserve(keyed_.size());
    for (const auto& [id, set] : keyed_)
      sets.push_back(set);
    s.cached = cached_weight_sets(c->second, sets);
  }
  if (!g.up)
    return s; // no memory: nothing fits, nothing is predicted to free up
  s.total_memory_bytes = g.info.total_memory();
  uint64_t reserved = 0;
  auto compute_of = [&](const placement::task_profile& p) {
    return s.gpu_type < p.compute_s.size() ? p.compute_s[s.gpu_type]
                                           : placement::default_compute_s;
  };
  // Each task's solo compute seconds, wall seconds computed so far and solo
  // seconds done by its progress counter (negative: not counted); the
  // remaining times follow once the GPU's Σu is known.
  struct progress {
    double solo_s;
    double wall_s;
    double done_solo_s;
  };
  std::vector<progress> compute_done;
  double sum_u_gpu = 0;
  for (const auto& r : g.telemetry.running()) {
    auto p = profile_of(r.task_signature(), 0);
    placement::running_task t;
    t.id = r.session();
    t.weights = fnv1a(r.task_signature());
    t.memory_bytes = std::max(r.allocated_bytes(), p.memory_bytes);
    // The server does not report which share of a running load its cache
    // serves: taken as crossing the network (the conservative side).
    t.occ = p.occ;
    double done = 0;
    double done_solo = -1;
    if (r.first_launch_time_ns() == 0) {
      auto left = p.weight_bytes > r.uploaded_bytes() ? p.weight_bytes - r.uploaded_bytes() : 0;
      // Its bytes come from its client's host, over that host's uplink.
      auto rate = s.links[link_of(r.client_id())].rate_bytes_per_s;
      t.load_remaining_s = g.rtt_s + static_cast<double>(left) / rate;
      if (left > 0) {
        t.uplink_client = uplink_of(r.client_id());
        t.uplink_occupancy = 1;
      }
    } else if (now_ns > r.first_launch_time_ns()) {
      done = seconds(now_ns - r.first_launch_time_ns());
      done_solo = placement::done_solo_from_progress(compute_of(p), r.kernel_launches(),
                                                     p.launches);
    }
    compute_done.push_back({compute_of(p), done, done_solo});
    sum_u_gpu += t.occ.gpu;
    reserved += t.memory_bytes;
    s.running.push_back(t);
  }
  for (const auto& x : g.pending) {
    auto p = profile_of(x.signature, x.weight_bytes);
    placement::running_task t;
    t.id = x.id;
    t.weights = x.weights;
    t.memory_bytes = p.memory_bytes;
    // Its load as predicted when it was placed: the cached share from the
    // cache tier, off the ingress, the rest over the link.
    auto cached = std::min(s.cached_bytes(x.weights), p.weight_bytes);
    t.occ = p.occ;
    t.occ.network = placement::load_net_occupancy(p.occ.network, p.weight_bytes, cached);
    auto link = x.client != placement::no_client ? x.client : unknown_host;
    t.load_remaining_s = g.rtt_s
                         + static_cast<double>(p.weight_bytes - cached)
                             / s.links[link].rate_bytes_per_s
                         + static_cast<double>(cached) / s.cache_fill_rate_bytes_per_s;
    if (cached < p.weight_bytes && p.weight_bytes > 0) {
      t.uplink_client = x.client;
      t.uplink_occupancy = static_cast<double>(p.weight_bytes - cached)
                           / static_cast<double>(p.weight_bytes);
    }
    compute_done.push_back({compute_of(p), 0.0, -1.0});
    sum_u_gpu += t.occ.gpu;
    reserved += t.memory_bytes;
    s.running.push_back(t);
  }
  // Every task computes at the GPU's current α, loading ones counted as
  // they are about to compute. The work done so far comes from the task's
  // progress counter (launches so far of those its runs make) when its
  // profile knows that count, else from the time computed so far, taken
  // to have run at that α too.
  auto alpha = placement::contention(calibration_.gamma(g.info.name(), placement::resource::gpu),
                                     sum_u_gpu);
  for (std::size_t i = 0; i < s.running.size(); ++i) {
    const auto& c = compute_done[i];
    auto done = c.done_solo_s >= 0 ? c.done_solo_s : c.wall_s / alpha;
    s.running[i].remaining_s = s.running[i].load_remaining_s
                               + placement::remaining_compute_s(c.solo_s, done, alpha);
  }
  s.free_memory_bytes = reserved < s.total_memory_bytes ? s.total_memory_bytes - reserved : 0;
  return s;
}

void placement_service::refresh_server(size_t index, uint64_t now_ns) {
  prep_.update_server(static_cast<placement::server_index>(index),
                      make_server(gpus_[index], now_ns));
}

void placement_service::on_session_ended(const std::string& node_id,
                                         const proto::SessionEnded& e) {
  auto sig = e.task_signature();
  const auto& type = e.gpu_name();
  auto server_key = key(node_id, e.gpu_index());
  double rtt = 0.001;
  if (auto i = index_of_.find(server_key); i != index_of_.end())
    rtt = gpus_[i->second].rtt_s;
  auto duration = seconds(e.duration_ns());
  auto load = seconds(std::min(e.load_ns(), e.duration_ns()));
  auto compute = duration - load;
  // Co-runners' occupancy, time-averaged over each phase.
  double others_gpu = 0;
  double others_net = 0;
  for (const auto& c : e.co_runners()) {
    auto p = profile_of(c.task_signature(), 0);
    if (compute > 0)
      others_gpu += p.occ.gpu * seconds(c.compute_overlap_ns()) / compute;
    if (load > 0)
      others_net += p.occ.network * seconds(c.load_overlap_ns()) / load;
  }
  placement::run_record rec;
  rec.gpu_type = type;
  // The task's weights, cached ones included (older servers send only
  // what crossed the network).
  rec.weight_bytes = e.weight_bytes() != 0 ? e.weight_bytes() : e.uploaded_bytes();
  rec.memory_bytes = e.peak_allocated_bytes();
  rec.compute_wall_s = compute;
  rec.launches = e.kernel_launches();
  rec.shared_gpu = others_gpu > 0;
  // GPU occupancy: the fraction of the session the server spent executing
  // it (synchronizing waits included); unmeasured means the whole GPU.
  // Learned from solo runs only: a shared GPU stretches a session's wall
  // time without it executing more, so the fraction would read low.
  rec.occ.gpu = e.busy_ns() > 0 && e.duration_ns() > 0
                  ? std::clamp(static_cast<double>(e.busy_ns()) / e.duration_ns(), 0.05, 1.0)
                  : 1.0;
  if (rec.shared_gpu && profiles_.knows(sig))
    rec.occ.gpu = profile_of(sig, 0).occ.gpu;
  rec.occ.network = 1.0; // a load saturates the server's ingress
  // Σu of each resource over its phase, the run's own occupancy included:
  // what α = contention(γ, Σu) and the γ fit read.
  auto sum_u_gpu = rec.occ.gpu + others_gpu;
  auto sum_u_net = rec.occ.network + others_net;
  // The contention the model predicts for this run under the γ in force,
  // divided out of its wall time, as the simulator does: shared runs teach
  // the solo time too, and every run's is in the model's unit (a task alone
  // above the knee, γ·u > 1, is itself stretched by γ·u).
  rec.alpha_gpu = placement::contention(calibration_.gamma(type, placement::resource::gpu),
                                        sum_u_gpu);
  rec.alpha_modelled = true;
  // γ from contended phases, against the solo times known before this run.
  auto solo = profiles_.solo_compute_s(sig, type);
  if (rec.shared_gpu && solo > 0 && compute > 0)
    calibration_.observe(type, placement::resource::gpu, sum_u_gpu, compute / solo);
  auto uploaded = static_cast<double>(e.uploaded_bytes());
  auto host = learn_uplink(e.client_id());
  if (host == placement::no_client)
    host = unknown_host;
  if (others_net > 0 && e.uploaded_bytes() >= min_rate_sample_bytes && load > 0) {
    auto solo_load = rtt + uploaded / link_rate(server_key, host);
    calibration_.observe(type, placement::resource::network, sum_u_net, load / solo_load);
  } else if (others_net == 0 && e.uploaded_bytes() >= min_rate_sample_bytes && load > rtt) {
    learn_link_rate(server_key, host, uploaded / (load - rtt));
  }
  profiles_.observe(sig, rec);
  refresh_gamma();
  if (e.chunk_keys_sample_size() > 0) {
    auto& l = learned_[{e.tenant(), sig}];
    l.keys.assign(e.chunk_keys_sample().begin(), e.chunk_keys_sample().end());
    l.bytes = e.weight_bytes();
    l.learned = ++learned_count_;
    if (learned_.size() > max_learned_weights)
      learned_.erase(std::min_element(learned_.begin(), learned_.end(),
                                      [](const auto& a, const auto& b) {
                                        return a.second.learned < b.second.learned;
                                      }));
  }
}

placement::task placement_service::make_task(uint64_t id, const std::string& signature,
                                             placement::weight_set_id weights,
                                             uint64_t weight_bytes,
                                             placement::client_index client) const {
  placement::task t;
  t.id = id;
  t.signature = signature;
  t.client = client;
  t.weights = weights;
  t.profile = profile_of(signature, weight_bytes);
  t.weight_bytes = weight_bytes != 0 ? weight_bytes : t.profile.weight_bytes;
  return t;
}

uint64_t placement_service::submit(const proto::PlacementRequest& req,
                                   const std::string& tenant, clock::time_point now) {
  waiting w;
  w.id = next_id_++;
  w.req = req;
  w.tenant = tenant;
  if (req.chunk_keys_size() == 0)
    if (auto l = learned_.find({tenant, req.task_signature()}); l != learned_.end()) {
      for (const auto& k : l->second.keys)
        w.req.add_chunk_keys(k);
      if (w.req.weight_bytes() == 0)
        w.req.set_weight_bytes(l->second.bytes);
    }
  w.weights = weight_set_of(w.req, tenant);
  w.since = now;
  learn_uplink(req.client_id());
  if (w.req.chunk_keys_size() > 0 && keyed_.count(w.weights) == 0) {
    keyed_weights set;
    set.id = w.weights;
    set.tenant = tenant;
    set.bytes = w.req.weight_bytes() != 0 ? w.req.weight_bytes()
                                          : profile_of(req.task_signature(), 0).weight_bytes;
    for (const auto& k : w.req.chunk_keys())
      if (auto key = cache_store::chunk_key::from_binary(k))
        set.keys.push_back(*key);
    keyed_.emplace(set.id, std::move(set));
    // Every server's cached bytes of the new set, as of its last telemetry.
    for (size_t i = 0; i < gpus_.size(); ++i)
      refresh_server(i, gpus_[i].updated_ns);
  }
  queue_.push_back(std::move(w));
  return queue_.back().id;
}

void placement_service::forget_unused_weights() {
  std::set<placement::weight_set_id> used;
  for (const auto& w : queue_)
    used.insert(w.weights);
  for (auto i = keyed_.begin(); i != keyed_.end();)
    i = used.count(i->first) != 0 ? std::next(i) : keyed_.erase(i);
}

proto::PlacementReply placement_service::reply_for(size_t index, uint64_t id,
                                                   const placement::prediction& p,
                                                   double waited_s,
                                                   const std::string& why) const {
  const auto& g = gpus_[index];
  proto::PlacementReply r;
  r.set_ok(true);
  r.set_node_id(g.node_id);
  r.set_gpu_index(g.info.index());
  r.set_data_host(g.data_host);
  r.set_data_port(g.data_port);
  r.set_predicted_seconds(p.completion_s());
  r.set_placement_id(id);
  r.set_queued_seconds(waited_s);
  r.set_explanation(why);
  return r;
}

std::vector<placement_service::placed> placement_service::dispatch(clock::time_point now,
                                                                   uint64_t now_ns) {
  std::vector<placed> out;
  if (queue_.empty())
    return out;
  size_t up = 0;
  size_t draining = 0;
  for (const auto& g : gpus_) {
    up += g.up ? 1 : 0;
    draining += g.draining ? 1 : 0;
  }
  if (up == 0) {
    // Nothing can take a task: say so now instead of holding the client.
    for (const auto& w : queue_) {
      placed x;
      x.id = w.id;
      x.reply.set_ok(false);
      x.reply.set_placement_id(w.id);
      x.reply.set_error(gpus_.empty()
                          ? "no GPU server has registered with the scheduler: start gleamd with "
                            "the gpu_server role on a host with a GPU"
                        : draining > 0
                          ? "no GPU server takes new sessions: every node that is up is "
                            "draining for maintenance (gleam-console -c nodes; an admin "
                            "ends it with 'undrain NODE')"
                          : "no GPU server is up: every registered node with a GPU is down or "
                            "has no usable GPU (see gleam-console -c nodes)");
      out.push_back(std::move(x));
    }
    queue_.clear();
    forget_unused_weights();
    return out;
  }
  std::vector<placement::task> tasks;
  tasks.reserve(queue_.size());
  for (const auto& w : queue_)
    tasks.push_back(make_task(w.id, w.req.task_signature(), w.weights, w.req.weight_bytes(),
                              link_of(w.req.client_id())));
  prep_.set_clock(0, cursor_);
  auto d = placement::place(prep_, tasks, opts_.policy);
  cursor_ = d.next_round_robin_cursor;
  std::vector<bool> done(queue_.size(), false);
  auto max_wait = std::chrono::duration<double>(opts_.max_wait).count();
  for (size_t i = 0; i < queue_.size(); ++i) {
    auto& w = queue_[i];
    auto a = d.assignments[i];
    auto waited = std::chrono::duration<double>(now - w.since).count();
    const auto& snap = prep_.snap();
    if (a.server == placement::no_server && waited >= max_wait) {
      // Waited long enough: the up server with the earliest predicted
      // completion among those that fit now, else the one with most memory.
      auto best = placement::no_server;
      double best_done = infinity;
      uint64_t most_free = 0;
      auto roomiest = placement::no_server;
      for (placement::server_index s = 0; s < snap.servers.size(); ++s) {
        if (!gpus_[s].up)
          continue;
        const auto& tl = prep_.at(s).timeline;
        if (roomiest == placement::no_server || tl.free_memory_bytes() > most_free) {
          roomiest = s;
          most_free = tl.free_memory_bytes();
        }
        if (tl.free_memory_bytes() < tasks[i].profile.memory_bytes)
          continue;
        auto p = prep_.predict(tasks[i], s, 0);
        if (p.completion_s() < best_done) {
          best_done = p.completion_s();
          best = s;
          a.predicted = p;
        }
      }
      if (best == placement::no_server) {
        best = roomiest;
        a.predicted = prep_.predict(tasks[i], best, 0);
      }
      a.server = best;
    }
    if (a.server == placement::no_server) {
      w.awaited = a.awaited != placement::no_server ? server_name(a.awaited) : "";
      w.predicted_start_s = a.predicted.start_s;
      continue;
    }
    auto why = placement::explain(snap, tasks[i], a);
    if (waited >= max_wait && d.assignments[i].server == placement::no_server)
      why += " (placed after waiting " + std::to_string(static_cast<int>(waited))
             + " s, the longest a request waits)";
    placed x;
    x.id = w.id;
    x.reply = reply_for(a.server, w.id, a.predicted, waited, why);
    out.push_back(std::move(x));
    auto& g = gpus_[a.server];
    g.pending.push_back({w.id, w.req.task_signature(), w.weights, tasks[i].weight_bytes, now_ns,
                         uplink_of(w.req.client_id())});
    refresh_server(a.server, now_ns);
    ++placed_total_;
    done[i] = true;
  }
  std::deque<waiting> rest;
  for (size_t i = 0; i < queue_.size(); ++i)
    if (!done[i])
      rest.push_back(std::move(queue_[i]));
  queue_.swap(rest);
  forget_unused_weights();
  return out;
}

proto::PlacementExplanation placement_service::explain(const std::string& task,
                                                       uint64_t weight_bytes,
                                                       uint64_t) const {
  proto::PlacementExplanation out;
  out.set_task(task);
  std::string signature = task;
  auto weights = fnv1a(task);
  uint64_t id = 0;
  placement::client_index client = 0;
  for (const auto& w : queue_) {
    if (std::to_string(w.id) == task) {
      client = link_of(w.req.client_id());
      signature = w.req.task_signature();
      weights = w.weights;
      weight_bytes = w.req.weight_bytes();
      id = w.id;
      out.set_tenant(w.tenant);
    }
  }
  auto t = make_task(id, signature, weights, weight_bytes, client);
  out.set_known(t.profile.samples > 0);
  out.set_samples(t.profile.samples);
  out.set_weight_bytes(t.weight_bytes);
  out.set_memory_bytes(t.profile.memory_bytes);
  out.set_gpu_occupancy(t.profile.occ.gpu);
  out.set_net_occupancy(t.profile.occ.network);
  out.set_launches(t.profile.launches);
  for (size_t i = 0; i < gpu_types_.size(); ++i) {
    out.add_gpu_types(gpu_types_[i]);
    out.add_compute_s(t.profile.compute_s[i]);
  }
  const auto& snap = prep_.snap();
  if (snap.servers.empty()) {
    out.set_summary("no GPU server has registered: nothing to place " + signature + " on");
    return out;
  }
  for (placement::server_index s = 0; s < snap.servers.size(); ++s) {
    const auto& tl = prep_.at(s).timeline;
    auto start = tl.earliest_fit(t.profile.memory_bytes);
    auto* sp = out.add_servers();
    sp->set_server(snap.servers[s].id);
    sp->set_gpu_type(gpu_types_[snap.servers[s].gpu_type]);
    sp->set_fits_now(start == 0);
    if (!std::isfinite(start)) {
      sp->set_start_s(-1);
      continue;
    }
    auto p = prep_.predict(t, s, start);
    sp->set_start_s(p.start_s);
    sp->set_load_s(p.load_s);
    sp->set_compute_s(p.compute_s);
    sp->set_alpha_gpu(p.alpha_gpu);
    sp->set_alpha_net(p.alpha_net);
    sp->set_completion_s(p.completion_s());
    sp->set_cached_bytes(p.cached_bytes);
  }
  auto d = placement::place(prep_, {t}, opts_.policy);
  out.set_summary(placement::explain(snap, t, d.assignments[0]));
  return out;
}

proto::GammaTable placement_service::gamma() const {
  proto::GammaTable out;
  out.set_default_gamma(placement::contention_calibration::default_gamma);
  for (const auto& type : gpu_types_) {
    for (auto r : {placement::resource::gpu, placement::resource::network}) {
      auto* e = out.add_entries();
      e->set_gpu_type(type);
      e->set_resource(r == placement::resource::gpu ? "gpu" : "network");
      auto est = calibration_.estimate(type, r);
      e->set_converged(static_cast<bool>(est));
      if (est) {
        e->set_gamma(est->gamma);
        e->set_samples(est->samples);
        e->set_active_samples(est->active_samples);
        e->set_rms_residual(est->rms_residual);
      } else {
        e->set_gamma(placement::contention_calibration::default_gamma);
      }
    }
  }
  return out;
}

proto::PlacementQueue placement_service::queue(clock::time_point now) const {
  proto::PlacementQueue out;
  for (const auto& w : queue_) {
    auto* q = out.add_tasks();
    q->set_placement_id(w.id);
    q->set_client_id(w.req.client_id());
    q->set_task_signature(w.req.task_signature());
    q->set_waited_s(std::chrono::duration<double>(now - w.since).count());
    q->set_awaited_server(w.awaited);
    q->set_predicted_start_s(w.predicted_start_s);
    q->set_tenant(w.tenant);
  }
  out.set_placed_total(placed_total_);
  uint64_t pending = 0;
  for (const auto& g : gpus_)
    pending += g.pending.size();
  out.set_pending_sessions(pending);
  return out;
}

} // namespace gleam::actors
