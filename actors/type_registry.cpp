#include "actors/type_registry.hpp"

#include "actors/interfaces.hpp"

namespace gleam::actors {

void add_message_types(caf::actor_system_config& cfg) {
  cfg.add_message_type<pb<proto::NodeRegister>>("gleam.NodeRegister");
  cfg.add_message_type<pb<proto::NodeRegistered>>("gleam.NodeRegistered");
  cfg.add_message_type<pb<proto::Heartbeat>>("gleam.Heartbeat");
  cfg.add_message_type<pb<proto::HeartbeatAck>>("gleam.HeartbeatAck");
  cfg.add_message_type<pb<proto::PlacementRequest>>("gleam.PlacementRequest");
  cfg.add_message_type<pb<proto::PlacementReply>>("gleam.PlacementReply");
  cfg.add_message_type<pb<proto::ClusterView>>("gleam.ClusterView");
  cfg.add_message_type<pb<proto::PlacementExplain>>("gleam.PlacementExplain");
  cfg.add_message_type<pb<proto::PlacementExplanation>>("gleam.PlacementExplanation");
  cfg.add_message_type<pb<proto::GammaTable>>("gleam.GammaTable");
  cfg.add_message_type<pb<proto::PlacementQueue>>("gleam.PlacementQueue");
  cfg.add_message_type<pb<proto::NodeStatus>>("gleam.NodeStatus");
  cfg.add_message_type<pb<proto::DrainRequest>>("gleam.DrainRequest");
  cfg.add_message_type<pb<proto::DrainState>>("gleam.DrainState");
  cfg.add_message_type<pb<proto::OpenSession>>("gleam.OpenSession");
  cfg.add_message_type<pb<proto::SessionOpened>>("gleam.SessionOpened");
  cfg.add_message_type<pb<proto::CloseSession>>("gleam.CloseSession");
  cfg.add_message_type<pb<proto::OpBatch>>("gleam.OpBatch");
  cfg.add_message_type<pb<proto::BatchReply>>("gleam.BatchReply");
  cfg.add_message_type<gpu_server_actor>("gleam.gpu_server_actor");
  cfg.add_message_type<scheduler_actor>("gleam.scheduler_actor");
  cfg.add_message_type<node_actor>("gleam.node_actor");
  cfg.add_message_type<cache_shard_actor>("gleam.cache_shard_actor");
}

} // namespace gleam::actors
