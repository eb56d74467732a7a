#include "executor/op_table.hpp"

#include <cstdio>
#include <cstdlib>
#include <vector>

#include <fmt/format.h>
#include <google/protobuf/descriptor.h>

#include "executor/capture_judge.hpp"

namespace gleam::executor {

namespace {

struct named_family {
  const char* name;
  const op_family* family;
};

#define GLEAM_EXECUTOR_NAME_OP_FAMILY(name) named_family{#name, &name},
const named_family all_families[] = {GLEAM_EXECUTOR_OP_FAMILIES(GLEAM_EXECUTOR_NAME_OP_FAMILY)};
#undef GLEAM_EXECUTOR_NAME_OP_FAMILY

/// Stops the process: the op table contradicts the op schema.
[[noreturn]] void broken_table(const std::string& what) {
  fmt::print(stderr, "gleam executor: {}; fix executor/op_table.hpp\n", what);
  std::abort();
}

/// The handler of each op kind, indexed by the kind's field number (null
/// where no op has that number). Every kind of the schema's `kind` oneof
/// has exactly one handler.
std::vector<op_handler> build_table() {
  std::vector<op_handler> table;
  for (const auto& f : all_families) {
    for (size_t i = 0; i < f.family->size; ++i) {
      const auto& route = f.family->routes[i];
      auto kind = static_cast<size_t>(route.kind);
      if (kind == 0 || route.run == nullptr)
        broken_table(fmt::format("{} has a route without a kind or a handler", f.name));
      if (kind >= table.size())
        table.resize(kind + 1, nullptr);
      if (table[kind] != nullptr)
        broken_table(fmt::format("op kind {} has a second handler in {}", kind, f.name));
      table[kind] = route.run;
    }
  }
  const auto* kinds = proto::Op::descriptor()->FindOneofByName("kind");
  for (int i = 0; i < kinds->field_count(); ++i) {
    const auto* field = kinds->field(i);
    auto kind = static_cast<size_t>(field->number());
    if (kind >= table.size() || table[kind] == nullptr)
      broken_table(fmt::format("op kind {} ({}) has no handler", kind, field->name()));
  }
  return table;
}

/// The handler of `kind`, or null for a kind without one (KIND_NOT_SET).
op_handler find_handler(proto::Op::KindCase kind) {
  static const std::vector<op_handler> table = build_table();
  auto i = static_cast<size_t>(kind);
  return i < table.size() ? table[i] : nullptr;
}

void dispatch(op_context& cx, const proto::Op& op) {
  if (auto run = find_handler(op.kind_case()); run != nullptr)
    return run(cx, op);
  cx.fail(CUDA_ERROR_NOT_SUPPORTED,
          fmt::format("op seq {} has no kind this server knows: update the "
                      "gpu_server to the client's version",
                      op.seq()));
}

} // namespace

void run_op(op_context& cx, const proto::Op& op) {
  if (op.capture_checked() && cx.judge != nullptr) {
    // The app's thread is bound by the capture rules: the driver judges
    // this op as it would have judged the app's call.
    cx.judge->run(cx.s, op.prohibited_by(), [&] { dispatch(cx, op); });
  } else {
    dispatch(cx, op);
  }
}

} // namespace gleam::executor
