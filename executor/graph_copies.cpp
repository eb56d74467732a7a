#include "executor/graph_copies.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

#include <fmt/format.h>

#include "executor/capture_judge.hpp"
#include "executor/op_result.hpp"
#include "executor/op_table.hpp"
#include "executor/session_streams.hpp"

namespace gleam::executor {

namespace {

/// Bytes one host_copy request moves at most (a message's bound).
constexpr uint64_t copy_piece = uint64_t{1} << 20;

/// Packed bytes of a copy's host end; 0 when the product overflows.
uint64_t packed_size(const proto::MemcpyNodeParams& c) {
  uint64_t rows = 0, bytes = 0;
  auto height = std::max<uint64_t>(c.height(), 1);
  auto depth = std::max<uint64_t>(c.depth(), 1);
  if (__builtin_mul_overflow(height, depth, &rows)
      || __builtin_mul_overflow(rows, c.width(), &bytes))
    return 0;
  return bytes;
}

/// The host function of a copy's host node: moves the staging buffer's
/// bytes to or from the client, a piece at a time.
void CUDA_CB run_host_copy(void* data) {
  auto* t = static_cast<host_copy_target*>(data);
  for (uint64_t off = 0; off < t->size; off += copy_piece) {
    auto n = std::min(copy_piece, t->size - off);
    if (t->to_device) {
      std::string bytes;
      if (!t->port->copy(t->session, t->copy, off, {}, n, &bytes))
        return; // logged by the port; the device gets what staging holds
      std::memcpy(t->staging + off, bytes.data(), n);
    } else if (!t->port->copy(t->session, t->copy, off, std::string(t->staging + off, n), 0,
                              nullptr)) {
      return;
    }
  }
}

class copy_runner {
public:
  copy_runner(driver_api& api, session& s, proto::OpResult& r) : api_(api), s_(s), r_(r) {
  }

  void run(const proto::Op& op) {
    using k = proto::Op::KindCase;
    switch (op.kind_case()) {
      case k::kGraphAddMemcpyNode:
        return add(op.graph_add_memcpy_node());
      case k::kGraphMemcpyNodeSetParams:
        return set(op.graph_memcpy_node_set_params());
      case k::kGraphExecMemcpyNodeSetParams:
        return exec_set(op.graph_exec_memcpy_node_set_params());
      case k::kStreamHostCopy:
        return stream_copy(op.stream_host_copy());
      case k::kGraphMemsetNodeSetParams: {
        CUgraphNode n = nullptr;
        CUDA_MEMSET_NODE_PARAMS p;
        const auto& m = op.graph_memset_node_set_params();
        if (lookup_node(m.node(), n) && memset_node_params(s_, m.memset(), p, r_))
          check(api_.cuGraphMemsetNodeSetParams(n, &p), "cuGraphMemsetNodeSetParams");
        return;
      }
      case k::kGraphExecMemsetNodeSetParams: {
        CUgraphExec e = nullptr;
        CUgraphNode n = nullptr;
        CUDA_MEMSET_NODE_PARAMS p;
        CUcontext ctx = nullptr;
        const auto& m = op.graph_exec_memset_node_set_params();
        if (lookup_exec(m.exec(), e) && lookup_node(m.node(), n)
            && memset_node_params(s_, m.memset(), p, r_)
            && check(api_.cuCtxGetCurrent(&ctx), "cuCtxGetCurrent"))
          check(api_.cuGraphExecMemsetNodeSetParams(e, n, &p, ctx),
                "cuGraphExecMemsetNodeSetParams");
        return;
      }
      default:
        fail_op(r_, CUDA_ERROR_NOT_SUPPORTED, "not a graph copy op");
    }
  }

private:
  bool check(CUresult rc, const char* what) {
    return check_op(r_, api_, rc, what);
  }

  bool invalid(std::string detail) {
    fail_op(r_, CUDA_ERROR_INVALID_VALUE, std::move(detail));
    return false;
  }

  bool lookup_node(uint64_t handle, CUgraphNode& out) {
    auto i = s_.nodes.find(handle);
    if (i == s_.nodes.end())
      return invalid(fmt::format("graph node handle {} is not a node of this session", handle));
    out = i->second.second;
    return true;
  }

  bool lookup_exec(uint64_t handle, CUgraphExec& out) {
    auto i = s_.execs.find(handle);
    if (i == s_.execs.end())
      return invalid(fmt::format("graph exec handle {} is not an executable graph of this "
                                 "session (never instantiated, or destroyed)",
                                 handle));
    out = i->second;
    return true;
  }

  /// The device end at `ptr` (rows of c.width() bytes `pitch` apart,
  /// `rows` rows a slice) inside the session's memory.
  bool check_device(uint64_t ptr, uint64_t pitch, uint64_t rows, const proto::MemcpyNodeParams& c,
                    const char* what) {
    auto height = std::max<uint64_t>(c.height(), 1);
    auto depth = std::max<uint64_t>(c.depth(), 1);
    uint64_t slice = 0, last_slice = 0, last_row = 0, span = 0;
    if (c.width() > pitch || (depth > 1 && rows < height))
      return invalid(fmt::format("memcpy node {}: width {} bytes over pitch {}, or {} rows "
                                 "over {} rows a slice",
                                 what, c.width(), pitch, height, rows));
    if (__builtin_mul_overflow(pitch, rows, &slice)
        || __builtin_mul_overflow(slice, depth - 1, &last_slice)
        || __builtin_mul_overflow(pitch, height - 1, &last_row)
        || __builtin_add_overflow(last_slice, last_row, &span)
        || __builtin_add_overflow(span, c.width(), &span))
      return invalid(fmt::format("memcpy node {}: the extent overflows 64 bits", what));
    if (!s_.memory.contains(ptr, span))
      return invalid(fmt::format("memcpy node {}: address {:#x} + {} bytes is outside this "
                                 "session's allocations",
                                 what, ptr, span));
    return true;
  }

  /// The driver's copy for `c`, its host end (if any) at `staging`.
  bool params(const proto::MemcpyNodeParams& c, char* staging, CUDA_MEMCPY3D& p) {
    if (c.width() == 0 || packed_size(c) == 0)
      return invalid("memcpy node of 0 bytes (or an extent overflowing 64 bits)");
    bool device_src = c.host_copy() == 0 || !c.to_device();
    bool device_dst = c.host_copy() == 0 || c.to_device();
    auto src_rows = std::max<uint64_t>(c.src_height(), std::max<uint64_t>(c.height(), 1));
    auto dst_rows = std::max<uint64_t>(c.dst_height(), std::max<uint64_t>(c.height(), 1));
    if ((device_src && !check_device(c.src(), c.src_pitch(), src_rows, c, "source"))
        || (device_dst && !check_device(c.dst(), c.dst_pitch(), dst_rows, c, "destination")))
      return false;
    std::memset(&p, 0, sizeof(p));
    // One end: device memory as given, or the staging buffer, packed.
    auto end = [&](bool device, uint64_t ptr, uint64_t pitch, uint64_t rows,
                   CUmemorytype& type, CUdeviceptr& dev, auto& host, size_t& out_pitch,
                   size_t& out_rows) {
      type = device ? CU_MEMORYTYPE_DEVICE : CU_MEMORYTYPE_HOST;
      if (device)
        dev = static_cast<CUdeviceptr>(ptr);
      else
        host = staging;
      out_pitch = device ? pitch : c.width();
      out_rows = device ? rows : std::max<uint64_t>(c.height(), 1);
    };
    end(device_src, c.src(), c.src_pitch(), src_rows, p.srcMemoryType, p.srcDevice, p.srcHost,
        p.srcPitch, p.srcHeight);
    end(device_dst, c.dst(), c.dst_pitch(), dst_rows, p.dstMemoryType, p.dstDevice, p.dstHost,
        p.dstPitch, p.dstHeight);
    p.WidthInBytes = c.width();
    p.Height = std::max<uint64_t>(c.height(), 1);
    p.Depth = std::max<uint64_t>(c.depth(), 1);
    return true;
  }

  /// A new target with a staging buffer for the host end of `c`.
  host_copy_target* target(const proto::MemcpyNodeParams& c) {
    if (s_.back_channel == nullptr) {
      fail_op(r_, CUDA_ERROR_NOT_SUPPORTED,
              "a copy with a host end in the client needs a way back to the client, and "
              "this executor has none (executor::set_host_calls)");
      return nullptr;
    }
    auto size = packed_size(c);
    void* staging = nullptr;
    {
      // The staging buffer is Gleam's, not the app's: its allocation must
      // not count as an unsafe call against the app's capture (a copy from
      // pageable memory is legal in any capture mode locally).
      scoped_capture_mode relaxed{api_, CU_STREAM_CAPTURE_MODE_RELAXED};
      if (!check(api_.cuMemHostAlloc(&staging, size, 0), "cuMemHostAlloc (copy staging)"))
        return nullptr;
    }
    auto& t = s_.host_copies.emplace_back();
    t.port = s_.back_channel;
    t.session = s_.id;
    t.copy = c.host_copy();
    t.staging = static_cast<char*>(staging);
    t.size = size;
    t.to_device = c.to_device();
    return &t;
  }

  static CUDA_HOST_NODE_PARAMS host_params(host_copy_target* t) {
    CUDA_HOST_NODE_PARAMS h;
    std::memset(&h, 0, sizeof(h));
    h.fn = &run_host_copy;
    h.userData = t;
    return h;
  }

  /// A graph of the host node and the memcpy node of a copy with a host
  /// end (owned by the caller); null with the result set.
  CUgraph child(const proto::MemcpyNodeParams& c) {
    auto* t = target(c);
    CUDA_MEMCPY3D p;
    CUcontext ctx = nullptr;
    if (t == nullptr || !params(c, t->staging, p)
        || !check(api_.cuCtxGetCurrent(&ctx), "cuCtxGetCurrent"))
      return nullptr;
    CUgraph g = nullptr;
    if (!check(api_.cuGraphCreate(&g, 0), "cuGraphCreate"))
      return nullptr;
    auto h = host_params(t);
    CUgraphNode host = nullptr, copy = nullptr;
    bool ok = c.to_device()
                ? check(api_.cuGraphAddHostNode(&host, g, nullptr, 0, &h), "cuGraphAddHostNode")
                    && check(api_.cuGraphAddMemcpyNode(&copy, g, &host, 1, &p, ctx),
                             "cuGraphAddMemcpyNode")
                : check(api_.cuGraphAddMemcpyNode(&copy, g, nullptr, 0, &p, ctx),
                        "cuGraphAddMemcpyNode")
                    && check(api_.cuGraphAddHostNode(&host, g, &copy, 1, &h),
                             "cuGraphAddHostNode");
    if (!ok) {
      static_cast<void>(api_.cuGraphDestroy(g));
      return nullptr;
    }
    return g;
  }

  void add(const proto::GraphAddMemcpyNode& op) {
    auto g = s_.graphs.find(op.graph());
    if (g == s_.graphs.end() || g->second == nullptr) {
      invalid(fmt::format("graph handle {} is not a graph of this session", op.graph()));
      return;
    }
    if (s_.nodes.count(op.node()) != 0) {
      invalid(fmt::format("node handle {} is taken", op.node()));
      return;
    }
    std::vector<CUgraphNode> deps;
    for (auto d : op.dependencies()) {
      CUgraphNode n = nullptr;
      if (!lookup_node(d, n))
        return;
      deps.push_back(n);
    }
    CUgraphNode n = nullptr;
    const auto& c = op.copy();
    if (c.host_copy() == 0) {
      CUDA_MEMCPY3D p;
      CUcontext ctx = nullptr;
      if (!params(c, nullptr, p) || !check(api_.cuCtxGetCurrent(&ctx), "cuCtxGetCurrent")
          || !check(api_.cuGraphAddMemcpyNode(&n, g->second, deps.data(), deps.size(), &p, ctx),
                    "cuGraphAddMemcpyNode"))
        return;
    } else {
      auto sub = child(c);
      if (sub == nullptr)
        return;
      bool ok = check(api_.cuGraphAddChildGraphNode(&n, g->second, deps.data(), deps.size(), sub),
                      "cuGraphAddChildGraphNode");
      static_cast<void>(api_.cuGraphDestroy(sub)); // the node holds its own copy
      if (!ok)
        return;
    }
    s_.nodes[op.node()] = {op.graph(), n};
  }

  /// The host and memcpy nodes inside a copy node's child graph.
  bool inner(CUgraphNode node, CUgraphNode& host, CUgraphNode& copy) {
    CUgraph g = nullptr;
    CUgraphNode nodes[2] = {};
    size_t count = 2;
    if (!check(api_.cuGraphChildGraphNodeGetGraph(node, &g), "cuGraphChildGraphNodeGetGraph")
        || !check(api_.cuGraphGetNodes(g, nodes, &count), "cuGraphGetNodes"))
      return false;
    host = copy = nullptr;
    for (size_t i = 0; i < count; ++i) {
      CUgraphNodeType type{};
      if (!check(api_.cuGraphNodeGetType(nodes[i], &type), "cuGraphNodeGetType"))
        return false;
      (type == CU_GRAPH_NODE_TYPE_HOST ? host : copy) = nodes[i];
    }
    return host != nullptr && copy != nullptr;
  }

  void set(const proto::GraphMemcpyNodeSetParams& op) {
    CUgraphNode n = nullptr;
    if (!lookup_node(op.node(), n))
      return;
    CUgraphNodeType type{};
    if (!check(api_.cuGraphNodeGetType(n, &type), "cuGraphNodeGetType"))
      return;
    const auto& c = op.copy();
    if ((type == CU_GRAPH_NODE_TYPE_GRAPH) != (c.host_copy() != 0)) {
      invalid("memcpy node parameters: a copy between device memory and the host cannot "
              "become one between device addresses or back");
      return;
    }
    if (c.host_copy() == 0) {
      CUDA_MEMCPY3D p;
      if (params(c, nullptr, p))
        check(api_.cuGraphMemcpyNodeSetParams(n, &p), "cuGraphMemcpyNodeSetParams");
      return;
    }
    CUgraphNode host = nullptr, copy = nullptr;
    if (!inner(n, host, copy))
      return;
    // The nodes' order says the direction, which stays.
    CUgraphNode deps[1] = {};
    size_t count = 1;
    if (!check(api_.cuGraphNodeGetDependencies(host, deps, nullptr, &count),
               "cuGraphNodeGetDependencies"))
      return;
    if ((count == 0) != c.to_device()) {
      invalid("memcpy node parameters: the direction of a copy with a host end stays");
      return;
    }
    auto* t = target(c);
    CUDA_MEMCPY3D p;
    if (t == nullptr || !params(c, t->staging, p))
      return;
    auto h = host_params(t);
    if (check(api_.cuGraphHostNodeSetParams(host, &h), "cuGraphHostNodeSetParams"))
      check(api_.cuGraphMemcpyNodeSetParams(copy, &p), "cuGraphMemcpyNodeSetParams");
  }

  void exec_set(const proto::GraphExecMemcpyNodeSetParams& op) {
    CUgraphExec e = nullptr;
    CUgraphNode n = nullptr;
    CUcontext ctx = nullptr;
    if (!lookup_exec(op.exec(), e) || !lookup_node(op.node(), n)
        || !check(api_.cuCtxGetCurrent(&ctx), "cuCtxGetCurrent"))
      return;
    const auto& c = op.copy();
    if (c.host_copy() == 0) {
      CUDA_MEMCPY3D p;
      if (params(c, nullptr, p))
        check(api_.cuGraphExecMemcpyNodeSetParams(e, n, &p, ctx),
              "cuGraphExecMemcpyNodeSetParams");
      return;
    }
    auto sub = child(c);
    if (sub == nullptr)
      return;
    check(api_.cuGraphExecChildGraphNodeSetParams(e, n, sub),
          "cuGraphExecChildGraphNodeSetParams");
    static_cast<void>(api_.cuGraphDestroy(sub));
  }

  /// cudaMemcpyAsync with a host end, captured: the same two nodes, made
  /// by the capture from work on the stream.
  void stream_copy(const proto::StreamHostCopy& op) {
    CUstream stream = nullptr;
    auto rc = stream_for_work(api_, s_, op.stream(), &stream);
    if (!check(rc, "the session's stream"))
      return;
    CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
    if (!check(api_.cuStreamIsCapturing(stream, &status), "cuStreamIsCapturing"))
      return;
    if (status != CU_STREAM_CAPTURE_STATUS_ACTIVE) {
      fail_op(r_,
              status == CU_STREAM_CAPTURE_STATUS_INVALIDATED
                ? CUDA_ERROR_STREAM_CAPTURE_INVALIDATED
                : CUDA_ERROR_INVALID_VALUE,
              fmt::format("StreamHostCopy on stream {}, which does not capture: copies with "
                          "the host outside a capture are MemcpyHtoD / MemcpyDtoH",
                          op.stream()));
      return;
    }
    const auto& c = op.copy();
    auto* t = target(c);
    CUDA_MEMCPY3D p;
    if (t == nullptr || !params(c, t->staging, p))
      return;
    if (c.to_device())
      check(api_.cuLaunchHostFunc(stream, &run_host_copy, t), "cuLaunchHostFunc")
        && check(api_.cuMemcpy3DAsync(&p, stream), "cuMemcpy3DAsync");
    else
      check(api_.cuMemcpy3DAsync(&p, stream), "cuMemcpy3DAsync")
        && check(api_.cuLaunchHostFunc(stream, &run_host_copy, t), "cuLaunchHostFunc");
  }

  driver_api& api_;
  session& s_;
  proto::OpResult& r_;
};

} // namespace

void run_graph_copy(driver_api& api, session& s, const proto::Op& op, proto::OpResult& r) {
  copy_runner{api, s, r}.run(op);
}

bool memset_node_params(const session& s, const proto::MemsetNodeParams& m,
                        CUDA_MEMSET_NODE_PARAMS& p, proto::OpResult& r) {
  auto es = m.element_size();
  uint64_t row = 0;
  if ((es != 1 && es != 2 && es != 4) || __builtin_mul_overflow(m.width(), uint64_t{es}, &row)) {
    fail_op(r, CUDA_ERROR_INVALID_VALUE,
            fmt::format("memset node: element size {} bytes; use 1, 2 or 4", es));
    return false;
  }
  auto height = std::max<uint64_t>(m.height(), 1);
  uint64_t span = row;
  if (height > 1) {
    uint64_t last = 0;
    if (row > m.pitch() || __builtin_mul_overflow(m.pitch(), height - 1, &last)
        || __builtin_add_overflow(last, row, &span)) {
      fail_op(r, CUDA_ERROR_INVALID_VALUE,
              fmt::format("memset node: {} bytes a row over a pitch of {} bytes x {} rows",
                          row, m.pitch(), height));
      return false;
    }
  }
  if (!s.memory.contains(m.dst(), span)) {
    fail_op(r, CUDA_ERROR_INVALID_VALUE,
            fmt::format("memset node: address {:#x} + {} bytes is outside this session's "
                        "allocations",
                        m.dst(), span));
    return false;
  }
  std::memset(&p, 0, sizeof(p));
  p.dst = static_cast<CUdeviceptr>(m.dst());
  p.pitch = height > 1 ? m.pitch() : 0;
  p.value = m.value();
  p.elementSize = es;
  p.width = m.width();
  p.height = height;
  return true;
}

void release_host_copies(driver_api& api, session& s) {
  for (auto& t : s.host_copies)
    if (t.staging != nullptr)
      static_cast<void>(api.cuMemFreeHost(t.staging));
  s.host_copies.clear();
}

// --- registration (executor/op_table.hpp) -----------------------------------

namespace {

void run_graph_copy_op(op_context& cx, const proto::Op& op) {
  run_graph_copy(cx.api, cx.s, op, cx.r);
}

using k = proto::Op::KindCase;

constexpr op_route graph_copy_routes[] = {
  {k::kGraphAddMemcpyNode, run_graph_copy_op},
  {k::kGraphMemcpyNodeSetParams, run_graph_copy_op},
  {k::kGraphExecMemcpyNodeSetParams, run_graph_copy_op},
  {k::kStreamHostCopy, run_graph_copy_op},
  {k::kGraphMemsetNodeSetParams, run_graph_copy_op},
  {k::kGraphExecMemsetNodeSetParams, run_graph_copy_op},
};

} // namespace

const op_family graph_copy_family = make_family(graph_copy_routes);

} // namespace gleam::executor
