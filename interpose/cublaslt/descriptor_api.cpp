// cuBLASLt descriptors that need no network: transform and emulation
// descriptors (*Create, *Destroy, *Set/GetAttribute), and every descriptor
// an *Init_internal function places in the app's buffer (the vendor's inline
// *Init functions call these). interpose/cublaslt/descriptors.hpp holds
// them; lt.cpp sends them with the calls that use them.
#include <new>

#include "interpose/cublasLt_export.hpp"
#include "interpose/cublaslt/descriptors.hpp"
#include "interpose/cublaslt/logger.hpp"

using namespace gleam::interpose::cublaslt;

// --- descriptors in the app's buffers (the vendor's inline *Init) ------------

GLEAM_INTERPOSE_EXPORT cublasStatus_t cublasLtMatmulDescInit_internal(
  cublasLtMatmulDesc_t matmulDesc, size_t size, cublasComputeType_t computeType,
  cudaDataType_t scaleType) {
  return logged("cublasLtMatmulDescInit_internal", [&] {
    auto* o = new (std::nothrow) lt_object(lt_kind::matmul_desc);
    if (o != nullptr) {
      o->compute_type = static_cast<int32_t>(computeType);
      o->scale_type = static_cast<int32_t>(scaleType);
    }
    return init_in(matmulDesc, size, sizeof(cublasLtMatmulDescOpaque_t), o);
  });
}

GLEAM_INTERPOSE_EXPORT cublasStatus_t cublasLtMatrixLayoutInit_internal(
  cublasLtMatrixLayout_t matLayout, size_t size, cudaDataType type, uint64_t rows, uint64_t cols,
  int64_t ld) {
  return logged("cublasLtMatrixLayoutInit_internal", [&] {
    auto* o = new (std::nothrow) lt_object(lt_kind::layout);
    if (o != nullptr) {
      o->type = static_cast<int32_t>(type);
      o->rows = rows;
      o->cols = cols;
      o->ld = ld;
    }
    return init_in(matLayout, size, sizeof(cublasLtMatrixLayoutOpaque_t), o);
  });
}

GLEAM_INTERPOSE_EXPORT cublasStatus_t
cublasLtMatmulPreferenceInit_internal(cublasLtMatmulPreference_t pref, size_t size) {
  return logged("cublasLtMatmulPreferenceInit_internal", [&] {
    return init_in(pref, size, sizeof(cublasLtMatmulPreferenceOpaque_t),
                   new (std::nothrow) lt_object(lt_kind::preference));
  });
}

// --- matrix transform descriptors -------------------------------------------

GLEAM_INTERPOSE_EXPORT cublasStatus_t cublasLtMatrixTransformDescInit_internal(
  cublasLtMatrixTransformDesc_t transformDesc, size_t size, cudaDataType scaleType) {
  return logged("cublasLtMatrixTransformDescInit_internal", [&] {
    auto* o = new (std::nothrow) lt_object(lt_kind::transform_desc);
    if (o != nullptr)
      o->scale_type = static_cast<int32_t>(scaleType);
    return init_in(transformDesc, size, sizeof(cublasLtMatrixTransformDescOpaque_t), o);
  });
}

GLEAM_INTERPOSE_EXPORT cublasStatus_t
cublasLtMatrixTransformDescCreate(cublasLtMatrixTransformDesc_t* transformDesc,
                                  cudaDataType scaleType) {
  return logged("cublasLtMatrixTransformDescCreate", [&] {
    auto* o = new (std::nothrow) lt_object(lt_kind::transform_desc);
    if (o != nullptr)
      o->scale_type = static_cast<int32_t>(scaleType);
    return create(transformDesc, o);
  });
}

GLEAM_INTERPOSE_EXPORT cublasStatus_t
cublasLtMatrixTransformDescDestroy(cublasLtMatrixTransformDesc_t transformDesc) {
  return logged("cublasLtMatrixTransformDescDestroy",
                [&] { return destroy(transformDesc, lt_kind::transform_desc); });
}

GLEAM_INTERPOSE_EXPORT cublasStatus_t cublasLtMatrixTransformDescSetAttribute(
  cublasLtMatrixTransformDesc_t transformDesc, cublasLtMatrixTransformDescAttributes_t attr,
  const void* buf, size_t sizeInBytes) {
  return logged("cublasLtMatrixTransformDescSetAttribute", [&] {
    return set_attribute(transformDesc, lt_kind::transform_desc, attr, buf, sizeInBytes);
  });
}

GLEAM_INTERPOSE_EXPORT cublasStatus_t cublasLtMatrixTransformDescGetAttribute(
  cublasLtMatrixTransformDesc_t transformDesc, cublasLtMatrixTransformDescAttributes_t attr,
  void* buf, size_t sizeInBytes, size_t* sizeWritten) {
  return logged("cublasLtMatrixTransformDescGetAttribute", [&] {
    return get_attribute(transformDesc, lt_kind::transform_desc, attr, buf, sizeInBytes,
                         sizeWritten);
  });
}

// --- emulation descriptors (sent by value with the matmul descriptor naming them)

GLEAM_INTERPOSE_EXPORT cublasStatus_t
cublasLtEmulationDescInit_internal(cublasLtEmulationDesc_t emulationDesc, size_t size) {
  return logged("cublasLtEmulationDescInit_internal", [&] {
    return init_in(emulationDesc, size, sizeof(cublasLtEmulationDescOpaque_t),
                   new (std::nothrow) lt_object(lt_kind::emulation_desc));
  });
}

GLEAM_INTERPOSE_EXPORT cublasStatus_t
cublasLtEmulationDescCreate(cublasLtEmulationDesc_t* emulationDesc) {
  return logged("cublasLtEmulationDescCreate", [&] {
    return create(emulationDesc, new (std::nothrow) lt_object(lt_kind::emulation_desc));
  });
}

GLEAM_INTERPOSE_EXPORT cublasStatus_t
cublasLtEmulationDescDestroy(cublasLtEmulationDesc_t emulationDesc) {
  return logged("cublasLtEmulationDescDestroy",
                [&] { return destroy(emulationDesc, lt_kind::emulation_desc); });
}

GLEAM_INTERPOSE_EXPORT cublasStatus_t
cublasLtEmulationDescSetAttribute(cublasLtEmulationDesc_t emulationDesc,
                                  cublasLtEmulationDescAttributes_t attr, const void* buf,
                                  size_t sizeInBytes) {
  return logged("cublasLtEmulationDescSetAttribute", [&] {
    return set_attribute(emulationDesc, lt_kind::emulation_desc, attr, buf, sizeInBytes);
  });
}

GLEAM_INTERPOSE_EXPORT cublasStatus_t
cublasLtEmulationDescGetAttribute(cublasLtEmulationDesc_t emulationDesc,
                                  cublasLtEmulationDescAttributes_t attr, void* buf,
                                  size_t sizeInBytes, size_t* sizeWritten) {
  return logged("cublasLtEmulationDescGetAttribute", [&] {
    return get_attribute(emulationDesc, lt_kind::emulation_desc, attr, buf, sizeInBytes,
                         sizeWritten);
  });
}
