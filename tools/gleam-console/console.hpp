#pragma once

#include <cstdint>
#include <ostream>
#include <string>

#include <caf/actor_system.hpp>
#include <caf/error.hpp>
#include <caf/scoped_actor.hpp>

#include "actors/interfaces.hpp"

namespace gleam::tools {

/// The console's commands over one connection to a cluster's scheduler
/// node. Blocking (a scoped actor waits for each answer, bounded by a
/// timeout). Not thread-safe.
class console {
public:
  /// `tls`: connect through the OpenSSL manager (the system must have been
  /// configured with actors::load_network and TLS on). `admin_token` goes
  /// with the admin commands (drain, undrain, cache ls, cache evict).
  console(caf::actor_system& sys, std::string host, uint16_t port, bool tls = false,
          std::string admin_token = {});

  /// Connects to the scheduler node; an error says what to check.
  [[nodiscard]] caf::error connect();

  /// Runs one command line, printing its answer to `out`; false on failure
  /// (the reason is printed too).
  bool run(const std::string& line, std::ostream& out);

private:
  bool nodes(std::ostream& out);
  bool gpus(std::ostream& out);
  bool sessions(std::ostream& out);
  bool gamma(std::ostream& out);
  bool queue(std::ostream& out);
  bool explain(const std::string& task, std::ostream& out);
  /// `cache stats|ls [N]|evict KEY...|evict --all` on every node with a cache.
  bool cache(std::istream& words, std::ostream& out);
  /// `drain NODE [DEADLINE]` (on) or `undrain NODE` at the scheduler.
  bool drain(bool on, std::istream& words, std::ostream& out);
  /// `session kill NODE ID`: ends the session at once (its worker process
  /// under isolation = process), at the node; needs the admin token.
  bool session(std::istream& words, std::ostream& out);
  /// Runs one cache op on the cache_shard of node `n`.
  caf::expected<proto::OpResult> shard_op(const proto::NodeStatus& n, proto::Op op);
  caf::expected<proto::ClusterView> view();

  caf::actor_system& sys_;
  std::string host_;
  uint16_t port_;
  bool tls_;
  std::string admin_token_;
  caf::scoped_actor self_;
  actors::scheduler_actor scheduler_;
};

} // namespace gleam::tools
