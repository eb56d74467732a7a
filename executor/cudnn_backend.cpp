// The server side of the manual cuDNN functions that travel as LibraryCall
// ops (interpose/spec/cudnn.spec, class manual with an id; the client side
// is interpose/cudnn/library.cpp and backend.cpp): the library's versions,
// its last error message, and the backend API's attribute calls and
// execution.
//
// Each backend descriptor of a session keeps a note (its handle table
// entry's, freed with it): the attributes the app set, with descriptor and
// handle elements as the client's ids, and the descriptor a GetAttribute
// filled it from. At cudnnBackendExecute the note of the plan leads to its
// operation graph (plan -> engine config -> engine or heuristic -> graph),
// whose operations name the tensors with their unique ids, dimensions,
// strides and data types: each data pointer of the variant pack must hold
// its tensor inside one of the session's allocations, the workspace the
// plan's workspace size. The tensors are resolved as soon as a descriptor
// names its way to a graph (a heuristic's graph set, its configurations
// filled, a plan's configuration set) and kept in that descriptor's note,
// because the app may destroy the graph once it holds a plan. A tensor the
// notes do not lead to (a plan deserialized from JSON, shapes overridden in
// the pack) is checked to start inside an allocation.
#include "executor/cudnn_api.hpp"

#include <cstring>
#include <deque>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "executor/cudnn_function_ids.hpp"
#include "wire/cudnn_backend.hpp"

namespace gleam::executor {

namespace {

namespace ids = generated::cudnn_ids;
namespace wc = wire::cudnn;
using wire::extents::add;
using wire::extents::mul;

/// What a tensor of a plan's graph spans.
struct tensor_extent {
  uint64_t bytes = 1;
  bool by_value = false;
};

/// The non-virtual tensors of an operation graph, by unique id.
using tensor_extents = std::map<int64_t, tensor_extent>;

/// What the session knows of one backend descriptor.
struct backend_note {
  /// Every attribute the app set last: its cudnnBackendAttributeType_t
  /// and its elements as they arrived (descriptor and handle elements are
  /// the client's u64 ids).
  std::map<int32_t, std::pair<int32_t, std::string>> attributes;
  /// The descriptor a cudnnBackendGetAttribute filled this one from (the
  /// client's id; 0: none).
  uint64_t filled_from = 0;
  /// The tensors of the operation graph this descriptor descends from,
  /// kept once known: the app may destroy the graph, its operations and
  /// tensors, and the heuristic once a plan exists (null: not known yet).
  std::shared_ptr<const tensor_extents> tensors;

  /// The elements of attribute `name` as values of type T (empty when not
  /// set).
  template <class T>
  std::vector<T> values(int32_t name) const {
    std::vector<T> out;
    auto i = attributes.find(name);
    if (i == attributes.end())
      return out;
    const auto& bytes = i->second.second;
    out.resize(bytes.size() / sizeof(T));
    if (!out.empty())
      std::memcpy(out.data(), bytes.data(), out.size() * sizeof(T));
    return out;
  }

  /// Whether attribute `name` holds descriptors.
  bool holds_descriptors(int32_t name) const {
    auto i = attributes.find(name);
    return i != attributes.end() && i->second.first == wc::type_backend_descriptor;
  }
};

/// The note of the session's backend descriptor `id` (made on first use);
/// null when the session has no such descriptor.
backend_note* note_of(library_call_env& env, uint64_t id) {
  auto* slot = env.handle_note(id, wc::backend_descriptor_type);
  if (slot == nullptr)
    return nullptr;
  if (*slot == nullptr)
    *slot = std::make_shared<backend_note>();
  return static_cast<backend_note*>(slot->get());
}

/// A copy of `bytes` in 8-byte aligned memory (the library reads int64,
/// double and pointer elements).
std::vector<uint64_t> aligned(std::string_view bytes) {
  std::vector<uint64_t> out((bytes.size() + 7) / 8);
  if (!bytes.empty())
    std::memcpy(out.data(), bytes.data(), bytes.size());
  return out;
}

/// The spec handle type of an attribute type's client objects; -1 for
/// plain bytes.
int32_t object_type_of(int64_t type) {
  if (type == wc::type_backend_descriptor)
    return wc::backend_descriptor_type;
  if (type == wc::type_handle)
    return wc::handle_type;
  return -1;
}

/// The extent of the tensor described by `t` (its unique id in *uid);
/// false when `t` is no tensor (no unique id) or a virtual one.
bool extent_of(const backend_note& t, int64_t* uid, tensor_extent* out) {
  auto uids = t.values<int64_t>(CUDNN_ATTR_TENSOR_UNIQUE_ID);
  if (uids.size() != 1)
    return false;
  auto is_virtual = t.values<uint8_t>(CUDNN_ATTR_TENSOR_IS_VIRTUAL);
  if (!is_virtual.empty() && is_virtual[0] != 0)
    return false;
  *uid = uids[0];
  auto by_value = t.values<uint8_t>(CUDNN_ATTR_TENSOR_IS_BY_VALUE);
  out->by_value = !by_value.empty() && by_value[0] != 0;
  auto dims = t.values<int64_t>(CUDNN_ATTR_TENSOR_DIMENSIONS);
  auto strides = t.values<int64_t>(CUDNN_ATTR_TENSOR_STRIDES);
  auto types = t.values<int32_t>(CUDNN_ATTR_TENSOR_DATA_TYPE);
  auto each = types.size() == 1 ? wc::data_type_bytes(types[0]) : 0;
  if (dims.empty() || dims.size() != strides.size() || each == 0)
    return true; // unknown: the pointer must start inside an allocation
  uint64_t last = 0;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] <= 0 || strides[i] < 0)
      return true;
    last = add(last, mul(static_cast<uint64_t>(dims[i] - 1), static_cast<uint64_t>(strides[i])));
  }
  out->bytes = mul(add(last, 1), each);
  return true;
}

/// The tensors of an operation graph's operations (the descriptors their
/// attributes name that are tensors).
std::shared_ptr<const tensor_extents> tensors_of_graph(library_call_env& env,
                                                       const backend_note& graph) {
  auto out = std::make_shared<tensor_extents>();
  for (auto op : graph.values<uint64_t>(CUDNN_ATTR_OPERATIONGRAPH_OPS)) {
    const auto* o = note_of(env, op);
    if (o == nullptr)
      continue;
    for (const auto& [name, value] : o->attributes) {
      if (value.first != wc::type_backend_descriptor)
        continue;
      for (auto ref : o->values<uint64_t>(name)) {
        const auto* t = note_of(env, ref);
        int64_t uid = 0;
        tensor_extent e;
        if (t != nullptr && extent_of(*t, &uid, &e))
          (*out)[uid] = e;
      }
    }
  }
  return out;
}

/// The tensors of the operation graph descriptor `id` (a graph, or a
/// plan, engine configuration, engine or heuristic) descends from,
/// through the descriptors its notes name; kept in its note once found.
/// Null when the notes do not lead to a graph.
std::shared_ptr<const tensor_extents> tensors_of(library_call_env& env, uint64_t id) {
  auto* start = note_of(env, id);
  if (start == nullptr)
    return nullptr;
  if (start->tensors != nullptr)
    return start->tensors;
  std::deque<uint64_t> todo{id};
  std::set<uint64_t> seen;
  // A plan's chain is a handful of descriptors; the bound keeps a web of
  // references cheap.
  while (!todo.empty() && seen.size() < 64) {
    auto next = todo.front();
    todo.pop_front();
    if (next == 0 || !seen.insert(next).second)
      continue;
    const auto* n = note_of(env, next);
    if (n == nullptr)
      continue;
    if (n->tensors != nullptr)
      return start->tensors = n->tensors;
    if (n->holds_descriptors(CUDNN_ATTR_OPERATIONGRAPH_OPS))
      return start->tensors = tensors_of_graph(env, *n);
    todo.push_back(n->filled_from);
    for (const auto& [name, value] : n->attributes)
      if (value.first == wc::type_backend_descriptor)
        for (auto ref : n->values<uint64_t>(name))
          todo.push_back(ref);
  }
  return nullptr;
}

/// True when every pointer of variant pack `pack_id` lies in the session's
/// allocations: data pointers over their tensors' extents in plan
/// `plan_id`'s graph, the workspace over the plan's workspace size,
/// intermediates at their start; else fails the call.
bool check_variant_pack(cudnn_api& api, library_call_env& env, uint64_t plan_id,
                        cudnnBackendDescriptor_t plan, uint64_t pack_id) {
  const auto* pack = note_of(env, pack_id);
  if (pack == nullptr)
    return true;
  auto known = tensors_of(env, plan_id);
  const tensor_extents none;
  const auto& tensors = known != nullptr ? *known : none;
  auto uids = pack->values<int64_t>(CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS);
  auto data = pack->values<uint64_t>(CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS);
  auto overridden = pack->values<int64_t>(CUDNN_ATTR_VARIANT_PACK_OVERRIDE_UNIQUE_IDS);
  std::set<int64_t> dynamic(overridden.begin(), overridden.end());
  for (size_t i = 0; i < data.size(); ++i) {
    if (data[i] == 0)
      continue;
    int64_t uid = i < uids.size() ? uids[i] : -1;
    uint64_t bytes = 1;
    if (auto t = tensors.find(uid); t != tensors.end() && dynamic.count(uid) == 0) {
      if (t->second.by_value) {
        env.refuse(fmt::format(
          "cudnnBackendExecute: tensor {} is passed by value (CUDNN_ATTR_TENSOR_IS_BY_VALUE): "
          "its variant pack pointer is host memory of the app, which Gleam does not carry; "
          "pass the value as a device tensor",
          uid));
        return false;
      }
      bytes = t->second.bytes;
    }
    auto what = fmt::format("cudnnBackendExecute: the data pointer of tensor {} (variant pack "
                            "entry {}, {} bytes)",
                            uid, i, bytes);
    if (!env.device(data[i], bytes, what.c_str()))
      return false;
  }
  for (auto p : pack->values<uint64_t>(CUDNN_ATTR_VARIANT_PACK_INTERMEDIATES))
    if (p != 0 && !env.device(p, 1, "cudnnBackendExecute: an intermediate of the variant pack"))
      return false;
  auto workspace = pack->values<uint64_t>(CUDNN_ATTR_VARIANT_PACK_WORKSPACE);
  int64_t size = 0, count = 0;
  if (api.cudnnBackendGetAttribute != nullptr
      && api.cudnnBackendGetAttribute(plan, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE,
                                      CUDNN_TYPE_INT64, 1, &count, &size)
           == CUDNN_STATUS_SUCCESS
      && count == 1 && size > 0) {
    auto what = fmt::format("cudnnBackendExecute: the workspace of the variant pack (the plan "
                            "needs {} bytes)",
                            size);
    if (!env.device(workspace.empty() ? 0 : workspace[0], static_cast<uint64_t>(size),
                    what.c_str()))
      return false;
  } else if (!workspace.empty() && workspace[0] != 0
             && !env.device(workspace[0], 1, "cudnnBackendExecute: the workspace of the variant "
                                             "pack")) {
    return false;
  }
  return true;
}

void set_attribute(cudnn_api& api, library_call_env& env, wire::arg_reader& in) {
  constexpr const char* function = "cudnnBackendSetAttribute";
  auto desc_ = in.address();
  auto name = in.value<cudnnBackendAttributeName_t>();
  auto type = in.value<cudnnBackendAttributeType_t>();
  auto count = in.value<int64_t>();
  auto bytes = in.bytes();
  if (!arguments_ready(env, in, api.cudnnBackendSetAttribute, function))
    return;
  auto objects = object_type_of(type);
  auto each = objects >= 0 ? sizeof(uint64_t) : wc::attribute_element_bytes(type);
  if (each == 0 || count < 0 || bytes.size() / each != static_cast<uint64_t>(count)
      || bytes.size() % each != 0)
    return env.malformed(function);
  auto desc = env.library_handle(desc_, wc::backend_descriptor_type, handle_use::setting);
  if (desc == nullptr)
    return;
  auto buffer = aligned(bytes);
  const void* elements = count == 0 ? nullptr : buffer.data();
  std::vector<void*> mapped;
  if (objects >= 0) {
    for (int64_t i = 0; i < count; ++i) {
      auto* h = env.library_handle(buffer[static_cast<size_t>(i)], objects, handle_use::setting);
      if (h == nullptr)
        return;
      mapped.push_back(h);
    }
    elements = count == 0 ? nullptr : mapped.data();
  }
  auto st = api.cudnnBackendSetAttribute(desc, name, type, count, elements);
  if (st == CUDNN_STATUS_SUCCESS)
    if (auto* n = note_of(env, desc_)) {
      n->attributes[static_cast<int32_t>(name)] = {static_cast<int32_t>(type), std::string(bytes)};
      // A reference to a graph, heuristic, engine or configuration: its
      // tensors are known now, while what it names is alive.
      n->tensors = nullptr;
      if (type == wc::type_backend_descriptor)
        static_cast<void>(tensors_of(env, desc_));
    }
  env.report(st, function);
}

void get_attribute(cudnn_api& api, library_call_env& env, wire::arg_reader& in) {
  constexpr const char* function = "cudnnBackendGetAttribute";
  auto desc_ = in.address();
  auto name = in.value<cudnnBackendAttributeName_t>();
  auto type = in.value<cudnnBackendAttributeType_t>();
  auto requested = in.value<int64_t>();
  bool elements = in.value<uint8_t>() != 0;
  std::vector<uint64_t> targets_;
  if (type == wc::type_backend_descriptor && elements && requested > 0 && requested <= (1 << 16))
    for (int64_t i = 0; i < requested; ++i)
      targets_.push_back(in.address());
  if (!arguments_ready(env, in, api.cudnnBackendGetAttribute, function))
    return;
  auto each = wc::attribute_element_bytes(type);
  if (each == 0 || requested < 0 || type == wc::type_handle
      || (type == wc::type_backend_descriptor && elements
          && targets_.size() != static_cast<size_t>(requested)))
    return env.malformed(function);
  auto desc = env.library_handle(desc_, wc::backend_descriptor_type, handle_use::setting);
  if (desc == nullptr)
    return;
  std::vector<void*> targets;
  for (auto id : targets_) {
    auto* d = env.library_handle(id, wc::backend_descriptor_type, handle_use::setting);
    if (d == nullptr)
      return;
    targets.push_back(d);
  }
  auto* count = static_cast<int64_t*>(env.host_output(sizeof(int64_t), "elementCount"));
  if (count == nullptr)
    return;
  void* out = nullptr;
  if (elements && type == wc::type_backend_descriptor) {
    out = targets.data();
  } else if (elements) {
    out = env.host_output(mul(static_cast<uint64_t>(requested), each), "arrayOfElements");
    if (out == nullptr)
      return;
  }
  auto st = api.cudnnBackendGetAttribute(desc, name, type, requested, count, out);
  if (st == CUDNN_STATUS_SUCCESS) {
    auto tensors = targets_.empty() ? nullptr : tensors_of(env, desc_);
    for (auto id : targets_)
      if (auto* n = note_of(env, id)) {
        n->filled_from = desc_;
        n->tensors = tensors;
      }
  }
  env.report(st, function);
}

void execute(cudnn_api& api, library_call_env& env, wire::arg_reader& in) {
  constexpr const char* function = "cudnnBackendExecute";
  auto handle_ = in.address();
  auto plan_ = in.address();
  auto pack_ = in.address();
  if (!arguments_ready(env, in, api.cudnnBackendExecute, function))
    return;
  auto handle = static_cast<cudnnHandle_t>(
    env.library_handle(handle_, wc::handle_type, handle_use::work));
  if (handle == nullptr)
    return;
  auto plan = env.library_handle(plan_, wc::backend_descriptor_type, handle_use::setting);
  if (plan == nullptr)
    return;
  auto pack = env.library_handle(pack_, wc::backend_descriptor_type, handle_use::setting);
  if (pack == nullptr)
    return;
  if (!check_variant_pack(api, env, plan_, plan, pack_))
    return;
  env.report(api.cudnnBackendExecute(handle, plan, pack), function);
}

void versions(cudnn_api& api, library_call_env& env, wire::arg_reader& in) {
  if (!arguments_ready(env, in, api.cudnnGetVersion, "cudnnGetVersion"))
    return;
  auto* out = static_cast<size_t*>(env.host_output(3 * sizeof(size_t), "versions"));
  if (out == nullptr)
    return;
  out[0] = api.cudnnGetVersion();
  out[1] = api.cudnnGetCudartVersion != nullptr ? api.cudnnGetCudartVersion() : 0;
  out[2] = api.cudnnGetMaxDeviceVersion != nullptr ? api.cudnnGetMaxDeviceVersion() : 0;
  env.report(CUDNN_STATUS_SUCCESS, "cudnnGetVersion");
}

void last_error(cudnn_api& api, library_call_env& env, wire::arg_reader& in) {
  constexpr const char* function = "cudnnGetLastErrorString";
  auto bytes = in.value<uint64_t>();
  if (!arguments_ready(env, in, api.cudnnGetLastErrorString, function))
    return;
  if (bytes == 0 || bytes > (uint64_t{64} << 10))
    return env.malformed(function);
  auto* out = static_cast<char*>(env.host_output(bytes, "message"));
  if (out == nullptr)
    return;
  api.cudnnGetLastErrorString(out, static_cast<size_t>(bytes));
  env.report(CUDNN_STATUS_SUCCESS, function);
}

} // namespace

bool run_manual_cudnn(cudnn_api& api, library_call_env& env, uint32_t function,
                      wire::arg_reader& in) {
  switch (function) {
    case ids::cudnnBackendSetAttribute:
      set_attribute(api, env, in);
      return true;
    case ids::cudnnBackendGetAttribute:
      get_attribute(api, env, in);
      return true;
    case ids::cudnnBackendExecute:
      execute(api, env, in);
      return true;
    case ids::cudnnGetVersion:
      versions(api, env, in);
      return true;
    case ids::cudnnGetLastErrorString:
      last_error(api, env, in);
      return true;
    default:
      return false;
  }
}

} // namespace gleam::executor
