// gleam-console: joins a Gleam cluster through its scheduler and inspects it.
//
//   gleam-console --scheduler HOST:PORT            interactive
//   gleam-console --scheduler HOST:PORT -c nodes   one command, for scripts
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>

#include <caf/all.hpp>
#include <caf/io/all.hpp>

#include "actors/network.hpp"
#include "actors/type_registry.hpp"
#include "config/client_config.hpp"
#include "config/config_file.hpp"
#include "config/error.hpp"
#include "tools/common/shutdown.hpp"
#include "tools/gleam-console/console.hpp"

using namespace gleam;

namespace {

const char* usage =
  "usage: gleam-console [--scheduler HOST:PORT] [--token TOKEN] [-c COMMAND]\n"
  "  Joins the Gleam cluster whose scheduler listens at HOST:PORT (default\n"
  "  127.0.0.1:4750) and runs COMMAND, or reads commands from stdin.\n"
  "  --token (or GLEAM_ADMIN_TOKEN): the nodes' [node] admin-token, which\n"
  "  drain, undrain, cache ls and cache evict need where it is set.\n"
  "  Type 'help' for the commands. A TLS cluster: set GLEAM_TLS=on and\n"
  "  GLEAM_TLS_CERT, GLEAM_TLS_KEY, GLEAM_TLS_CA as for clients.\n";

} // namespace

int main(int argc, char** argv) {
  std::string endpoint = "127.0.0.1:4750";
  std::string command;
  const char* env_token = std::getenv("GLEAM_ADMIN_TOKEN");
  std::string token = env_token != nullptr ? env_token : "";
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::fputs(usage, stdout);
      return 0;
    }
    if ((arg == "--scheduler" || arg == "-s") && i + 1 < argc) {
      endpoint = argv[++i];
    } else if (arg.rfind("--scheduler=", 0) == 0) {
      endpoint = arg.substr(12);
    } else if (arg == "--token" && i + 1 < argc) {
      token = argv[++i];
    } else if (arg.rfind("--token=", 0) == 0) {
      token = arg.substr(8);
    } else if (arg == "-c" && i + 1 < argc) {
      command = argv[++i];
    } else {
      std::fprintf(stderr, "gleam-console: unknown argument '%s'\n%s", arg.c_str(), usage);
      return 2;
    }
  }
  auto ep = config::parse_endpoint(endpoint, "--scheduler");
  if (!ep) {
    std::fprintf(stderr, "gleam-console: %s\n", config::describe(ep.error()).c_str());
    return 2;
  }
  // TLS settings from the client variables (GLEAM_TLS*), validated alike.
  auto client = config::parse_client_config(
    "", "", [](const char* name) -> const char* { return std::getenv(name); });
  if (!client) {
    std::fprintf(stderr, "gleam-console: %s\n", config::describe(client.error()).c_str());
    return 2;
  }
  caf::actor_system_config sys_cfg;
  actors::add_message_types(sys_cfg);
  actors::load_network(sys_cfg, client->tls);
  sys_cfg.set("scheduler.max-threads", size_t{1});
  sys_cfg.set("logger.file-verbosity", caf::atom("quiet"));
  sys_cfg.set("logger.console-verbosity", caf::atom("quiet"));
  int rc = 0;
  {
    caf::actor_system sys{sys_cfg};
    {
      tools::console console{sys, ep->first, ep->second, client->tls.enabled, token};
      if (auto err = console.connect()) {
        std::fprintf(stderr, "gleam-console: %s\n", config::describe(err).c_str());
        rc = 1;
      } else if (!command.empty()) {
        rc = console.run(command, std::cout) ? 0 : 1;
      } else {
        bool tty = isatty(STDIN_FILENO) != 0;
        std::string line;
        while (true) {
          if (tty)
            std::cout << "gleam> " << std::flush;
          if (!std::getline(std::cin, line))
            break;
          if (line == "quit" || line == "exit")
            break;
          if (!line.empty())
            console.run(line, std::cout);
        }
      }
    }
    tools::shutdown_watchdog watchdog{std::chrono::milliseconds{1900}};
  }
  return rc;
}
