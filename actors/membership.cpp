#include "actors/membership.hpp"

#include <algorithm>
#include <tuple>

namespace gleam::actors {

membership::membership(std::chrono::milliseconds down_after) : down_after_(down_after) {
}

std::string membership::refuse_register(const proto::NodeRegister& reg,
                                        clock::time_point now, bool no_replays) const {
  auto i = nodes_.find(reg.node_id());
  if (i == nodes_.end())
    return {};
  const auto& known = i->second.reg;
  if (no_replays && reg.start_time_ns() < known.start_time_ns())
    return "node '" + reg.node_id() + "' registered with a newer start already: this "
           "registration is older (a replay, or a clock that went back)";
  bool live = i->second.up && now - i->second.last_seen <= down_after_;
  if (live && (reg.data_host() != known.data_host() || reg.data_port() != known.data_port()))
    return "node id '" + reg.node_id() + "' is up at " + known.data_host() + ":"
           + std::to_string(known.data_port()) + "; a node at " + reg.data_host() + ":"
           + std::to_string(reg.data_port())
           + " cannot take it while it answers (give each node its own [node] id)";
  return {};
}

bool membership::fresh_heartbeat(const proto::Heartbeat& hb) const {
  auto i = nodes_.find(hb.node_id());
  return i != nodes_.end() && hb.seq() > i->second.last_seq;
}

void membership::on_register(const proto::NodeRegister& reg, clock::time_point now) {
  auto& st = nodes_[reg.node_id()];
  st.reg = reg;
  st.reg.clear_cluster_proof();
  st.last_seq = 0;
  st.telemetry.Clear();
  st.last_seen = now;
  st.up = true;
}

bool membership::on_heartbeat(const proto::Heartbeat& hb, clock::time_point now) {
  auto i = nodes_.find(hb.node_id());
  if (i == nodes_.end())
    return false;
  i->second.last_seen = now;
  i->second.up = true;
  i->second.last_seq = std::max(i->second.last_seq, hb.seq());
  if (hb.has_telemetry()) {
    i->second.telemetry = hb.telemetry();
    // Ended sessions are events for the scheduler, not state to show.
    i->second.telemetry.clear_ended_sessions();
  }
  return true;
}

bool membership::set_drain(const std::string& node_id, const proto::DrainState& state) {
  auto i = nodes_.find(node_id);
  if (i == nodes_.end())
    return false;
  i->second.drain = state;
  if (!state.draining())
    i->second.drain.Clear();
  return true;
}

proto::DrainState membership::drain_of(const std::string& node_id) const {
  auto i = nodes_.find(node_id);
  return i != nodes_.end() ? i->second.drain : proto::DrainState{};
}

void membership::on_rtt(const std::string& node_id, std::chrono::microseconds rtt) {
  if (auto i = nodes_.find(node_id); i != nodes_.end())
    i->second.rtt_ms = static_cast<double>(rtt.count()) / 1000.0;
}

std::vector<std::string> membership::sweep(clock::time_point now) {
  std::vector<std::string> went_down;
  for (auto& [id, st] : nodes_) {
    if (st.up && now - st.last_seen > down_after_) {
      st.up = false;
      went_down.push_back(id);
    }
  }
  return went_down;
}

namespace {

void fill_status(const std::string& id, const proto::NodeRegister& reg,
                 const proto::Telemetry& telemetry, double rtt_ms, bool up,
                 const proto::DrainState& drain, std::chrono::milliseconds age,
                 proto::NodeStatus* n) {
  n->set_node_id(id);
  n->set_hostname(reg.hostname());
  for (auto role : reg.roles())
    n->add_roles(static_cast<proto::Role>(role));
  *n->mutable_gpus() = reg.gpus();
  n->set_up(up);
  n->set_last_heartbeat_age_ms(static_cast<uint64_t>(age.count()));
  n->set_rtt_ms(rtt_ms);
  *n->mutable_telemetry() = telemetry;
  n->set_data_host(reg.data_host());
  n->set_data_port(reg.data_port());
  if (drain.draining())
    *n->mutable_drain() = drain;
}

} // namespace

proto::ClusterView membership::view(clock::time_point now) const {
  proto::ClusterView result;
  for (const auto& [id, st] : nodes_)
    fill_status(id, st.reg, st.telemetry, st.rtt_ms, st.up, st.drain,
                std::chrono::duration_cast<std::chrono::milliseconds>(now - st.last_seen),
                result.add_nodes());
  return result;
}

bool membership::status_of(const std::string& node_id, clock::time_point now,
                           proto::NodeStatus& out) const {
  auto i = nodes_.find(node_id);
  if (i == nodes_.end())
    return false;
  const auto& st = i->second;
  out.Clear();
  fill_status(node_id, st.reg, st.telemetry, st.rtt_ms, st.up, st.drain,
              std::chrono::duration_cast<std::chrono::milliseconds>(now - st.last_seen), &out);
  return true;
}

std::vector<std::string> membership::node_ids() const {
  std::vector<std::string> out;
  for (const auto& [id, st] : nodes_)
    out.push_back(id);
  return out;
}

proto::PlacementReply membership::place(const proto::PlacementRequest&) const {
  proto::PlacementReply reply;
  const node_state* best_node = nullptr;
  uint32_t best_gpu = 0;
  std::tuple<uint32_t, int64_t, std::string> best_key{};
  size_t gpus_seen = 0;
  for (const auto& [id, st] : nodes_) {
    if (!st.up || st.drain.draining())
      continue;
    for (const auto& gpu : st.reg.gpus()) {
      ++gpus_seen;
      uint32_t sessions = 0;
      uint64_t used = 0;
      for (const auto& t : st.telemetry.gpus())
        if (t.index() == gpu.index()) {
          sessions = t.sessions();
          used = t.used_memory();
        }
      int64_t free_mem = static_cast<int64_t>(gpu.total_memory()) - static_cast<int64_t>(used);
      std::tuple<uint32_t, int64_t, std::string> key{sessions, -free_mem, id};
      if (best_node == nullptr || key < best_key) {
        best_node = &st;
        best_gpu = gpu.index();
        best_key = key;
      }
    }
  }
  if (best_node == nullptr) {
    reply.set_ok(false);
    reply.set_error(gpus_seen == 0 && nodes_.empty()
                      ? "no GPU server has registered with the scheduler: start gleamd with "
                        "the gpu_server role on a host with a GPU"
                      : "no GPU server is up: every registered node with a GPU is down, "
                        "draining for maintenance or has no usable GPU (see gleam-console -c "
                        "nodes)");
    return reply;
  }
  reply.set_ok(true);
  reply.set_node_id(best_node->reg.node_id());
  reply.set_gpu_index(best_gpu);
  reply.set_data_host(best_node->reg.data_host());
  reply.set_data_port(best_node->reg.data_port());
  return reply;
}

size_t membership::up_count() const {
  size_t n = 0;
  for (const auto& [id, st] : nodes_)
    n += st.up ? 1 : 0;
  return n;
}

} // namespace gleam::actors
