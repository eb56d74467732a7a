// The client side of cuDNN's backend attribute calls and of
// cudnnBackendExecute (interpose/spec/cudnn.spec, class manual with ids; the
// server side is executor/cudnn_backend.cpp). An attribute's elements are
// sized by its cudnnBackendAttributeType_t (wire/cudnn_backend.hpp);
// descriptor and handle elements are client objects, sent as their wire
// ids, which the server maps to its own.
#include <algorithm>
#include <cstring>
#include <vector>

#include "interpose/cudnn/library.hpp"
#include "interpose/cudnn_export.hpp"
#include "interpose/cudnn_function_ids.hpp"
#include "wire/cudnn_backend.hpp"
#include "wire/library_args.hpp"

namespace {

namespace ids = gleam::generated::cudnn_ids;
namespace wc = gleam::wire::cudnn;
using gleam::interpose::library_call;
using gleam::interpose::library_guarded;
using gleam::interpose::library_handle;
using gleam::interpose::library_handle_of;
using gleam::interpose::cudnn::traits;

/// The client handle behind backend descriptor `d`; null when the app does
/// not hold one.
const library_handle* descriptor_of(const void* d) noexcept {
  return library_handle_of(d, traits, wc::backend_descriptor_type);
}


/// The wire ids of `count` client objects of spec handle type `type` at
/// `elements` (cudnnBackendDescriptor_t or cudnnHandle_t values) into
/// `ids`; false when one is not a live object of that type.
bool wire_ids(const void* elements, int64_t count, int32_t type, std::vector<uint64_t>& ids) {
  ids.resize(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    const void* object = nullptr;
    std::memcpy(&object, static_cast<const char*>(elements) + i * sizeof(void*), sizeof(void*));
    const auto* h = library_handle_of(object, traits, type);
    if (h == nullptr)
      return false;
    ids[static_cast<size_t>(i)] = h->id;
  }
  return true;
}

/// The spec handle type of the client objects an attribute type's
/// elements are; -1 for plain bytes.
int32_t object_type_of(cudnnBackendAttributeType_t type) noexcept {
  if (type == wc::type_backend_descriptor)
    return wc::backend_descriptor_type;
  if (type == wc::type_handle)
    return wc::handle_type;
  return -1;
}

} // namespace

extern "C" {

GLEAM_INTERPOSE_EXPORT cudnnStatus_t
cudnnBackendSetAttribute(cudnnBackendDescriptor_t descriptor,
                         cudnnBackendAttributeName_t attributeName,
                         cudnnBackendAttributeType_t attributeType, int64_t elementCount,
                         const void* arrayOfElements) {
  return static_cast<cudnnStatus_t>(library_guarded(traits, [&]() -> int {
    const auto* d = descriptor_of(descriptor);
    if (d == nullptr)
      return CUDNN_STATUS_BAD_PARAM;
    auto each = wc::attribute_element_bytes(attributeType);
    if (each == 0 || elementCount < 0)
      return CUDNN_STATUS_BAD_PARAM;
    if (elementCount > 0 && arrayOfElements == nullptr)
      return CUDNN_STATUS_BAD_PARAM_NULL_POINTER;
    if (static_cast<uint64_t>(elementCount) > gleam::wire::max_host_input_bytes / each) {
      gleam::interpose::report_library_unsupported(
        "cudnnBackendSetAttribute", "an attribute larger than Gleam sends with a call (1 MiB)");
      return CUDNN_STATUS_NOT_SUPPORTED;
    }
    library_call call(traits, ids::cudnnBackendSetAttribute, "cudnnBackendSetAttribute");
    call.handle(*d);
    call.value(attributeName);
    call.value(attributeType);
    call.value(elementCount);
    auto objects = object_type_of(attributeType);
    if (objects >= 0) {
      std::vector<uint64_t> wire;
      if (!wire_ids(arrayOfElements, elementCount, objects, wire))
        return CUDNN_STATUS_BAD_PARAM;
      call.value(uint64_t{wire.size() * sizeof(uint64_t)});
      for (auto id : wire)
        call.value(id);
    } else if (elementCount == 0) {
      call.value(uint64_t{0});
    } else if (auto st = call.host_in(arrayOfElements, static_cast<uint64_t>(elementCount) * each);
               st != CUDNN_STATUS_SUCCESS) {
      return st;
    }
    // A variant pack's attributes are error-code-only, as its creation and
    // finalization (cudnn.spec): the cuDNN frontend builds one for every
    // execution. Any other attribute's status the frontend acts on at once.
    return call.finish(
      !gleam::interpose::cudnn::cudnn_variant_pack(gleam::interpose::cudnn::client_descriptors,
                                                   descriptor));
  }));
}

GLEAM_INTERPOSE_EXPORT cudnnStatus_t
cudnnBackendGetAttribute(cudnnBackendDescriptor_t descriptor,
                         cudnnBackendAttributeName_t attributeName,
                         cudnnBackendAttributeType_t attributeType, int64_t requestedElementCount,
                         int64_t* elementCount, void* arrayOfElements) {
  return static_cast<cudnnStatus_t>(library_guarded(traits, [&]() -> int {
    const auto* d = descriptor_of(descriptor);
    if (d == nullptr)
      return CUDNN_STATUS_BAD_PARAM;
    auto each = wc::attribute_element_bytes(attributeType);
    if (each == 0 || requestedElementCount < 0)
      return CUDNN_STATUS_BAD_PARAM;
    if (attributeType == wc::type_handle) {
      gleam::interpose::report_library_unsupported(
        "cudnnBackendGetAttribute", "a cudnnHandle_t attribute names the server's handle, which "
                                    "the app does not hold; keep the handle the app set");
      return CUDNN_STATUS_NOT_SUPPORTED;
    }
    bool elements = arrayOfElements != nullptr && requestedElementCount > 0;
    if (elements
        && static_cast<uint64_t>(requestedElementCount) > gleam::wire::max_host_input_bytes / each) {
      gleam::interpose::report_library_unsupported(
        "cudnnBackendGetAttribute", "an attribute larger than Gleam returns from a call (1 MiB)");
      return CUDNN_STATUS_NOT_SUPPORTED;
    }
    library_call call(traits, ids::cudnnBackendGetAttribute, "cudnnBackendGetAttribute");
    call.handle(*d);
    call.value(attributeName);
    call.value(attributeType);
    call.value(requestedElementCount);
    call.value(uint8_t{elements ? uint8_t{1} : uint8_t{0}});
    // Descriptor elements are the app's descriptors, which the server's
    // library fills in place; other elements come back as bytes.
    if (attributeType == wc::type_backend_descriptor && elements) {
      std::vector<uint64_t> wire;
      if (!wire_ids(arrayOfElements, requestedElementCount, wc::backend_descriptor_type, wire))
        return CUDNN_STATUS_BAD_PARAM;
      for (auto id : wire)
        call.value(id);
    }
    int64_t count = 0;
    if (auto st = call.host_output(&count, sizeof(count)); st != CUDNN_STATUS_SUCCESS)
      return st;
    // The elements come back into a buffer of Gleam's: the library writes
    // only the elements the attribute has, and an app may size its array
    // by that count rather than by the count it requested.
    std::vector<char> received;
    if (attributeType != wc::type_backend_descriptor && elements) {
      received.resize(static_cast<size_t>(requestedElementCount) * each);
      if (auto st = call.host_output(received.data(), received.size());
          st != CUDNN_STATUS_SUCCESS)
        return st;
    }
    auto st = call.finish(true);
    if (st != CUDNN_STATUS_SUCCESS)
      return st;
    if (!received.empty() && count > 0)
      std::memcpy(arrayOfElements, received.data(),
                  static_cast<size_t>(std::min(count, requestedElementCount)) * each);
    if (elementCount != nullptr)
      *elementCount = count;
    return st;
  }));
}

GLEAM_INTERPOSE_EXPORT cudnnStatus_t cudnnBackendExecute(cudnnHandle_t handle,
                                                         cudnnBackendDescriptor_t executionPlan,
                                                         cudnnBackendDescriptor_t variantPack) {
  return static_cast<cudnnStatus_t>(library_guarded(traits, [&]() -> int {
    const auto* h = library_handle_of(handle, traits, wc::handle_type);
    const auto* plan = descriptor_of(executionPlan);
    const auto* pack = descriptor_of(variantPack);
    if (h == nullptr || plan == nullptr || pack == nullptr)
      return CUDNN_STATUS_BAD_PARAM;
    library_call call(traits, ids::cudnnBackendExecute, "cudnnBackendExecute");
    call.handle(*h);
    call.handle(*plan);
    call.handle(*pack);
    return call.finish();
  }));
}

} // extern "C"
