// Driver functions with a runtime twin of the same meaning: each checks what
// the driver checks first and forwards to Gleam's runtime call, so driver
// and runtime calls share one session. The static CUDA runtime reaches the
// GPU only through these.
#include "interpose/driver/common.hpp"

#include <cuda_runtime_api.h>

#include <cstring>
#include <map>
#include <mutex>

#include "interpose/driver/client.hpp"

namespace {

using gleam::interpose::driver::cu;
using gleam::interpose::driver::device_of;

cudaStream_t rt(CUstream s) {
  return reinterpret_cast<cudaStream_t>(s);
}

cudaMemLocation rt(CUmemLocation l) {
  cudaMemLocation out{};
  std::memcpy(&out, &l, sizeof out);
  return out;
}

/// A driver kernel node's parameters as the runtime's: a CUfunction (or a
/// CUkernel, the same handle under Gleam) is the runtime's function handle.
bool kernel_params_of(const CUDA_KERNEL_NODE_PARAMS* in, cudaKernelNodeParams& out) {
  if (in == nullptr)
    return false;
  out = cudaKernelNodeParams{};
  out.func = in->func != nullptr ? static_cast<void*>(in->func) : static_cast<void*>(in->kern);
  out.gridDim = dim3{in->gridDimX, in->gridDimY, in->gridDimZ};
  out.blockDim = dim3{in->blockDimX, in->blockDimY, in->blockDimZ};
  out.sharedMemBytes = in->sharedMemBytes;
  out.kernelParams = in->kernelParams;
  out.extra = in->extra;
  return out.func != nullptr;
}

static_assert(sizeof(CUDA_HOST_NODE_PARAMS) == sizeof(cudaHostNodeParams));
static_assert(sizeof(CUDA_MEMSET_NODE_PARAMS) == sizeof(cudaMemsetParams));
static_assert(sizeof(CUgraphExecUpdateResultInfo) == sizeof(cudaGraphExecUpdateResultInfo));

/// The start of one end of a driver copy in linear memory (host, device or
/// unified); false for a CUDA array, which is not remoted.
bool linear_base(CUmemorytype type, const void* host, CUdeviceptr device, char** out) {
  switch (type) {
    case CU_MEMORYTYPE_HOST:
      *out = static_cast<char*>(const_cast<void*>(host));
      return true;
    case CU_MEMORYTYPE_DEVICE:
    case CU_MEMORYTYPE_UNIFIED:
      *out = reinterpret_cast<char*>(device);
      return true;
    default:
      return false;
  }
}

/// A driver 3D copy between linear memories as the runtime's parameters;
/// false for CUDA arrays, which are not remoted.
bool copy_params_of(const CUDA_MEMCPY3D* c, cudaMemcpy3DParms& out) {
  char* src = nullptr;
  char* dst = nullptr;
  if (!linear_base(c->srcMemoryType, c->srcHost, c->srcDevice, &src)
      || !linear_base(c->dstMemoryType, c->dstHost, c->dstDevice, &dst))
    return false;
  out = cudaMemcpy3DParms{};
  out.srcPtr = cudaPitchedPtr{src, c->srcPitch, c->srcPitch, c->srcHeight};
  out.dstPtr = cudaPitchedPtr{dst, c->dstPitch, c->dstPitch, c->dstHeight};
  out.srcPos = cudaPos{c->srcXInBytes, c->srcY, c->srcZ};
  out.dstPos = cudaPos{c->dstXInBytes, c->dstY, c->dstZ};
  out.extent = cudaExtent{c->WidthInBytes, c->Height, c->Depth};
  out.kind = cudaMemcpyDefault; // the runtime tells host from device memory
  return true;
}

std::mutex copy_nodes_mutex;

/// The parameters each driver memcpy node was given, for its Get.
std::map<CUgraphNode, CUDA_MEMCPY3D>& copy_nodes() {
  static auto* all = new std::map<CUgraphNode, CUDA_MEMCPY3D>;
  return *all;
}

/// A 2D copy between host and device memory (arrays are not remoted).
CUresult copy_2d(const CUDA_MEMCPY2D* c, CUstream stream, bool async) {
  if (c == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  char* src = nullptr;
  char* dst = nullptr;
  if (!linear_base(c->srcMemoryType, c->srcHost, c->srcDevice, &src)
      || !linear_base(c->dstMemoryType, c->dstHost, c->dstDevice, &dst))
    return CUDA_ERROR_NOT_SUPPORTED; // CUDA arrays
  src += c->srcY * c->srcPitch + c->srcXInBytes;
  dst += c->dstY * c->dstPitch + c->dstXInBytes;
  // Unified pointers say where they live themselves.
  auto kind = cudaMemcpyDefault;
  if (c->srcMemoryType == CU_MEMORYTYPE_HOST && c->dstMemoryType == CU_MEMORYTYPE_DEVICE)
    kind = cudaMemcpyHostToDevice;
  else if (c->srcMemoryType == CU_MEMORYTYPE_DEVICE && c->dstMemoryType == CU_MEMORYTYPE_HOST)
    kind = cudaMemcpyDeviceToHost;
  else if (c->srcMemoryType == CU_MEMORYTYPE_DEVICE
           && c->dstMemoryType == CU_MEMORYTYPE_DEVICE)
    kind = cudaMemcpyDeviceToDevice;
  else if (c->srcMemoryType == CU_MEMORYTYPE_HOST && c->dstMemoryType == CU_MEMORYTYPE_HOST)
    kind = cudaMemcpyHostToHost;
  return async ? cu(cudaMemcpy2DAsync(dst, c->dstPitch, src, c->srcPitch, c->WidthInBytes,
                                      c->Height, kind, rt(stream)))
               : cu(cudaMemcpy2D(dst, c->dstPitch, src, c->srcPitch, c->WidthInBytes, c->Height,
                                 kind));
}

/// A 3D copy between linear memories: one 2D copy per slice, in order on
/// the same stream (CUDA arrays are not remoted).
CUresult copy_3d(const CUDA_MEMCPY3D* c, CUstream stream, bool async) {
  if (c == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  if (c->srcMemoryType == CU_MEMORYTYPE_ARRAY || c->dstMemoryType == CU_MEMORYTYPE_ARRAY)
    return CUDA_ERROR_NOT_SUPPORTED;
  if (c->Depth > 1 && (c->srcHeight < c->Height || c->dstHeight < c->Height))
    return CUDA_ERROR_INVALID_VALUE;
  for (size_t z = 0; z < c->Depth; ++z) {
    CUDA_MEMCPY2D slice{};
    slice.srcXInBytes = c->srcXInBytes;
    slice.srcY = c->srcY + (c->srcZ + z) * c->srcHeight;
    slice.srcMemoryType = c->srcMemoryType;
    slice.srcHost = c->srcHost;
    slice.srcDevice = c->srcDevice;
    slice.srcPitch = c->srcPitch;
    slice.dstXInBytes = c->dstXInBytes;
    slice.dstY = c->dstY + (c->dstZ + z) * c->dstHeight;
    slice.dstMemoryType = c->dstMemoryType;
    slice.dstHost = c->dstHost;
    slice.dstDevice = c->dstDevice;
    slice.dstPitch = c->dstPitch;
    slice.WidthInBytes = c->WidthInBytes;
    slice.Height = c->Height;
    if (auto err = copy_2d(&slice, stream, async); err != CUDA_SUCCESS)
      return err;
  }
  return CUDA_SUCCESS;
}

} // namespace

extern "C" {

// --- host memory -------------------------------------------------------------

GLEAM_INTERPOSE_EXPORT CUresult cuMemHostGetFlags(unsigned int* pFlags, void* p) {
  if (pFlags == nullptr || p == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  return cu(cudaHostGetFlags(pFlags, p));
}

GLEAM_INTERPOSE_EXPORT CUresult cuMemHostGetDevicePointer_v2(CUdeviceptr* pdptr, void* p,
                                                             unsigned int Flags) {
  if (pdptr == nullptr || p == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  void* d = nullptr;
  if (auto err = cudaHostGetDevicePointer(&d, p, Flags); err != cudaSuccess)
    return cu(err);
  *pdptr = reinterpret_cast<CUdeviceptr>(d);
  return CUDA_SUCCESS;
}

GLEAM_INTERPOSE_EXPORT CUresult cuMemHostUnregister(void* p) {
  if (p == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  return cu(cudaHostUnregister(p));
}

// --- device memory -----------------------------------------------------------

GLEAM_INTERPOSE_EXPORT CUresult cuMemAllocPitch_v2(CUdeviceptr* dptr, size_t* pPitch,
                                                   size_t WidthInBytes, size_t Height,
                                                   unsigned int ElementSizeBytes) {
  if (dptr == nullptr || pPitch == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  if (ElementSizeBytes != 4 && ElementSizeBytes != 8 && ElementSizeBytes != 16)
    return CUDA_ERROR_INVALID_VALUE;
  void* p = nullptr;
  if (auto err = cudaMallocPitch(&p, pPitch, WidthInBytes, Height); err != cudaSuccess)
    return cu(err);
  *dptr = reinterpret_cast<CUdeviceptr>(p);
  return CUDA_SUCCESS;
}

GLEAM_INTERPOSE_EXPORT CUresult cuMemAllocAsync(CUdeviceptr* dptr, size_t bytesize,
                                                CUstream hStream) {
  if (dptr == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  void* p = nullptr;
  if (auto err = cudaMallocAsync(&p, bytesize, rt(hStream)); err != cudaSuccess)
    return cu(err);
  *dptr = reinterpret_cast<CUdeviceptr>(p);
  return CUDA_SUCCESS;
}

GLEAM_INTERPOSE_EXPORT CUresult cuMemFreeAsync(CUdeviceptr dptr, CUstream hStream) {
  return cu(cudaFreeAsync(reinterpret_cast<void*>(dptr), rt(hStream)));
}

GLEAM_INTERPOSE_EXPORT CUresult cuMemcpy3D_v2(const CUDA_MEMCPY3D* pCopy) {
  return copy_3d(pCopy, nullptr, false);
}

GLEAM_INTERPOSE_EXPORT CUresult cuMemcpy3DAsync_v2(const CUDA_MEMCPY3D* pCopy, CUstream hStream) {
  return copy_3d(pCopy, hStream, true);
}

GLEAM_INTERPOSE_EXPORT CUresult cuMemcpy2D_v2(const CUDA_MEMCPY2D* pCopy) {
  return copy_2d(pCopy, nullptr, false);
}

GLEAM_INTERPOSE_EXPORT CUresult cuMemcpy2DUnaligned_v2(const CUDA_MEMCPY2D* pCopy) {
  return copy_2d(pCopy, nullptr, false);
}

GLEAM_INTERPOSE_EXPORT CUresult cuMemcpy2DAsync_v2(const CUDA_MEMCPY2D* pCopy, CUstream hStream) {
  return copy_2d(pCopy, hStream, true);
}

GLEAM_INTERPOSE_EXPORT CUresult cuMemsetD2D8_v2(CUdeviceptr dstDevice, size_t dstPitch,
                                                unsigned char uc, size_t Width, size_t Height) {
  return cu(cudaMemset2D(reinterpret_cast<void*>(dstDevice), dstPitch, uc, Width, Height));
}

GLEAM_INTERPOSE_EXPORT CUresult cuMemsetD2D8Async(CUdeviceptr dstDevice, size_t dstPitch,
                                                  unsigned char uc, size_t Width, size_t Height,
                                                  CUstream hStream) {
  return cu(cudaMemset2DAsync(reinterpret_cast<void*>(dstDevice), dstPitch, uc, Width, Height,
                              rt(hStream)));
}

// --- streams and events --------------------------------------------------------

GLEAM_INTERPOSE_EXPORT CUresult cuStreamGetPriority(CUstream hStream, int* priority) {
  if (priority == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  return cu(cudaStreamGetPriority(rt(hStream), priority));
}

GLEAM_INTERPOSE_EXPORT CUresult cuStreamGetFlags(CUstream hStream, unsigned int* flags) {
  if (flags == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  return cu(cudaStreamGetFlags(rt(hStream), flags));
}

GLEAM_INTERPOSE_EXPORT CUresult cuStreamGetId(CUstream hStream, unsigned long long* streamId) {
  if (streamId == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  return cu(cudaStreamGetId(rt(hStream), streamId));
}

GLEAM_INTERPOSE_EXPORT CUresult cuLaunchHostFunc(CUstream hStream, CUhostFn fn, void* userData) {
  if (fn == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  return cu(cudaLaunchHostFunc(rt(hStream), fn, userData));
}

GLEAM_INTERPOSE_EXPORT CUresult cuStreamAddCallback(CUstream hStream, CUstreamCallback callback,
                                                    void* userData, unsigned int flags) {
  if (callback == nullptr || flags != 0)
    return CUDA_ERROR_INVALID_VALUE;
  // Same ABI: the status is an enum passed as int either way.
  return cu(cudaStreamAddCallback(rt(hStream), reinterpret_cast<cudaStreamCallback_t>(callback),
                                  userData, 0));
}

GLEAM_INTERPOSE_EXPORT CUresult cuEventRecordWithFlags(CUevent hEvent, CUstream hStream,
                                                       unsigned int flags) {
  return cu(cudaEventRecordWithFlags(reinterpret_cast<cudaEvent_t>(hEvent), rt(hStream), flags));
}

// --- stream capture and graphs (the runtime's graphs) -------------------------

GLEAM_INTERPOSE_EXPORT CUresult cuStreamBeginCapture_v2(CUstream hStream,
                                                        CUstreamCaptureMode mode) {
  return cu(cudaStreamBeginCapture(rt(hStream), static_cast<cudaStreamCaptureMode>(mode)));
}

GLEAM_INTERPOSE_EXPORT CUresult cuStreamEndCapture(CUstream hStream, CUgraph* phGraph) {
  if (phGraph == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  return cu(cudaStreamEndCapture(rt(hStream), phGraph));
}

GLEAM_INTERPOSE_EXPORT CUresult cuStreamIsCapturing(CUstream hStream,
                                                    CUstreamCaptureStatus* captureStatus) {
  if (captureStatus == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  return cu(cudaStreamIsCapturing(rt(hStream),
                                  reinterpret_cast<cudaStreamCaptureStatus*>(captureStatus)));
}

GLEAM_INTERPOSE_EXPORT CUresult cuThreadExchangeStreamCaptureMode(CUstreamCaptureMode* mode) {
  if (mode == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  return cu(cudaThreadExchangeStreamCaptureMode(reinterpret_cast<cudaStreamCaptureMode*>(mode)));
}

GLEAM_INTERPOSE_EXPORT CUresult cuGraphCreate(CUgraph* phGraph, unsigned int flags) {
  if (phGraph == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  return cu(cudaGraphCreate(phGraph, flags));
}

GLEAM_INTERPOSE_EXPORT CUresult cuGraphDestroy(CUgraph hGraph) {
  return cu(cudaGraphDestroy(hGraph));
}

GLEAM_INTERPOSE_EXPORT CUresult cuGraphInstantiateWithFlags(CUgraphExec* phGraphExec,
                                                            CUgraph hGraph,
                                                            unsigned long long flags) {
  if (phGraphExec == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  return cu(cudaGraphInstantiateWithFlags(phGraphExec, hGraph, flags));
}

GLEAM_INTERPOSE_EXPORT CUresult cuGraphLaunch(CUgraphExec hGraphExec, CUstream hStream) {
  return cu(cudaGraphLaunch(hGraphExec, rt(hStream)));
}

GLEAM_INTERPOSE_EXPORT CUresult cuGraphUpload(CUgraphExec hGraphExec, CUstream hStream) {
  return cu(cudaGraphUpload(hGraphExec, rt(hStream)));
}

GLEAM_INTERPOSE_EXPORT CUresult cuGraphExecDestroy(CUgraphExec hGraphExec) {
  return cu(cudaGraphExecDestroy(hGraphExec));
}

GLEAM_INTERPOSE_EXPORT CUresult cuGraphGetNodes(CUgraph hGraph, CUgraphNode* nodes,
                                                size_t* numNodes) {
  if (numNodes == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  return cu(cudaGraphGetNodes(hGraph, nodes, numNodes));
}

// --- unified memory hints --------------------------------------------------------

// CUmemLocation and cudaMemLocation, CUmem_advise and cudaMemoryAdvise share
// layout and values.
static_assert(sizeof(CUmemLocation) == sizeof(cudaMemLocation));

GLEAM_INTERPOSE_EXPORT CUresult cuMemPrefetchAsync_v2(CUdeviceptr devPtr, size_t count,
                                                      CUmemLocation location, unsigned int flags,
                                                      CUstream hStream) {
  return cu(cudaMemPrefetchAsync(reinterpret_cast<void*>(devPtr), count, rt(location), flags,
                                 rt(hStream)));
}

GLEAM_INTERPOSE_EXPORT CUresult cuMemAdvise_v2(CUdeviceptr devPtr, size_t count,
                                               CUmem_advise advice, CUmemLocation location) {
  return cu(cudaMemAdvise(reinterpret_cast<void*>(devPtr), count,
                          static_cast<cudaMemoryAdvise>(advice), rt(location)));
}

// --- stream-ordered memory pools --------------------------------------------------

// CUmemoryPool is cudaMemPool_t; CUmemPoolProps and cudaMemPoolProps share
// layout, CUmemPool_attribute and cudaMemPoolAttr values.
static_assert(sizeof(CUmemPoolProps) == sizeof(cudaMemPoolProps));

GLEAM_INTERPOSE_EXPORT CUresult cuDeviceGetDefaultMemPool(CUmemoryPool* pool_out, CUdevice dev) {
  if (pool_out == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  return cu(cudaDeviceGetDefaultMemPool(pool_out, dev));
}

GLEAM_INTERPOSE_EXPORT CUresult cuDeviceGetMemPool(CUmemoryPool* pool, CUdevice dev) {
  if (pool == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  return cu(cudaDeviceGetMemPool(pool, dev));
}

GLEAM_INTERPOSE_EXPORT CUresult cuDeviceSetMemPool(CUdevice dev, CUmemoryPool pool) {
  return cu(cudaDeviceSetMemPool(dev, pool));
}

GLEAM_INTERPOSE_EXPORT CUresult cuMemPoolCreate(CUmemoryPool* pool, const CUmemPoolProps* poolProps) {
  if (pool == nullptr || poolProps == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  cudaMemPoolProps props{};
  std::memcpy(&props, poolProps, sizeof props);
  return cu(cudaMemPoolCreate(pool, &props));
}

GLEAM_INTERPOSE_EXPORT CUresult cuMemPoolDestroy(CUmemoryPool pool) {
  return cu(cudaMemPoolDestroy(pool));
}

GLEAM_INTERPOSE_EXPORT CUresult cuMemPoolSetAttribute(CUmemoryPool pool, CUmemPool_attribute attr,
                                                      void* value) {
  if (value == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  return cu(cudaMemPoolSetAttribute(pool, static_cast<cudaMemPoolAttr>(attr), value));
}

GLEAM_INTERPOSE_EXPORT CUresult cuMemPoolGetAttribute(CUmemoryPool pool, CUmemPool_attribute attr,
                                                      void* value) {
  if (value == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  return cu(cudaMemPoolGetAttribute(pool, static_cast<cudaMemPoolAttr>(attr), value));
}

GLEAM_INTERPOSE_EXPORT CUresult cuMemPoolTrimTo(CUmemoryPool pool, size_t minBytesToKeep) {
  return cu(cudaMemPoolTrimTo(pool, minBytesToKeep));
}

GLEAM_INTERPOSE_EXPORT CUresult cuMemAllocFromPoolAsync(CUdeviceptr* dptr, size_t bytesize,
                                                        CUmemoryPool pool, CUstream hStream) {
  if (dptr == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  void* p = nullptr;
  if (auto err = cudaMallocFromPoolAsync(&p, bytesize, pool, rt(hStream)); err != cudaSuccess)
    return cu(err);
  *dptr = reinterpret_cast<CUdeviceptr>(p);
  return CUDA_SUCCESS;
}

// --- peers, devices ----------------------------------------------------------------

GLEAM_INTERPOSE_EXPORT CUresult cuDeviceGetByPCIBusId(CUdevice* dev, const char* pciBusId) {
  if (dev == nullptr || pciBusId == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  return cu(cudaDeviceGetByPCIBusId(dev, pciBusId));
}

GLEAM_INTERPOSE_EXPORT CUresult cuMemcpyPeer(CUdeviceptr dstDevice, CUcontext dstContext,
                                             CUdeviceptr srcDevice, CUcontext srcContext,
                                             size_t ByteCount) {
  int dst = device_of(dstContext), src = device_of(srcContext);
  if (dst < 0 || src < 0)
    return CUDA_ERROR_INVALID_CONTEXT;
  return cu(cudaMemcpyPeer(reinterpret_cast<void*>(dstDevice), dst,
                           reinterpret_cast<const void*>(srcDevice), src, ByteCount));
}

GLEAM_INTERPOSE_EXPORT CUresult cuMemcpyPeerAsync(CUdeviceptr dstDevice, CUcontext dstContext,
                                                  CUdeviceptr srcDevice, CUcontext srcContext,
                                                  size_t ByteCount, CUstream hStream) {
  int dst = device_of(dstContext), src = device_of(srcContext);
  if (dst < 0 || src < 0)
    return CUDA_ERROR_INVALID_CONTEXT;
  return cu(cudaMemcpyPeerAsync(reinterpret_cast<void*>(dstDevice), dst,
                                reinterpret_cast<const void*>(srcDevice), src, ByteCount,
                                rt(hStream)));
}

// --- more of capture and graphs ------------------------------------------------------

GLEAM_INTERPOSE_EXPORT CUresult cuStreamGetCaptureInfo_v3(
  CUstream hStream, CUstreamCaptureStatus* captureStatus_out, cuuint64_t* id_out,
  CUgraph* graph_out, const CUgraphNode** dependencies_out, const CUgraphEdgeData** edgeData_out,
  size_t* numDependencies_out) {
  if (captureStatus_out == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  static_assert(sizeof(CUgraphEdgeData) == sizeof(cudaGraphEdgeData));
  return cu(cudaStreamGetCaptureInfo(
    rt(hStream), reinterpret_cast<cudaStreamCaptureStatus*>(captureStatus_out),
    reinterpret_cast<unsigned long long*>(id_out), graph_out, dependencies_out,
    reinterpret_cast<const cudaGraphEdgeData**>(edgeData_out), numDependencies_out));
}

GLEAM_INTERPOSE_EXPORT CUresult cuGraphClone(CUgraph* phGraphClone, CUgraph originalGraph) {
  if (phGraphClone == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  return cu(cudaGraphClone(phGraphClone, originalGraph));
}

GLEAM_INTERPOSE_EXPORT CUresult cuGraphNodeGetType(CUgraphNode hNode, CUgraphNodeType* type) {
  if (type == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  return cu(cudaGraphNodeGetType(hNode, reinterpret_cast<cudaGraphNodeType*>(type)));
}

GLEAM_INTERPOSE_EXPORT CUresult cuGraphGetRootNodes(CUgraph hGraph, CUgraphNode* rootNodes,
                                                    size_t* numRootNodes) {
  if (numRootNodes == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  return cu(cudaGraphGetRootNodes(hGraph, rootNodes, numRootNodes));
}

GLEAM_INTERPOSE_EXPORT CUresult cuGraphAddEmptyNode(CUgraphNode* phGraphNode, CUgraph hGraph,
                                                    const CUgraphNode* dependencies,
                                                    size_t numDependencies) {
  if (phGraphNode == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  return cu(cudaGraphAddEmptyNode(phGraphNode, hGraph, dependencies, numDependencies));
}

GLEAM_INTERPOSE_EXPORT CUresult cuGraphAddDependencies_v2(CUgraph hGraph, const CUgraphNode* from,
                                                          const CUgraphNode* to,
                                                          const CUgraphEdgeData* edgeData,
                                                          size_t numDependencies) {
  return cu(cudaGraphAddDependencies(hGraph, from, to,
                                     reinterpret_cast<const cudaGraphEdgeData*>(edgeData),
                                     numDependencies));
}

// --- graph nodes ------------------------------------------------------------------

GLEAM_INTERPOSE_EXPORT CUresult cuGraphAddKernelNode_v2(CUgraphNode* phGraphNode, CUgraph hGraph,
                                                        const CUgraphNode* dependencies,
                                                        size_t numDependencies,
                                                        const CUDA_KERNEL_NODE_PARAMS* nodeParams) {
  cudaKernelNodeParams p{};
  if (phGraphNode == nullptr || !kernel_params_of(nodeParams, p))
    return CUDA_ERROR_INVALID_VALUE;
  return cu(cudaGraphAddKernelNode(phGraphNode, hGraph, dependencies, numDependencies, &p));
}

GLEAM_INTERPOSE_EXPORT CUresult cuGraphKernelNodeGetParams_v2(CUgraphNode hNode,
                                                              CUDA_KERNEL_NODE_PARAMS* nodeParams) {
  if (nodeParams == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  cudaKernelNodeParams p{};
  if (auto err = cudaGraphKernelNodeGetParams(hNode, &p); err != cudaSuccess)
    return cu(err);
  *nodeParams = CUDA_KERNEL_NODE_PARAMS{};
  nodeParams->func = static_cast<CUfunction>(p.func);
  nodeParams->gridDimX = p.gridDim.x;
  nodeParams->gridDimY = p.gridDim.y;
  nodeParams->gridDimZ = p.gridDim.z;
  nodeParams->blockDimX = p.blockDim.x;
  nodeParams->blockDimY = p.blockDim.y;
  nodeParams->blockDimZ = p.blockDim.z;
  nodeParams->sharedMemBytes = p.sharedMemBytes;
  nodeParams->kernelParams = p.kernelParams;
  nodeParams->extra = p.extra;
  return CUDA_SUCCESS;
}

GLEAM_INTERPOSE_EXPORT CUresult cuGraphKernelNodeSetParams_v2(
  CUgraphNode hNode, const CUDA_KERNEL_NODE_PARAMS* nodeParams) {
  cudaKernelNodeParams p{};
  if (!kernel_params_of(nodeParams, p))
    return CUDA_ERROR_INVALID_VALUE;
  return cu(cudaGraphKernelNodeSetParams(hNode, &p));
}

GLEAM_INTERPOSE_EXPORT CUresult cuGraphExecKernelNodeSetParams_v2(
  CUgraphExec hGraphExec, CUgraphNode hNode, const CUDA_KERNEL_NODE_PARAMS* nodeParams) {
  cudaKernelNodeParams p{};
  if (!kernel_params_of(nodeParams, p))
    return CUDA_ERROR_INVALID_VALUE;
  return cu(cudaGraphExecKernelNodeSetParams(hGraphExec, hNode, &p));
}

GLEAM_INTERPOSE_EXPORT CUresult cuGraphAddHostNode(CUgraphNode* phGraphNode, CUgraph hGraph,
                                                   const CUgraphNode* dependencies,
                                                   size_t numDependencies,
                                                   const CUDA_HOST_NODE_PARAMS* nodeParams) {
  if (phGraphNode == nullptr || nodeParams == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  return cu(cudaGraphAddHostNode(phGraphNode, hGraph, dependencies, numDependencies,
                                 reinterpret_cast<const cudaHostNodeParams*>(nodeParams)));
}

GLEAM_INTERPOSE_EXPORT CUresult cuGraphHostNodeGetParams(CUgraphNode hNode,
                                                         CUDA_HOST_NODE_PARAMS* nodeParams) {
  if (nodeParams == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  return cu(cudaGraphHostNodeGetParams(hNode, reinterpret_cast<cudaHostNodeParams*>(nodeParams)));
}

GLEAM_INTERPOSE_EXPORT CUresult cuGraphHostNodeSetParams(CUgraphNode hNode,
                                                         const CUDA_HOST_NODE_PARAMS* nodeParams) {
  if (nodeParams == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  return cu(cudaGraphHostNodeSetParams(hNode,
                                       reinterpret_cast<const cudaHostNodeParams*>(nodeParams)));
}

GLEAM_INTERPOSE_EXPORT CUresult cuGraphExecHostNodeSetParams(
  CUgraphExec hGraphExec, CUgraphNode hNode, const CUDA_HOST_NODE_PARAMS* nodeParams) {
  if (nodeParams == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  return cu(cudaGraphExecHostNodeSetParams(
    hGraphExec, hNode, reinterpret_cast<const cudaHostNodeParams*>(nodeParams)));
}

GLEAM_INTERPOSE_EXPORT CUresult cuGraphAddMemsetNode(CUgraphNode* phGraphNode, CUgraph hGraph,
                                                     const CUgraphNode* dependencies,
                                                     size_t numDependencies,
                                                     const CUDA_MEMSET_NODE_PARAMS* memsetParams,
                                                     CUcontext ctx) {
  if (phGraphNode == nullptr || memsetParams == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  if (ctx != nullptr && device_of(ctx) < 0)
    return CUDA_ERROR_INVALID_CONTEXT;
  return cu(cudaGraphAddMemsetNode(phGraphNode, hGraph, dependencies, numDependencies,
                                   reinterpret_cast<const cudaMemsetParams*>(memsetParams)));
}

GLEAM_INTERPOSE_EXPORT CUresult cuGraphGetEdges_v2(CUgraph hGraph, CUgraphNode* from,
                                                   CUgraphNode* to, CUgraphEdgeData* edgeData,
                                                   size_t* numEdges) {
  if (numEdges == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  return cu(cudaGraphGetEdges(hGraph, from, to, reinterpret_cast<cudaGraphEdgeData*>(edgeData),
                              numEdges));
}

GLEAM_INTERPOSE_EXPORT CUresult cuGraphNodeGetDependencies_v2(CUgraphNode hNode,
                                                              CUgraphNode* dependencies,
                                                              CUgraphEdgeData* edgeData,
                                                              size_t* numDependencies) {
  if (numDependencies == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  return cu(cudaGraphNodeGetDependencies(
    hNode, dependencies, reinterpret_cast<cudaGraphEdgeData*>(edgeData), numDependencies));
}

GLEAM_INTERPOSE_EXPORT CUresult cuGraphNodeGetDependentNodes_v2(CUgraphNode hNode,
                                                                CUgraphNode* dependentNodes,
                                                                CUgraphEdgeData* edgeData,
                                                                size_t* numDependentNodes) {
  if (numDependentNodes == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  return cu(cudaGraphNodeGetDependentNodes(
    hNode, dependentNodes, reinterpret_cast<cudaGraphEdgeData*>(edgeData), numDependentNodes));
}

GLEAM_INTERPOSE_EXPORT CUresult cuGraphExecUpdate_v2(CUgraphExec hGraphExec, CUgraph hGraph,
                                                     CUgraphExecUpdateResultInfo* resultInfo) {
  if (resultInfo == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  return cu(cudaGraphExecUpdate(hGraphExec, hGraph,
                                reinterpret_cast<cudaGraphExecUpdateResultInfo*>(resultInfo)));
}

/// The pre-CUDA 12 instantiation: no flags, no error node, an empty log.
GLEAM_INTERPOSE_EXPORT CUresult cuGraphInstantiate_v2(CUgraphExec* phGraphExec, CUgraph hGraph,
                                                      CUgraphNode* phErrorNode, char* logBuffer,
                                                      size_t bufferSize) {
  if (phGraphExec == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  if (phErrorNode != nullptr)
    *phErrorNode = nullptr;
  if (logBuffer != nullptr && bufferSize > 0)
    logBuffer[0] = '\0';
  return cu(cudaGraphInstantiateWithFlags(phGraphExec, hGraph, 0));
}

// --- graph memory nodes ------------------------------------------------------------

static_assert(sizeof(CUDA_MEM_ALLOC_NODE_PARAMS) == sizeof(cudaMemAllocNodeParams));

GLEAM_INTERPOSE_EXPORT CUresult cuGraphAddMemAllocNode(CUgraphNode* phGraphNode, CUgraph hGraph,
                                                       const CUgraphNode* dependencies,
                                                       size_t numDependencies,
                                                       CUDA_MEM_ALLOC_NODE_PARAMS* nodeParams) {
  if (phGraphNode == nullptr || nodeParams == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  // Same layout; the runtime writes the allocation's address into dptr.
  return cu(cudaGraphAddMemAllocNode(phGraphNode, hGraph, dependencies, numDependencies,
                                     reinterpret_cast<cudaMemAllocNodeParams*>(nodeParams)));
}

GLEAM_INTERPOSE_EXPORT CUresult cuGraphMemAllocNodeGetParams(CUgraphNode hNode,
                                                             CUDA_MEM_ALLOC_NODE_PARAMS* params_out) {
  if (params_out == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  return cu(cudaGraphMemAllocNodeGetParams(
    hNode, reinterpret_cast<cudaMemAllocNodeParams*>(params_out)));
}

GLEAM_INTERPOSE_EXPORT CUresult cuGraphAddMemFreeNode(CUgraphNode* phGraphNode, CUgraph hGraph,
                                                      const CUgraphNode* dependencies,
                                                      size_t numDependencies, CUdeviceptr dptr) {
  if (phGraphNode == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  return cu(cudaGraphAddMemFreeNode(phGraphNode, hGraph, dependencies, numDependencies,
                                    reinterpret_cast<void*>(dptr)));
}

GLEAM_INTERPOSE_EXPORT CUresult cuGraphMemFreeNodeGetParams(CUgraphNode hNode,
                                                            CUdeviceptr* dptr_out) {
  if (dptr_out == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  void* p = nullptr;
  if (auto err = cudaGraphMemFreeNodeGetParams(hNode, &p); err != cudaSuccess)
    return cu(err);
  *dptr_out = reinterpret_cast<CUdeviceptr>(p);
  return CUDA_SUCCESS;
}

GLEAM_INTERPOSE_EXPORT CUresult cuDeviceGraphMemTrim(CUdevice device) {
  return cu(cudaDeviceGraphMemTrim(device));
}

// --- stream queries ------------------------------------------------------------------

GLEAM_INTERPOSE_EXPORT CUresult cuStreamGetDevice(CUstream hStream, CUdevice* device) {
  if (device == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  return cu(cudaStreamGetDevice(rt(hStream), device));
}

/// A stream's context: the primary context of its device (every context
/// of a device is the session's one context for it).
GLEAM_INTERPOSE_EXPORT CUresult cuStreamGetCtx(CUstream hStream, CUcontext* pctx) {
  if (pctx == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  int dev = 0;
  if (auto err = cudaStreamGetDevice(rt(hStream), &dev); err != cudaSuccess)
    return cu(err);
  *pctx = gleam::interpose::driver::primary(dev);
  return CUDA_SUCCESS;
}

GLEAM_INTERPOSE_EXPORT CUresult cuStreamGetCtx_v2(CUstream hStream, CUcontext* pCtx,
                                                  CUgreenCtx* pGreenCtx) {
  if (pCtx == nullptr || pGreenCtx == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  *pGreenCtx = nullptr; // no green contexts under Gleam
  return cuStreamGetCtx(hStream, pCtx);
}

// --- graph memcpy nodes --------------------------------------------------------------

GLEAM_INTERPOSE_EXPORT CUresult cuGraphAddMemcpyNode(CUgraphNode* phGraphNode, CUgraph hGraph,
                                                     const CUgraphNode* dependencies,
                                                     size_t numDependencies,
                                                     const CUDA_MEMCPY3D* copyParams,
                                                     CUcontext ctx) {
  if (phGraphNode == nullptr || copyParams == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  if (ctx != nullptr && device_of(ctx) < 0)
    return CUDA_ERROR_INVALID_CONTEXT;
  cudaMemcpy3DParms p{};
  if (!copy_params_of(copyParams, p))
    return CUDA_ERROR_NOT_SUPPORTED; // CUDA arrays
  if (auto err = cudaGraphAddMemcpyNode(phGraphNode, hGraph, dependencies, numDependencies, &p);
      err != cudaSuccess)
    return cu(err);
  std::lock_guard<std::mutex> guard{copy_nodes_mutex};
  copy_nodes()[*phGraphNode] = *copyParams;
  return CUDA_SUCCESS;
}

GLEAM_INTERPOSE_EXPORT CUresult cuGraphMemcpyNodeGetParams(CUgraphNode hNode,
                                                           CUDA_MEMCPY3D* nodeParams) {
  if (nodeParams == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard<std::mutex> guard{copy_nodes_mutex};
  auto i = copy_nodes().find(hNode);
  if (i == copy_nodes().end())
    return CUDA_ERROR_INVALID_VALUE;
  *nodeParams = i->second;
  return CUDA_SUCCESS;
}

GLEAM_INTERPOSE_EXPORT CUresult cuGraphMemcpyNodeSetParams(CUgraphNode hNode,
                                                           const CUDA_MEMCPY3D* nodeParams) {
  if (nodeParams == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  cudaMemcpy3DParms p{};
  if (!copy_params_of(nodeParams, p))
    return CUDA_ERROR_NOT_SUPPORTED;
  if (auto err = cudaGraphMemcpyNodeSetParams(hNode, &p); err != cudaSuccess)
    return cu(err);
  std::lock_guard<std::mutex> guard{copy_nodes_mutex};
  copy_nodes()[hNode] = *nodeParams;
  return CUDA_SUCCESS;
}

GLEAM_INTERPOSE_EXPORT CUresult cuGraphExecMemcpyNodeSetParams(CUgraphExec hGraphExec,
                                                               CUgraphNode hNode,
                                                               const CUDA_MEMCPY3D* copyParams,
                                                               CUcontext ctx) {
  if (copyParams == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  if (ctx != nullptr && device_of(ctx) < 0)
    return CUDA_ERROR_INVALID_CONTEXT;
  cudaMemcpy3DParms p{};
  if (!copy_params_of(copyParams, p))
    return CUDA_ERROR_NOT_SUPPORTED;
  return cu(cudaGraphExecMemcpyNodeSetParams(hGraphExec, hNode, &p));
}

} // extern "C"
