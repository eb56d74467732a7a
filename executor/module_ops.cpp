// The modules family: module loads (their functions' parameter layouts and
// attributes, their variables as session memory) and unloads, kernel
// launches packed by those layouts, function attributes and occupancy.

#include <algorithm>
#include <cstring>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "executor/cache_ops.hpp"
#include "executor/launch_attributes.hpp"
#include "executor/module_image.hpp"
#include "executor/op_table.hpp"

namespace gleam::executor {

namespace {

/// The functions of module `m` by name, without loading them: under lazy
/// loading (CUDA's default) cuModuleGetFunction loads each kernel it is
/// asked for, and a module of a framework holds hundreds that the app never
/// launches; an enumerated handle is loaded by the driver at its first
/// launch, as a local program's kernel is. Empty where the driver (or a
/// fake one) cannot enumerate: the caller then asks by name.
std::unordered_map<std::string, CUfunction> enumerate_functions(driver_api& api, CUmodule m) {
  std::unordered_map<std::string, CUfunction> out;
  unsigned count = 0;
  if (api.cuModuleGetFunctionCount == nullptr || api.cuModuleEnumerateFunctions == nullptr
      || api.cuFuncGetName == nullptr || api.cuModuleGetFunctionCount(&count, m) != CUDA_SUCCESS)
    return out;
  std::vector<CUfunction> functions(count);
  if (count == 0 || api.cuModuleEnumerateFunctions(functions.data(), count, m) != CUDA_SUCCESS)
    return out;
  out.reserve(count);
  for (auto f : functions) {
    const char* name = nullptr;
    if (api.cuFuncGetName(&name, f) == CUDA_SUCCESS && name != nullptr)
      out.emplace(name, f);
  }
  return out;
}

void module_load(op_context& cx, const proto::ModuleLoad& op) {
  if (cx.s.modules.count(op.module()) != 0) {
    cx.fail(CUDA_ERROR_INVALID_VALUE,
            fmt::format("module handle {} is already loaded in this session; "
                        "use a fresh handle or unload it first",
                        op.module()));
    return;
  }
  std::string image;
  if (!cache_ops{cx.api, cx.s, cx.cache, cx.r}.module_image(op, image))
    return;
  if (image.empty()) {
    cx.fail(CUDA_ERROR_INVALID_IMAGE,
            fmt::format("ModuleLoad of module {} carries no image: the "
                        "gpu_server must fill it from the cache (image_key of "
                        "{} bytes) before execution",
                        op.module(), op.image_key().size()));
    return;
  }
  // The one gate before the driver, whichever way the bytes came (inline,
  // from the cache by image_key, stored before this check existed).
  if (auto refused = check_module_image(image)) {
    cx.fail(refused->rc, fmt::format("ModuleLoad of module {} ({}): {}", op.module(),
                                     op.image().empty() ? "image by key" : "image in the op",
                                     refused->detail));
    return;
  }
  module_entry m;
  if (!cx.check(cx.api.cuModuleLoadData(&m.handle, image.data()),
                "cuModuleLoadData"))
    return;
  auto* loaded = cx.r.mutable_module();
  auto enumerated = enumerate_functions(cx.api, m.handle);
  for (const auto& name : op.functions()) {
    auto* info = loaded->add_functions();
    info->set_name(name);
    function_entry f;
    if (auto e = enumerated.find(name); e != enumerated.end())
      f.handle = e->second;
    else if (cx.api.cuModuleGetFunction(&f.handle, m.handle, name.c_str()) != CUDA_SUCCESS)
      continue;
    info->set_found(true);
    f.params = cx.param_layout(f.handle);
    for (const auto& p : f.params) {
      auto* pi = info->add_params();
      pi->set_offset(p.offset);
      pi->set_size(p.size);
    }
    auto& attrs = *info->mutable_attributes();
    for (int a = 0; a < CU_FUNC_ATTRIBUTE_MAX; ++a) {
      int value = 0;
      if (cx.api.cuFuncGetAttribute(&value, static_cast<CUfunction_attribute>(a),
                                    f.handle)
          == CUDA_SUCCESS)
        attrs[a] = value;
    }
    m.functions.emplace(name, std::move(f));
  }
  for (const auto& name : op.variables()) {
    auto* info = loaded->add_variables();
    info->set_name(name);
    CUdeviceptr p = 0;
    size_t size = 0;
    if (cx.api.cuModuleGetGlobal(&p, &size, m.handle, name.c_str())
          != CUDA_SUCCESS
        || size == 0)
      continue;
    if (!cx.s.memory.insert(
          range_entry{p, size, range_kind::module_variable, op.module()}))
      continue;
    info->set_found(true);
    info->set_dptr(p);
    info->set_size(size);
  }
  cx.s.modules.emplace(op.module(), std::move(m));
}

void module_unload(op_context& cx, const proto::ModuleUnload& op) {
  auto m = cx.s.modules.find(op.module());
  if (m == cx.s.modules.end()) {
    cx.fail(CUDA_ERROR_INVALID_HANDLE,
            fmt::format("module handle {} is not a module of this session",
                        op.module()));
    return;
  }
  if (!cx.check(cx.api.cuModuleUnload(m->second.handle), "cuModuleUnload"))
    return;
  cx.s.memory.erase_module(op.module());
  cx.s.modules.erase(m);
}

void launch_kernel(op_context& cx, const proto::LaunchKernel& op) {
  auto* f = cx.lookup_function(op.module(), op.function());
  CUstream stream = nullptr;
  if (f == nullptr || !cx.lookup_stream(op.stream(), stream))
    return;
  const auto& params = op.params();
  uint64_t end = 0;
  uint64_t align = 1;
  for (const auto& p : f->params) {
    end = std::max<uint64_t>(end, uint64_t{p.offset} + p.size);
    // A type's size is a multiple of its alignment: the largest power of
    // two dividing the size bounds the alignment from above.
    uint64_t a = p.size == 0 ? 1 : (uint64_t{p.size} & (~uint64_t{p.size} + 1));
    align = std::max(align, std::min<uint64_t>(a, 16));
  }
  uint64_t padded = (end + align - 1) / align * align;
  if (params.size() != end && params.size() != padded) {
    cx.fail(CUDA_ERROR_INVALID_VALUE,
            fmt::format("launch of '{}': parameter buffer of {} bytes, but its "
                        "layout of {} parameters ends at {} bytes (padded "
                        "{}); pack the arguments by the layout ModuleLoad "
                        "returned",
                        op.function(), params.size(), f->params.size(), end,
                        padded));
    return;
  }
  std::vector<CUlaunchAttribute> attrs;
  std::string detail;
  if (auto rc = launch_attributes(op, cx.s, attrs, detail); rc != CUDA_SUCCESS) {
    cx.fail(rc, fmt::format("launch of '{}': {}", op.function(), detail));
    return;
  }
  CUlaunchConfig cfg;
  std::memset(&cfg, 0, sizeof(cfg));
  cfg.gridDimX = op.grid_x();
  cfg.gridDimY = op.grid_y();
  cfg.gridDimZ = op.grid_z();
  cfg.blockDimX = op.block_x();
  cfg.blockDimY = op.block_y();
  cfg.blockDimZ = op.block_z();
  cfg.sharedMemBytes = op.shared_mem();
  cfg.hStream = stream;
  cfg.attrs = attrs.empty() ? nullptr : attrs.data();
  cfg.numAttrs = static_cast<unsigned>(attrs.size());
  // 16-byte aligned copy of the packed arguments.
  std::vector<uint64_t> buf((params.size() + 15) / 16 * 2);
  if (!params.empty())
    std::memcpy(buf.data(), params.data(), params.size());
  // One pointer per parameter into the packed buffer (kernelParams, as
  // cudart passes them), so that a launch captured into a graph is a
  // kernel node like a local one: its parameters readable and updatable.
  std::vector<void*> args(f->params.size());
  auto* base = reinterpret_cast<char*>(buf.data());
  for (size_t i = 0; i < f->params.size(); ++i)
    args[i] = base + f->params[i].offset;
  cx.check(cx.api.cuLaunchKernelEx(&cfg, f->handle,
                                   args.empty() ? nullptr : args.data(), nullptr),
           "cuLaunchKernelEx");
}

void func_set_attribute(op_context& cx, const proto::FuncSetAttribute& op) {
  if (auto* f = cx.lookup_function(op.module(), op.function()))
    cx.check(cx.api.cuFuncSetAttribute(
            f->handle, static_cast<CUfunction_attribute>(op.attribute()),
            op.value()),
             "cuFuncSetAttribute");
}

void func_set_cache_config(op_context& cx, const proto::FuncSetCacheConfig& op) {
  if (auto* f = cx.lookup_function(op.module(), op.function()))
    cx.check(cx.api.cuFuncSetCacheConfig(f->handle,
                                         static_cast<CUfunc_cache>(op.config())),
             "cuFuncSetCacheConfig");
}

void occupancy(op_context& cx, const proto::OccupancyMaxActiveBlocks& op) {
  auto* f = cx.lookup_function(op.module(), op.function());
  if (f == nullptr)
    return;
  int blocks = 0;
  if (cx.check(cx.api.cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
              &blocks, f->handle, op.block_size(), op.dynamic_smem(),
              op.flags()),
               "cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags"))
    cx.r.set_value(blocks);
}

using k = proto::Op::KindCase;

constexpr op_route routes[] = {
  {k::kModuleLoad, with_message<&proto::Op::module_load, module_load>},
  {k::kModuleUnload, with_message<&proto::Op::module_unload, module_unload>},
  {k::kLaunchKernel, with_message<&proto::Op::launch_kernel, launch_kernel>},
  {k::kFuncSetAttribute, with_message<&proto::Op::func_set_attribute, func_set_attribute>},
  {k::kFuncSetCacheConfig,
   with_message<&proto::Op::func_set_cache_config, func_set_cache_config>},
  {k::kOccupancyMaxActiveBlocks,
   with_message<&proto::Op::occupancy_max_active_blocks, occupancy>},
};

} // namespace

const op_family module_family = make_family(routes);

} // namespace gleam::executor
