// interpose_runtime_fake_server PORT: a gleam node on loopback whose one GPU
// server opens sessions with a fake device and answers op batches with
// success but never the batch whose first op is a MemAlloc of 4242 bytes
// (left pending, as if the GPU were busy). Prints "listening" once
// published. The lost-server test SIGKILLs it while that batch is pending.
// With a TOKEN argument, OpenSession is checked like gpu_server checks it.
// With GLEAM_TLS_CERT, GLEAM_TLS_KEY and GLEAM_TLS_CA set it listens with TLS.
#include <cstdio>
#include <cstdlib>

#include <caf/all.hpp>
#include <caf/io/all.hpp>

#include "actors/gpu_server.hpp"
#include "actors/interfaces.hpp"
#include "actors/network.hpp"
#include "actors/type_registry.hpp"

namespace proto = gleam::proto;
namespace actors = gleam::actors;

namespace {

actors::gpu_server_actor::behavior_type fake_gpu(actors::gpu_server_actor::pointer self,
                                                 std::string token) {
  return {
    [token](actors::open_atom, const actors::pb<proto::OpenSession>& req)
      -> caf::result<actors::pb<proto::SessionOpened>> {
      if (auto refused = actors::check_auth_token(token, req.value))
        return refused;
      actors::pb<proto::SessionOpened> r;
      r->set_session(1);
      r->set_driver_version(13000);
      r->set_protocol_version(1);
      auto* d = r->add_devices();
      d->set_name("Fake GPU");
      d->set_total_memory(uint64_t{1} << 30);
      return r;
    },
    [self](const actors::pb<proto::OpBatch>& batch) -> caf::result<actors::pb<proto::BatchReply>> {
      if (batch->ops_size() > 0 && batch->ops(0).has_mem_alloc()
          && batch->ops(0).mem_alloc().size() == 4242)
        return self->make_response_promise<actors::pb<proto::BatchReply>>(); // never delivered
      actors::pb<proto::BatchReply> r;
      for (const auto& op : batch->ops()) {
        auto* res = r->add_results();
        res->set_seq(op.seq());
        if (op.has_mem_alloc())
          res->set_dptr(0x10000);
      }
      return r;
    },
    [](actors::close_atom, uint64_t) { return true; },
    [](actors::status_atom) { return actors::pb<proto::NodeStatus>{}; },
    [](actors::tick_atom, uint64_t) {},
  };
}

actors::node_actor::behavior_type fake_node(actors::node_actor::pointer,
                                            actors::gpu_server_actor gpu) {
  return {
    [](actors::get_scheduler_atom) -> caf::result<actors::scheduler_actor> {
      return caf::make_error(caf::sec::unexpected_message);
    },
    [gpu](actors::get_gpu_atom, uint32_t) { return gpu; },
    // The fake node has no weight cache.
    [](actors::get_shard_atom) -> caf::result<actors::cache_shard_actor> {
      return caf::make_error(caf::sec::unexpected_message);
    },
    [](actors::status_atom) { return actors::pb<proto::NodeStatus>{}; },
    [](actors::tick_atom) {},
  };
}

} // namespace

int main(int argc, char** argv) {
  if (argc != 2 && argc != 3) {
    std::fprintf(stderr, "usage: %s PORT [TOKEN]\n", argv[0]);
    return 2;
  }
  auto port = static_cast<uint16_t>(std::atoi(argv[1]));
  caf::actor_system_config cfg;
  actors::add_message_types(cfg);
  gleam::config::tls_config tls;
  if (const char* cert = std::getenv("GLEAM_TLS_CERT")) {
    tls.enabled = true;
    tls.certificate = cert;
    tls.key = std::getenv("GLEAM_TLS_KEY") ? std::getenv("GLEAM_TLS_KEY") : "";
    tls.ca_file = std::getenv("GLEAM_TLS_CA") ? std::getenv("GLEAM_TLS_CA") : "";
  }
  actors::load_network(cfg, tls);
  cfg.set("middleman.heartbeat-interval", caf::timespan{std::chrono::milliseconds{500}});
  cfg.set("logger.console-verbosity", caf::atom("quiet"));
  caf::actor_system sys{cfg};
  auto gpu = sys.spawn(fake_gpu, std::string{argc == 3 ? argv[2] : ""});
  auto node = sys.spawn(fake_node, gpu);
  auto published = actors::publish(sys, node, port, "127.0.0.1", tls.enabled);
  if (!published) {
    std::fprintf(stderr, "publish failed: %s\n", sys.render(published.error()).c_str());
    return 1;
  }
  std::printf("listening\n");
  std::fflush(stdout);
  for (;;)
    std::this_thread::sleep_for(std::chrono::seconds{1});
}
