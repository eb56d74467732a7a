// The per-thread default stream variants of the driver functions (_ptsz:
// a null stream means the calling thread's default stream; _ptds: the
// synchronous copies and memsets on that stream), as a program built with
// --default-stream per-thread calls them. Each forwards to its base
// function with CU_STREAM_PER_THREAD, which Gleam's runtime maps to the
// thread's stream; a synchronous copy waits for that stream.
#define __CUDA_API_VERSION_INTERNAL
#include "interpose/cuda_export.hpp"

namespace {

CUstream per_thread(CUstream s) {
  return s == nullptr ? CU_STREAM_PER_THREAD : s;
}

} // namespace

extern "C" {

GLEAM_INTERPOSE_EXPORT CUresult cuEventRecordWithFlags_ptsz(CUevent hEvent, CUstream hStream, unsigned int flags) {
  return cuEventRecordWithFlags(hEvent, per_thread(hStream), flags);
}

GLEAM_INTERPOSE_EXPORT CUresult cuEventRecord_ptsz(CUevent hEvent, CUstream hStream) {
  return cuEventRecord(hEvent, per_thread(hStream));
}

GLEAM_INTERPOSE_EXPORT CUresult cuGraphLaunch_ptsz(CUgraphExec hGraphExec, CUstream hStream) {
  return cuGraphLaunch(hGraphExec, per_thread(hStream));
}

GLEAM_INTERPOSE_EXPORT CUresult cuGraphUpload_ptsz(CUgraphExec hGraphExec, CUstream hStream) {
  return cuGraphUpload(hGraphExec, per_thread(hStream));
}

GLEAM_INTERPOSE_EXPORT CUresult cuLaunchCooperativeKernel_ptsz(CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream, void **kernelParams) {
  return cuLaunchCooperativeKernel(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes, per_thread(hStream), kernelParams);
}

GLEAM_INTERPOSE_EXPORT CUresult cuLaunchHostFunc_ptsz(CUstream hStream, CUhostFn fn, void *userData) {
  return cuLaunchHostFunc(per_thread(hStream), fn, userData);
}

GLEAM_INTERPOSE_EXPORT CUresult cuLaunchKernelEx_ptsz(const CUlaunchConfig *config, CUfunction f, void **kernelParams, void **extra) {
  if (config == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  auto on_thread = *config;
  on_thread.hStream = per_thread(config->hStream);
  return cuLaunchKernelEx(&on_thread, f, kernelParams, extra);
}

GLEAM_INTERPOSE_EXPORT CUresult cuLaunchKernel_ptsz(CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream, void **kernelParams, void **extra) {
  return cuLaunchKernel(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes, per_thread(hStream), kernelParams, extra);
}

GLEAM_INTERPOSE_EXPORT CUresult cuMemAllocAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUstream hStream) {
  return cuMemAllocAsync(dptr, bytesize, per_thread(hStream));
}

GLEAM_INTERPOSE_EXPORT CUresult cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool, CUstream hStream) {
  return cuMemAllocFromPoolAsync(dptr, bytesize, pool, per_thread(hStream));
}

GLEAM_INTERPOSE_EXPORT CUresult cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream hStream) {
  return cuMemFreeAsync(dptr, per_thread(hStream));
}

GLEAM_INTERPOSE_EXPORT CUresult cuMemPrefetchAsync_v2_ptsz(CUdeviceptr devPtr, size_t count, CUmemLocation location, unsigned int flags, CUstream hStream) {
  return cuMemPrefetchAsync_v2(devPtr, count, location, flags, per_thread(hStream));
}

GLEAM_INTERPOSE_EXPORT CUresult cuMemcpy2DAsync_v2_ptsz(const CUDA_MEMCPY2D *pCopy, CUstream hStream) {
  return cuMemcpy2DAsync_v2(pCopy, per_thread(hStream));
}

GLEAM_INTERPOSE_EXPORT CUresult cuMemcpy2DUnaligned_v2_ptds(const CUDA_MEMCPY2D *pCopy) {
  if (auto err = cuMemcpy2DAsync_v2(pCopy, CU_STREAM_PER_THREAD); err != CUDA_SUCCESS)
    return err;
  return cuStreamSynchronize(CU_STREAM_PER_THREAD);
}

GLEAM_INTERPOSE_EXPORT CUresult cuMemcpy2D_v2_ptds(const CUDA_MEMCPY2D *pCopy) {
  if (auto err = cuMemcpy2DAsync_v2(pCopy, CU_STREAM_PER_THREAD); err != CUDA_SUCCESS)
    return err;
  return cuStreamSynchronize(CU_STREAM_PER_THREAD);
}

GLEAM_INTERPOSE_EXPORT CUresult cuMemcpyAsync_ptsz(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount, CUstream hStream) {
  return cuMemcpyAsync(dst, src, ByteCount, per_thread(hStream));
}

GLEAM_INTERPOSE_EXPORT CUresult cuMemcpyDtoDAsync_v2_ptsz(CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount, CUstream hStream) {
  return cuMemcpyDtoDAsync_v2(dstDevice, srcDevice, ByteCount, per_thread(hStream));
}

GLEAM_INTERPOSE_EXPORT CUresult cuMemcpyDtoD_v2_ptds(CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount) {
  if (auto err = cuMemcpyDtoDAsync_v2(dstDevice, srcDevice, ByteCount, CU_STREAM_PER_THREAD); err != CUDA_SUCCESS)
    return err;
  return cuStreamSynchronize(CU_STREAM_PER_THREAD);
}

GLEAM_INTERPOSE_EXPORT CUresult cuMemcpyDtoHAsync_v2_ptsz(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount, CUstream hStream) {
  return cuMemcpyDtoHAsync_v2(dstHost, srcDevice, ByteCount, per_thread(hStream));
}

GLEAM_INTERPOSE_EXPORT CUresult cuMemcpyDtoH_v2_ptds(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount) {
  if (auto err = cuMemcpyDtoHAsync_v2(dstHost, srcDevice, ByteCount, CU_STREAM_PER_THREAD); err != CUDA_SUCCESS)
    return err;
  return cuStreamSynchronize(CU_STREAM_PER_THREAD);
}

GLEAM_INTERPOSE_EXPORT CUresult cuMemcpyHtoDAsync_v2_ptsz(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount, CUstream hStream) {
  return cuMemcpyHtoDAsync_v2(dstDevice, srcHost, ByteCount, per_thread(hStream));
}

GLEAM_INTERPOSE_EXPORT CUresult cuMemcpyHtoD_v2_ptds(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount) {
  if (auto err = cuMemcpyHtoDAsync_v2(dstDevice, srcHost, ByteCount, CU_STREAM_PER_THREAD); err != CUDA_SUCCESS)
    return err;
  return cuStreamSynchronize(CU_STREAM_PER_THREAD);
}

GLEAM_INTERPOSE_EXPORT CUresult cuMemcpyPeerAsync_ptsz(CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice, CUcontext srcContext, size_t ByteCount, CUstream hStream) {
  return cuMemcpyPeerAsync(dstDevice, dstContext, srcDevice, srcContext, ByteCount, per_thread(hStream));
}

GLEAM_INTERPOSE_EXPORT CUresult cuMemcpyPeer_ptds(CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice, CUcontext srcContext, size_t ByteCount) {
  if (auto err = cuMemcpyPeerAsync(dstDevice, dstContext, srcDevice, srcContext, ByteCount, CU_STREAM_PER_THREAD); err != CUDA_SUCCESS)
    return err;
  return cuStreamSynchronize(CU_STREAM_PER_THREAD);
}

GLEAM_INTERPOSE_EXPORT CUresult cuMemcpy_ptds(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount) {
  if (auto err = cuMemcpyAsync(dst, src, ByteCount, CU_STREAM_PER_THREAD); err != CUDA_SUCCESS)
    return err;
  return cuStreamSynchronize(CU_STREAM_PER_THREAD);
}

GLEAM_INTERPOSE_EXPORT CUresult cuMemsetD16Async_ptsz(CUdeviceptr dstDevice, unsigned short us, size_t N, CUstream hStream) {
  return cuMemsetD16Async(dstDevice, us, N, per_thread(hStream));
}

GLEAM_INTERPOSE_EXPORT CUresult cuMemsetD16_v2_ptds(CUdeviceptr dstDevice, unsigned short us, size_t N) {
  return cuMemsetD16Async(dstDevice, us, N, CU_STREAM_PER_THREAD);
}

GLEAM_INTERPOSE_EXPORT CUresult cuMemsetD2D16Async_ptsz(CUdeviceptr dstDevice, size_t dstPitch, unsigned short us, size_t Width, size_t Height, CUstream hStream) {
  return cuMemsetD2D16Async(dstDevice, dstPitch, us, Width, Height, per_thread(hStream));
}

GLEAM_INTERPOSE_EXPORT CUresult cuMemsetD2D16_v2_ptds(CUdeviceptr dstDevice, size_t dstPitch, unsigned short us, size_t Width, size_t Height) {
  return cuMemsetD2D16Async(dstDevice, dstPitch, us, Width, Height, CU_STREAM_PER_THREAD);
}

GLEAM_INTERPOSE_EXPORT CUresult cuMemsetD2D32Async_ptsz(CUdeviceptr dstDevice, size_t dstPitch, unsigned int ui, size_t Width, size_t Height, CUstream hStream) {
  return cuMemsetD2D32Async(dstDevice, dstPitch, ui, Width, Height, per_thread(hStream));
}

GLEAM_INTERPOSE_EXPORT CUresult cuMemsetD2D32_v2_ptds(CUdeviceptr dstDevice, size_t dstPitch, unsigned int ui, size_t Width, size_t Height) {
  return cuMemsetD2D32Async(dstDevice, dstPitch, ui, Width, Height, CU_STREAM_PER_THREAD);
}

GLEAM_INTERPOSE_EXPORT CUresult cuMemsetD2D8Async_ptsz(CUdeviceptr dstDevice, size_t dstPitch, unsigned char uc, size_t Width, size_t Height, CUstream hStream) {
  return cuMemsetD2D8Async(dstDevice, dstPitch, uc, Width, Height, per_thread(hStream));
}

GLEAM_INTERPOSE_EXPORT CUresult cuMemsetD2D8_v2_ptds(CUdeviceptr dstDevice, size_t dstPitch, unsigned char uc, size_t Width, size_t Height) {
  return cuMemsetD2D8Async(dstDevice, dstPitch, uc, Width, Height, CU_STREAM_PER_THREAD);
}

GLEAM_INTERPOSE_EXPORT CUresult cuMemsetD32Async_ptsz(CUdeviceptr dstDevice, unsigned int ui, size_t N, CUstream hStream) {
  return cuMemsetD32Async(dstDevice, ui, N, per_thread(hStream));
}

GLEAM_INTERPOSE_EXPORT CUresult cuMemsetD32_v2_ptds(CUdeviceptr dstDevice, unsigned int ui, size_t N) {
  return cuMemsetD32Async(dstDevice, ui, N, CU_STREAM_PER_THREAD);
}

GLEAM_INTERPOSE_EXPORT CUresult cuMemsetD8Async_ptsz(CUdeviceptr dstDevice, unsigned char uc, size_t N, CUstream hStream) {
  return cuMemsetD8Async(dstDevice, uc, N, per_thread(hStream));
}

GLEAM_INTERPOSE_EXPORT CUresult cuMemsetD8_v2_ptds(CUdeviceptr dstDevice, unsigned char uc, size_t N) {
  return cuMemsetD8Async(dstDevice, uc, N, CU_STREAM_PER_THREAD);
}

GLEAM_INTERPOSE_EXPORT CUresult cuStreamAddCallback_ptsz(CUstream hStream, CUstreamCallback callback, void *userData, unsigned int flags) {
  return cuStreamAddCallback(per_thread(hStream), callback, userData, flags);
}

GLEAM_INTERPOSE_EXPORT CUresult cuStreamBeginCapture_v2_ptsz(CUstream hStream, CUstreamCaptureMode mode) {
  return cuStreamBeginCapture_v2(per_thread(hStream), mode);
}

GLEAM_INTERPOSE_EXPORT CUresult cuStreamEndCapture_ptsz(CUstream hStream, CUgraph *phGraph) {
  return cuStreamEndCapture(per_thread(hStream), phGraph);
}

GLEAM_INTERPOSE_EXPORT CUresult cuStreamGetCaptureInfo_v3_ptsz(CUstream hStream, CUstreamCaptureStatus *captureStatus_out, cuuint64_t *id_out, CUgraph *graph_out, const CUgraphNode **dependencies_out, const CUgraphEdgeData **edgeData_out, size_t *numDependencies_out) {
  return cuStreamGetCaptureInfo_v3(per_thread(hStream), captureStatus_out, id_out, graph_out, dependencies_out, edgeData_out, numDependencies_out);
}

GLEAM_INTERPOSE_EXPORT CUresult cuStreamGetFlags_ptsz(CUstream hStream, unsigned int *flags) {
  return cuStreamGetFlags(per_thread(hStream), flags);
}

GLEAM_INTERPOSE_EXPORT CUresult cuStreamGetId_ptsz(CUstream hStream, unsigned long long *streamId) {
  return cuStreamGetId(per_thread(hStream), streamId);
}

GLEAM_INTERPOSE_EXPORT CUresult cuStreamGetPriority_ptsz(CUstream hStream, int *priority) {
  return cuStreamGetPriority(per_thread(hStream), priority);
}

GLEAM_INTERPOSE_EXPORT CUresult cuStreamIsCapturing_ptsz(CUstream hStream, CUstreamCaptureStatus *captureStatus) {
  return cuStreamIsCapturing(per_thread(hStream), captureStatus);
}

GLEAM_INTERPOSE_EXPORT CUresult cuStreamQuery_ptsz(CUstream hStream) {
  return cuStreamQuery(per_thread(hStream));
}

GLEAM_INTERPOSE_EXPORT CUresult cuStreamSynchronize_ptsz(CUstream hStream) {
  return cuStreamSynchronize(per_thread(hStream));
}

GLEAM_INTERPOSE_EXPORT CUresult cuStreamWaitEvent_ptsz(CUstream hStream, CUevent hEvent, unsigned int Flags) {
  return cuStreamWaitEvent(per_thread(hStream), hEvent, Flags);
}

GLEAM_INTERPOSE_EXPORT CUresult cuStreamGetCtx_ptsz(CUstream hStream, CUcontext *pctx) {
  return cuStreamGetCtx(per_thread(hStream), pctx);
}

GLEAM_INTERPOSE_EXPORT CUresult cuStreamGetCtx_v2_ptsz(CUstream hStream, CUcontext *pCtx, CUgreenCtx *pGreenCtx) {
  return cuStreamGetCtx_v2(per_thread(hStream), pCtx, pGreenCtx);
}

GLEAM_INTERPOSE_EXPORT CUresult cuStreamGetDevice_ptsz(CUstream hStream, CUdevice *device) {
  return cuStreamGetDevice(per_thread(hStream), device);
}

GLEAM_INTERPOSE_EXPORT CUresult cuMemcpy3DAsync_v2_ptsz(const CUDA_MEMCPY3D *pCopy, CUstream hStream) {
  return cuMemcpy3DAsync_v2(pCopy, per_thread(hStream));
}

GLEAM_INTERPOSE_EXPORT CUresult cuMemcpy3D_v2_ptds(const CUDA_MEMCPY3D *pCopy) {
  if (auto err = cuMemcpy3DAsync_v2(pCopy, CU_STREAM_PER_THREAD); err != CUDA_SUCCESS)
    return err;
  return cuStreamSynchronize(CU_STREAM_PER_THREAD);
}

} // extern "C"
