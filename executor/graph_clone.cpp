#include "executor/graph_clone.hpp"

#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "executor/op_table.hpp"

namespace gleam::executor {

namespace {

void fail(proto::OpResult& r, CUresult rc, std::string detail) {
  r.set_status(static_cast<int32_t>(rc));
  r.set_error(std::move(detail));
}

} // namespace

void graph_clone(driver_api& api, session& s, const proto::GraphClone& op, proto::OpResult& r) {
  auto original = s.graphs.find(op.original());
  if (original == s.graphs.end() || original->second == nullptr) {
    fail(r, CUDA_ERROR_INVALID_VALUE,
         fmt::format("graph handle {} is not a graph of this session", op.original()));
    return;
  }
  if (op.graph() <= stream_handle::per_thread || s.graphs.count(op.graph()) != 0) {
    fail(r, CUDA_ERROR_INVALID_VALUE,
         fmt::format("graph handle {} is reserved or already in use in this session",
                     op.graph()));
    return;
  }
  if (op.original_nodes_size() != op.nodes_size()) {
    fail(r, CUDA_ERROR_INVALID_VALUE,
         fmt::format("GraphClone names {} original nodes but {} copies",
                     op.original_nodes_size(), op.nodes_size()));
    return;
  }
  std::vector<CUgraphNode> originals;
  for (int i = 0; i < op.nodes_size(); ++i) {
    auto n = s.nodes.find(op.original_nodes(i));
    if (n == s.nodes.end() || n->second.first != op.original()) {
      fail(r, CUDA_ERROR_INVALID_VALUE,
           fmt::format("graph node handle {} is not a node of graph {}", op.original_nodes(i),
                       op.original()));
      return;
    }
    if (op.nodes(i) <= stream_handle::per_thread || s.nodes.count(op.nodes(i)) != 0) {
      fail(r, CUDA_ERROR_INVALID_VALUE,
           fmt::format("graph node handle {} is reserved or already in use", op.nodes(i)));
      return;
    }
    originals.push_back(n->second.second);
  }
  CUgraph clone = nullptr;
  if (auto rc = api.cuGraphClone(&clone, original->second); rc != CUDA_SUCCESS) {
    fail(r, rc, fmt::format("cuGraphClone failed: {}", api.describe(rc)));
    return;
  }
  std::vector<CUgraphNode> copies(originals.size());
  for (size_t i = 0; i < originals.size(); ++i)
    if (auto rc = api.cuGraphNodeFindInClone(&copies[i], originals[i], clone);
        rc != CUDA_SUCCESS) {
      static_cast<void>(api.cuGraphDestroy(clone));
      fail(r, rc, fmt::format("cuGraphNodeFindInClone failed: {}", api.describe(rc)));
      return;
    }
  s.graphs[op.graph()] = clone;
  for (size_t i = 0; i < copies.size(); ++i)
    s.nodes[op.nodes(static_cast<int>(i))] = {op.graph(), copies[i]};
}

// --- registration (executor/op_table.hpp) -----------------------------------

namespace {

void run_graph_clone_op(op_context& cx, const proto::Op& op) {
  graph_clone(cx.api, cx.s, op.graph_clone(), cx.r);
}

constexpr op_route graph_clone_routes[] = {
  {proto::Op::KindCase::kGraphClone, run_graph_clone_op},
};

} // namespace

const op_family graph_clone_family = make_family(graph_clone_routes);

} // namespace gleam::executor
