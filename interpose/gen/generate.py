#!/usr/bin/env python3
"""Generates the interposer's mechanical parts from an interpose/spec/*.spec.

One spec per library (--library or --surface, default: the spec's file name
stem): cudart (libcudart.so.13), cuda (libcuda.so.1, the driver-level
surface), cublas (libcublas.so.13), cublasLt (libcublasLt.so.13), curand
(libcurand.so.10), cudnn (libcudnn.so.9), cufft (libcufft.so.12), cusparse
(libcusparse.so.12), cusolver (libcusolver.so.12), nvml (libnvidia-ml.so.1).
Writes, into
--out-dir (the build directory, never the source tree), with <lib> the
library's name:
  <lib>.map                   GNU ld version script: every spec name, version
                              lib<lib>.so.13 (cuda: unversioned, as the
                              vendor's driver), everything else local; plus
                              Gleam's private exports under GLEAM_PRIVATE_1
  <lib>_private.txt           those private exports (cudart: the entry point
                              our libcuda.so.1 reaches the client through)
  cuda_proc_table.inc         cuda only: GLEAM_DRIVER_PROC(name, since) per export,
                              the table behind cuGetProcAddress
  <lib>_unsupported.cpp       one extern "C" stub per unsupported function
  <lib>_unsupported_<x>.cpp   the same for functions of a vendor header that
                              cannot share a translation unit with the others
                              (cublas: _xt, the cublasXt.h functions)
  <lib>_symbols.txt           every exported name, sorted
  <lib>_manual.txt            names of the hand-written (manual) functions
  <lib>_unsupported.txt       "<name>\t<reason>" per unsupported function
  export.hpp (cudart),        GLEAM_INTERPOSE_EXPORT, the vendor headers and
  <lib>_export.hpp (others)   the prototypes of the functions no includable
                              vendor header declares
  shim/vdpau/vdpau.h,         cudart only: fallback declarations of the few
  shim/GL/gl.h                VDPAU / OpenGL types the vendor interop headers
                              need, used only where the real headers are not
                              installed
  <lib>_generated.cpp         libraries with generated calls (cublas,
                              curand): the client stub of every 'class
                              generated' entry: the spec's checks, then its
                              arguments packed (wire/library_args.hpp) into
                              one LibraryCall op (library_calls.py)
  <lib>_generated.txt         "<name>\t<id>" per generated function
                              ("<name>\tforward <fn>" for a legacy entry)
  <lib>_function_ids.hpp      the pinned ids of the functions that travel as
                              LibraryCall ops (for hand-written client code)
With --server-out-dir DIR it writes the server side instead (the executor's
build directory): <lib>_library_calls.cpp (one case per generated function:
unpack, check every device range with the spec's extent, call the vendor's
function; for libraries other than cuBLAS also the library_descriptor the
executor's generic runner serves), <lib>_generated_api.inc (X(name) per
function with an id, for the loaded vendor library's members) and
<lib>_function_ids.hpp (the pinned ids).
With --manual-placeholder it also writes <lib>_manual_placeholder.cpp: stubs
(reported as unsupported) for every manual function, for builds that have no
hand-written sources yet.

A file is rewritten only when its content changes. Python 3 standard library
only. Exit status 1 with a message naming the spec line on any spec error.
"""

import argparse
import os
import re
import sys

import library_calls
from library_calls import generated_calls

CLASSES = ("manual", "unsupported", "generated")
CALLS = ("async", "local", "handle", "sync")
DIRECTIONS = ("in", "out", "inout")
# Identifiers an extent or check expression may use besides parameter names
# and CUBLAS_* / CUDA_* constants: wire/library_args.hpp (gleam::wire::extents).
EXPRESSION_WORDS = ("sizeof", "vec", "mat", "packed", "strided", "mul", "add", "type_size",
                    "max1", "op_ok", "fill_ok", "side_ok", "diag_ok", "nullptr")
INTEGRAL = ("char", "int", "unsigned", "unsigned int", "size_t", "float", "double")


class library:
    """What differs between the interposer libraries."""

    def __init__(self, name, headers, fail, report, report_header, export_header,
                 split=None, version="", private=None, proc_table=False, generated=None,
                 prototypes=False):
        self.name = name
        # The vendor header is not installed: every prototype comes from the
        # spec (the export header declares them all; with --server-out-dir
        # <lib>_prototypes.hpp declares them for the server).
        self.prototypes = prototypes
        # The spec's handle types (library_calls.handle_type), read by parse().
        self.handles = []
        # generated_calls, or None: the library has no generated entries.
        self.generated = generated
        # Vendor headers that cannot share a translation unit with `headers`:
        # header -> file suffix; their stubs go to <lib>_unsupported_<suffix>.cpp.
        self.split = split or {}
        # The symbol version of every export; None: unversioned names.
        self.version = "lib%s.so.13" % name if version == "" else version
        # Gleam's private exports, under PRIVATE_VERSION.
        self.private = private or []
        # Whether to write <lib>_proc_table.inc (the cuGetProcAddress table).
        self.proc_table = proc_table
        self.headers = headers
        self.fail = fail
        self.report = report
        self.report_header = report_header
        self.export_header = export_header


LIBRARIES = {
    "cudart": library(
        "cudart",
        ["cuda_runtime_api.h", "cuda_profiler_api.h", "GL/gl.h", "cuda_gl_interop.h",
         "cuda_egl_interop.h", "vdpau/vdpau.h", "cuda_vdpau_interop.h"],
        {"cudaError_t": "cudaErrorNotSupported",
         "const char *": '"unsupported by gleam"'},
        "gleam::interpose::report_unsupported", "interpose/runtime.hpp", "export.hpp",
        # One private entry point through which our libcuda.so.1 shares the
        # process's one client (interpose/private_interface.h).
        private=["gleam_private_interface_v1"]),
    # libcuda.so.1: unversioned names, as the vendor's driver exports them.
    "cuda": library(
        "cuda", ["cuda.h", "cudaProfiler.h"],
        {"CUresult": "CUDA_ERROR_NOT_SUPPORTED",
         "const char *": '"unsupported by gleam"'},
        "gleam_driver_report_unsupported", "interpose/driver/report.hpp",
        "cuda_export.hpp", version=None, proc_table=True),
    # cublas.h (the legacy API) includes cublas_api.h: both sets of names are
    # declared without the cublas_v2.h macros that rename the legacy ones.
    # cublasXt.h includes cublas_v2.h, which refuses to meet cublas.h: the
    # cublasXt stubs get a translation unit of their own.
    "cublas": library(
        "cublas", ["cublas.h"],
        {"cublasStatus_t": "CUBLAS_STATUS_NOT_SUPPORTED",
         "const char *": '"unsupported by gleam"',
         "cuComplex": "cuComplex{}", "cuDoubleComplex": "cuDoubleComplex{}"},
        "gleam::interpose::blas::report_unsupported", "interpose/blas/common.hpp",
        "cublas_export.hpp", {"cublasXt.h": "xt"},
        generated=generated_calls(
            "cublasStatus_t", "CUBLAS", "CUBLAS_STATUS_INVALID_VALUE",
            "CUBLAS_STATUS_NOT_INITIALIZED", "CUBLAS_STATUS_NOT_SUPPORTED",
            "interpose/blas/library_call.hpp", "gleam::interpose::blas",
            "blas_api", "executor/blas_api.hpp", "run_generated_cublas",
            handle="cublasHandle_t", success="CUBLAS_STATUS_SUCCESS",
            legacy_header="interpose/blas/legacy.hpp")),
    "cublasLt": library(
        "cublasLt", ["cublasLt.h"],
        {"cublasStatus_t": "CUBLAS_STATUS_NOT_SUPPORTED",
         "const char *": '"unsupported by gleam"'},
        "gleam::interpose::blas::report_unsupported", "interpose/blas/common.hpp",
        "cublasLt_export.hpp"),
    # libcurand.so.10 (CUDA 13 ships cuRAND 10): handles declared in the
    # spec, the generic client and server pieces. cuRAND has no "not
    # supported" status: CURAND_STATUS_ARCH_MISMATCH ("the requested feature
    # is not supported") stands for it.
    "curand": library(
        "curand", ["curand.h"],
        {"curandStatus_t": "CURAND_STATUS_ARCH_MISMATCH"},
        "gleam::interpose::report_library_unsupported", "interpose/library_call.hpp",
        "curand_export.hpp", version="libcurand.so.10",
        generated=generated_calls(
            "curandStatus_t", "CURAND", "CURAND_STATUS_OUT_OF_RANGE",
            "CURAND_STATUS_NOT_INITIALIZED", "CURAND_STATUS_ARCH_MISMATCH",
            "interpose/curand/library.hpp", "gleam::interpose::curand",
            "curand_api", "executor/curand_api.hpp", "run_generated_curand",
            success="CURAND_STATUS_SUCCESS", display="cuRAND",
            alloc_failed="CURAND_STATUS_ALLOCATION_FAILED",
            internal="CURAND_STATUS_INTERNAL_ERROR",
            client_traits="gleam::interpose::curand::traits",
            manual_server="run_manual_curand",
            statuses=[
                ("CURAND_STATUS_SUCCESS", "CUDA_SUCCESS"),
                ("CURAND_STATUS_VERSION_MISMATCH", "CUDA_ERROR_NOT_SUPPORTED"),
                ("CURAND_STATUS_NOT_INITIALIZED", "CUDA_ERROR_NOT_INITIALIZED"),
                ("CURAND_STATUS_ALLOCATION_FAILED", "CUDA_ERROR_OUT_OF_MEMORY"),
                ("CURAND_STATUS_TYPE_ERROR", "CUDA_ERROR_INVALID_VALUE"),
                ("CURAND_STATUS_OUT_OF_RANGE", "CUDA_ERROR_INVALID_VALUE"),
                ("CURAND_STATUS_LENGTH_NOT_MULTIPLE", "CUDA_ERROR_INVALID_VALUE"),
                ("CURAND_STATUS_DOUBLE_PRECISION_REQUIRED", "CUDA_ERROR_NOT_SUPPORTED"),
                ("CURAND_STATUS_LAUNCH_FAILURE", "CUDA_ERROR_UNKNOWN"),
                ("CURAND_STATUS_PREEXISTING_FAILURE", "CUDA_ERROR_UNKNOWN"),
                ("CURAND_STATUS_INITIALIZATION_FAILED", "CUDA_ERROR_NOT_INITIALIZED"),
                ("CURAND_STATUS_ARCH_MISMATCH", "CUDA_ERROR_NOT_SUPPORTED"),
                ("CURAND_STATUS_INTERNAL_ERROR", "CUDA_ERROR_UNKNOWN"),
            ])),
    # libcufft.so.12 (CUDA 13 ships cuFFT 12): plans are ints (a 'value'
    # handle type); the plan-making functions and executions are manual
    # (executor/cufft_plans.cpp keeps each plan's shape).
    "cufft": library(
        "cufft", ["cufft.h", "cufftXt.h"],
        {"cufftResult": "CUFFT_NOT_SUPPORTED"},
        "gleam::interpose::report_library_unsupported", "interpose/library_call.hpp",
        "cufft_export.hpp", version="libcufft.so.12",
        generated=generated_calls(
            "cufftResult", "CUFFT", "CUFFT_INVALID_VALUE",
            "CUFFT_INVALID_PLAN", "CUFFT_NOT_SUPPORTED",
            "interpose/cufft/library.hpp", "gleam::interpose::cufft",
            "cufft_api", "executor/cufft_api.hpp", "run_generated_cufft",
            success="CUFFT_SUCCESS", display="cuFFT",
            alloc_failed="CUFFT_ALLOC_FAILED",
            internal="CUFFT_INTERNAL_ERROR",
            client_traits="gleam::interpose::cufft::traits",
            manual_server="run_manual_cufft",
            statuses=[
                ("CUFFT_SUCCESS", "CUDA_SUCCESS"),
                ("CUFFT_INVALID_PLAN", "CUDA_ERROR_INVALID_HANDLE"),
                ("CUFFT_ALLOC_FAILED", "CUDA_ERROR_OUT_OF_MEMORY"),
                ("CUFFT_INVALID_TYPE", "CUDA_ERROR_INVALID_VALUE"),
                ("CUFFT_INVALID_VALUE", "CUDA_ERROR_INVALID_VALUE"),
                ("CUFFT_INTERNAL_ERROR", "CUDA_ERROR_UNKNOWN"),
                ("CUFFT_EXEC_FAILED", "CUDA_ERROR_LAUNCH_FAILED"),
                ("CUFFT_SETUP_FAILED", "CUDA_ERROR_NOT_INITIALIZED"),
                ("CUFFT_INVALID_SIZE", "CUDA_ERROR_INVALID_VALUE"),
                ("CUFFT_UNALIGNED_DATA", "CUDA_ERROR_INVALID_VALUE"),
                ("CUFFT_INVALID_DEVICE", "CUDA_ERROR_INVALID_DEVICE"),
                ("CUFFT_NO_WORKSPACE", "CUDA_ERROR_INVALID_VALUE"),
                ("CUFFT_NOT_IMPLEMENTED", "CUDA_ERROR_NOT_SUPPORTED"),
                ("CUFFT_NOT_SUPPORTED", "CUDA_ERROR_NOT_SUPPORTED"),
                ("CUFFT_MISSING_DEPENDENCY", "CUDA_ERROR_NOT_SUPPORTED"),
                ("CUFFT_NVRTC_FAILURE", "CUDA_ERROR_UNKNOWN"),
                ("CUFFT_NVJITLINK_FAILURE", "CUDA_ERROR_UNKNOWN"),
                ("CUFFT_NVSHMEM_FAILURE", "CUDA_ERROR_UNKNOWN"),
            ])),
    # libcusparse.so.12 (CUDA 13 ships cuSPARSE 12): handles and descriptors
    # declared in the spec (the const descriptor types as aliases), the
    # generic client and server pieces. Device pointers a descriptor holds
    # are checked at every execution ('verify', executor/cusparse_checks.cpp)
    # against the vendor's descriptor.
    "cusparse": library(
        "cusparse", ["cusparse.h"],
        {"cusparseStatus_t": "CUSPARSE_STATUS_NOT_SUPPORTED",
         "const char *": '"unsupported by gleam"'},
        "gleam::interpose::report_library_unsupported", "interpose/library_call.hpp",
        "cusparse_export.hpp", version="libcusparse.so.12",
        generated=generated_calls(
            "cusparseStatus_t", "CUSPARSE", "CUSPARSE_STATUS_INVALID_VALUE",
            "CUSPARSE_STATUS_NOT_INITIALIZED", "CUSPARSE_STATUS_NOT_SUPPORTED",
            "interpose/cusparse/library.hpp", "gleam::interpose::cusparse",
            "cusparse_api", "executor/cusparse_api.hpp", "run_generated_cusparse",
            success="CUSPARSE_STATUS_SUCCESS", display="cuSPARSE",
            alloc_failed="CUSPARSE_STATUS_ALLOC_FAILED",
            internal="CUSPARSE_STATUS_INTERNAL_ERROR",
            client_traits="gleam::interpose::cusparse::traits",
            expression_words=(
                "api", "cusparse_scalar_bytes", "cusparse_index_bytes", "cusparse_value_bytes",
                "cusparse_dense_bytes", "cusparse_sized", "cusparse_host_scalars",
                "cusparse_sparse_ok", "cusparse_dense_ok", "cusparse_vector_ok",
                "cusparse_keep_batch", "cusparse_spmm_buffer", "cusparse_spmv_buffer",
                "cusparse_sddmm_buffer", "cusparse_spsv_buffer", "cusparse_spsm_buffer",
                "cusparse_coosort_buffer", "cusparse_csrsort_buffer", "cusparse_cscsort_buffer",
                "cusparse_keep_buffer", "cusparse_buffer_ok", "cusparse_csr2csc_buffer",
                "cusparse_to_dense_buffer", "cusparse_to_sparse_buffer"),
            client_api="gleam::interpose::cusparse::client_handles",
            statuses=[
                ("CUSPARSE_STATUS_SUCCESS", "CUDA_SUCCESS"),
                ("CUSPARSE_STATUS_NOT_INITIALIZED", "CUDA_ERROR_NOT_INITIALIZED"),
                ("CUSPARSE_STATUS_ALLOC_FAILED", "CUDA_ERROR_OUT_OF_MEMORY"),
                ("CUSPARSE_STATUS_INVALID_VALUE", "CUDA_ERROR_INVALID_VALUE"),
                ("CUSPARSE_STATUS_ARCH_MISMATCH", "CUDA_ERROR_NOT_SUPPORTED"),
                ("CUSPARSE_STATUS_MAPPING_ERROR", "CUDA_ERROR_UNKNOWN"),
                ("CUSPARSE_STATUS_EXECUTION_FAILED", "CUDA_ERROR_UNKNOWN"),
                ("CUSPARSE_STATUS_INTERNAL_ERROR", "CUDA_ERROR_UNKNOWN"),
                ("CUSPARSE_STATUS_MATRIX_TYPE_NOT_SUPPORTED", "CUDA_ERROR_NOT_SUPPORTED"),
                ("CUSPARSE_STATUS_ZERO_PIVOT", "CUDA_ERROR_UNKNOWN"),
                ("CUSPARSE_STATUS_NOT_SUPPORTED", "CUDA_ERROR_NOT_SUPPORTED"),
                ("CUSPARSE_STATUS_INSUFFICIENT_RESOURCES", "CUDA_ERROR_OUT_OF_MEMORY"),
            ])),
    # libcusolver.so.12 (CUDA 13 ships cuSOLVER 12): the dense API's handles
    # declared in the spec, the generic client and server pieces; the 64-bit
    # API's host workspace is 'scratch' memory of the server.
    "cusolver": library(
        "cusolver", ["cusolverDn.h", "cusolverSp.h", "cusolverSp_LOWLEVEL_PREVIEW.h",
                     "cusolverRf.h"],
        {"cusolverStatus_t": "CUSOLVER_STATUS_NOT_SUPPORTED"},
        "gleam::interpose::report_library_unsupported", "interpose/library_call.hpp",
        "cusolver_export.hpp", version="libcusolver.so.12",
        generated=generated_calls(
            "cusolverStatus_t", "CUSOLVER", "CUSOLVER_STATUS_INVALID_VALUE",
            "CUSOLVER_STATUS_NOT_INITIALIZED", "CUSOLVER_STATUS_NOT_SUPPORTED",
            "interpose/cusolver/library.hpp", "gleam::interpose::cusolver",
            "cusolver_api", "executor/cusolver_api.hpp", "run_generated_cusolver",
            success="CUSOLVER_STATUS_SUCCESS", display="cuSOLVER",
            alloc_failed="CUSOLVER_STATUS_ALLOC_FAILED",
            internal="CUSOLVER_STATUS_INTERNAL_ERROR",
            client_traits="gleam::interpose::cusolver::traits",
            expression_words=("api", "least", "svd_job_ok", "svd_u_cols", "svd_vt_rows",
                              "svd_rwork", "less_one", "laswp_pivots", "getrf_workspace",
                              "irs_main_size", "irs_keep_precision",
                              "MAJOR_VERSION", "MINOR_VERSION", "PATCH_LEVEL"),
            statuses=[
                ("CUSOLVER_STATUS_SUCCESS", "CUDA_SUCCESS"),
                ("CUSOLVER_STATUS_NOT_INITIALIZED", "CUDA_ERROR_NOT_INITIALIZED"),
                ("CUSOLVER_STATUS_ALLOC_FAILED", "CUDA_ERROR_OUT_OF_MEMORY"),
                ("CUSOLVER_STATUS_INVALID_VALUE", "CUDA_ERROR_INVALID_VALUE"),
                ("CUSOLVER_STATUS_ARCH_MISMATCH", "CUDA_ERROR_NOT_SUPPORTED"),
                ("CUSOLVER_STATUS_MAPPING_ERROR", "CUDA_ERROR_INVALID_VALUE"),
                ("CUSOLVER_STATUS_EXECUTION_FAILED", "CUDA_ERROR_LAUNCH_FAILED"),
                ("CUSOLVER_STATUS_INTERNAL_ERROR", "CUDA_ERROR_UNKNOWN"),
                ("CUSOLVER_STATUS_MATRIX_TYPE_NOT_SUPPORTED", "CUDA_ERROR_NOT_SUPPORTED"),
                ("CUSOLVER_STATUS_NOT_SUPPORTED", "CUDA_ERROR_NOT_SUPPORTED"),
                ("CUSOLVER_STATUS_ZERO_PIVOT", "CUDA_ERROR_INVALID_VALUE"),
                ("CUSOLVER_STATUS_INVALID_LICENSE", "CUDA_ERROR_NOT_SUPPORTED"),
                ("CUSOLVER_STATUS_IRS_PARAMS_NOT_INITIALIZED", "CUDA_ERROR_INVALID_VALUE"),
                ("CUSOLVER_STATUS_IRS_PARAMS_INVALID", "CUDA_ERROR_INVALID_VALUE"),
                ("CUSOLVER_STATUS_IRS_PARAMS_INVALID_PREC", "CUDA_ERROR_INVALID_VALUE"),
                ("CUSOLVER_STATUS_IRS_PARAMS_INVALID_REFINE", "CUDA_ERROR_INVALID_VALUE"),
                ("CUSOLVER_STATUS_IRS_PARAMS_INVALID_MAXITER", "CUDA_ERROR_INVALID_VALUE"),
                ("CUSOLVER_STATUS_IRS_INTERNAL_ERROR", "CUDA_ERROR_UNKNOWN"),
                ("CUSOLVER_STATUS_IRS_NOT_SUPPORTED", "CUDA_ERROR_NOT_SUPPORTED"),
                ("CUSOLVER_STATUS_IRS_OUT_OF_RANGE", "CUDA_ERROR_INVALID_VALUE"),
                ("CUSOLVER_STATUS_IRS_NRHS_NOT_SUPPORTED_FOR_REFINE_GMRES",
                 "CUDA_ERROR_NOT_SUPPORTED"),
                ("CUSOLVER_STATUS_IRS_INFOS_NOT_INITIALIZED", "CUDA_ERROR_INVALID_VALUE"),
                ("CUSOLVER_STATUS_IRS_INFOS_NOT_DESTROYED", "CUDA_ERROR_INVALID_VALUE"),
                ("CUSOLVER_STATUS_IRS_MATRIX_SINGULAR", "CUDA_ERROR_INVALID_VALUE"),
                ("CUSOLVER_STATUS_INVALID_WORKSPACE", "CUDA_ERROR_INVALID_VALUE"),
            ])),
    # libnvidia-ml.so.1 (NVML, next to the driver): unversioned names like
    # the vendor's. No nvml.h is installed with the toolkit: the spec carries
    # the prototypes and wire/nvml.h the types. Every stub first checks that
    # the app initialized NVML; an nvmlDevice_t it does not hold is
    # NVML_ERROR_INVALID_ARGUMENT, as the vendor's.
    "nvml": library(
        "nvml", ["wire/nvml.h"],
        {"nvmlReturn_t": "NVML_ERROR_NOT_SUPPORTED",
         "const char *": '"unsupported by gleam"'},
        "gleam::interpose::report_library_unsupported", "interpose/library_call.hpp",
        "nvml_export.hpp", version=None, prototypes=True,
        generated=generated_calls(
            "nvmlReturn_t", "NVML", "NVML_ERROR_INVALID_ARGUMENT",
            "NVML_ERROR_INVALID_ARGUMENT", "NVML_ERROR_NOT_SUPPORTED",
            "interpose/nvml/library.hpp", "gleam::interpose::nvml",
            "nvml_api", "executor/nvml_api.hpp", "run_generated_nvml",
            success="NVML_SUCCESS", display="NVML",
            alloc_failed="NVML_ERROR_MEMORY",
            internal="NVML_ERROR_UNKNOWN",
            client_traits="gleam::interpose::nvml::traits",
            manual_server="run_manual_nvml",
            precondition="gleam::interpose::nvml::initialized()",
            statuses=[
                ("NVML_SUCCESS", "CUDA_SUCCESS"),
                ("NVML_ERROR_UNINITIALIZED", "CUDA_ERROR_NOT_INITIALIZED"),
                ("NVML_ERROR_INVALID_ARGUMENT", "CUDA_ERROR_INVALID_VALUE"),
                ("NVML_ERROR_NOT_SUPPORTED", "CUDA_ERROR_NOT_SUPPORTED"),
                ("NVML_ERROR_NO_PERMISSION", "CUDA_ERROR_NOT_PERMITTED"),
                ("NVML_ERROR_NOT_FOUND", "CUDA_ERROR_NOT_FOUND"),
                ("NVML_ERROR_INSUFFICIENT_SIZE", "CUDA_ERROR_INVALID_VALUE"),
                ("NVML_ERROR_DRIVER_NOT_LOADED", "CUDA_ERROR_NOT_INITIALIZED"),
                ("NVML_ERROR_GPU_IS_LOST", "CUDA_ERROR_UNKNOWN"),
                ("NVML_ERROR_MEMORY", "CUDA_ERROR_OUT_OF_MEMORY"),
                ("NVML_ERROR_NO_DATA", "CUDA_ERROR_NOT_FOUND"),
                ("NVML_ERROR_ARGUMENT_VERSION_MISMATCH", "CUDA_ERROR_INVALID_VALUE"),
                ("NVML_ERROR_UNKNOWN", "CUDA_ERROR_UNKNOWN"),
            ])),
    # libcudnn.so.9 (cuDNN 9): handles declared in the spec, the generic
    # client and server pieces, the backend API's attribute calls
    # hand-written on both sides. A handle the app does not hold is
    # CUDNN_STATUS_BAD_PARAM, as the vendor answers.
    "cudnn": library(
        "cudnn", ["cudnn.h"],
        {"cudnnStatus_t": "CUDNN_STATUS_NOT_SUPPORTED",
         "const char *": '"unsupported by gleam"', "size_t": "0"},
        "gleam::interpose::report_library_unsupported", "interpose/library_call.hpp",
        "cudnn_export.hpp", version="libcudnn.so.9",
        generated=generated_calls(
            "cudnnStatus_t", "CUDNN", "CUDNN_STATUS_BAD_PARAM",
            "CUDNN_STATUS_BAD_PARAM", "CUDNN_STATUS_NOT_SUPPORTED",
            "interpose/cudnn/library.hpp", "gleam::interpose::cudnn",
            "cudnn_api", "executor/cudnn_api.hpp", "run_generated_cudnn",
            success="CUDNN_STATUS_SUCCESS", display="cuDNN",
            alloc_failed="CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED",
            internal="CUDNN_STATUS_INTERNAL_ERROR",
            client_traits="gleam::interpose::cudnn::traits",
            manual_server="run_manual_cudnn",
            expression_words=("api", "cudnn_tensor_bytes", "cudnn_filter_bytes",
                              "cudnn_scaling_bytes", "cudnn_value_bytes", "cudnn_variant_pack",
                              "cudnn_type_bytes", "cudnn_tensor_dim", "cudnn_rnn_data_bytes",
                              "cudnn_rnn_batch", "cudnn_seq_data_bytes", "cudnn_seq_batch",
                              "cudnn_attn_qo_length", "cudnn_grid_bytes", "cudnn_theta_bytes",
                              "cudnn_im2col_bytes", "cudnn_bias_bytes", "cudnn_label_count"),
            client_api="gleam::interpose::cudnn::client_descriptors",
            statuses=[
                ("CUDNN_STATUS_SUCCESS", "CUDA_SUCCESS"),
                ("CUDNN_STATUS_NOT_INITIALIZED", "CUDA_ERROR_NOT_INITIALIZED"),
                ("CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH", "CUDA_ERROR_NOT_SUPPORTED"),
                ("CUDNN_STATUS_SERIALIZATION_VERSION_MISMATCH", "CUDA_ERROR_NOT_SUPPORTED"),
                ("CUDNN_STATUS_DEPRECATED", "CUDA_ERROR_NOT_SUPPORTED"),
                ("CUDNN_STATUS_LICENSE_ERROR", "CUDA_ERROR_NOT_SUPPORTED"),
                ("CUDNN_STATUS_RUNTIME_IN_PROGRESS", "CUDA_ERROR_NOT_READY"),
                ("CUDNN_STATUS_RUNTIME_FP_OVERFLOW", "CUDA_ERROR_UNKNOWN"),
                ("CUDNN_STATUS_SUBLIBRARY_LOADING_FAILED", "CUDA_ERROR_NOT_SUPPORTED"),
                ("CUDNN_STATUS_BAD_PARAM", "CUDA_ERROR_INVALID_VALUE"),
                ("CUDNN_STATUS_BAD_PARAM_NULL_POINTER", "CUDA_ERROR_INVALID_VALUE"),
                ("CUDNN_STATUS_BAD_PARAM_MISALIGNED_POINTER", "CUDA_ERROR_INVALID_VALUE"),
                ("CUDNN_STATUS_BAD_PARAM_NOT_FINALIZED", "CUDA_ERROR_INVALID_VALUE"),
                ("CUDNN_STATUS_BAD_PARAM_OUT_OF_BOUND", "CUDA_ERROR_INVALID_VALUE"),
                ("CUDNN_STATUS_BAD_PARAM_SIZE_INSUFFICIENT", "CUDA_ERROR_INVALID_VALUE"),
                ("CUDNN_STATUS_BAD_PARAM_STREAM_MISMATCH", "CUDA_ERROR_INVALID_VALUE"),
                ("CUDNN_STATUS_BAD_PARAM_SHAPE_MISMATCH", "CUDA_ERROR_INVALID_VALUE"),
                ("CUDNN_STATUS_BAD_PARAM_DUPLICATED_ENTRIES", "CUDA_ERROR_INVALID_VALUE"),
                ("CUDNN_STATUS_BAD_PARAM_ATTRIBUTE_TYPE", "CUDA_ERROR_INVALID_VALUE"),
                ("CUDNN_STATUS_BAD_PARAM_CUDA_GRAPH_MISMATCH", "CUDA_ERROR_INVALID_VALUE"),
                ("CUDNN_STATUS_BAD_PARAM_DESCRIPTOR_TYPE", "CUDA_ERROR_INVALID_VALUE"),
                ("CUDNN_STATUS_NOT_SUPPORTED", "CUDA_ERROR_NOT_SUPPORTED"),
                ("CUDNN_STATUS_NOT_SUPPORTED_GRAPH_PATTERN", "CUDA_ERROR_NOT_SUPPORTED"),
                ("CUDNN_STATUS_NOT_SUPPORTED_SHAPE", "CUDA_ERROR_NOT_SUPPORTED"),
                ("CUDNN_STATUS_NOT_SUPPORTED_DATA_TYPE", "CUDA_ERROR_NOT_SUPPORTED"),
                ("CUDNN_STATUS_NOT_SUPPORTED_LAYOUT", "CUDA_ERROR_NOT_SUPPORTED"),
                ("CUDNN_STATUS_NOT_SUPPORTED_INCOMPATIBLE_CUDA_DRIVER", "CUDA_ERROR_NOT_SUPPORTED"),
                ("CUDNN_STATUS_NOT_SUPPORTED_INCOMPATIBLE_CUDART", "CUDA_ERROR_NOT_SUPPORTED"),
                ("CUDNN_STATUS_NOT_SUPPORTED_ARCH_MISMATCH", "CUDA_ERROR_NOT_SUPPORTED"),
                ("CUDNN_STATUS_NOT_SUPPORTED_RUNTIME_PREREQUISITE_MISSING", "CUDA_ERROR_NOT_SUPPORTED"),
                ("CUDNN_STATUS_NOT_SUPPORTED_SUBLIBRARY_UNAVAILABLE", "CUDA_ERROR_NOT_SUPPORTED"),
                ("CUDNN_STATUS_NOT_SUPPORTED_SHARED_MEMORY_INSUFFICIENT", "CUDA_ERROR_NOT_SUPPORTED"),
                ("CUDNN_STATUS_NOT_SUPPORTED_PADDING", "CUDA_ERROR_NOT_SUPPORTED"),
                ("CUDNN_STATUS_NOT_SUPPORTED_BAD_LAUNCH_PARAM", "CUDA_ERROR_NOT_SUPPORTED"),
                ("CUDNN_STATUS_NOT_SUPPORTED_CUDA_GRAPH_NATIVE_API", "CUDA_ERROR_NOT_SUPPORTED"),
                ("CUDNN_STATUS_NOT_SUPPORTED_INVALID_DYNAMIC_SHAPE", "CUDA_ERROR_NOT_SUPPORTED"),
                ("CUDNN_STATUS_INTERNAL_ERROR", "CUDA_ERROR_UNKNOWN"),
                ("CUDNN_STATUS_INTERNAL_ERROR_COMPILATION_FAILED", "CUDA_ERROR_UNKNOWN"),
                ("CUDNN_STATUS_INTERNAL_ERROR_UNEXPECTED_VALUE", "CUDA_ERROR_UNKNOWN"),
                ("CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED", "CUDA_ERROR_OUT_OF_MEMORY"),
                ("CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED", "CUDA_ERROR_OUT_OF_MEMORY"),
                ("CUDNN_STATUS_INTERNAL_ERROR_BAD_LAUNCH_PARAM", "CUDA_ERROR_UNKNOWN"),
                ("CUDNN_STATUS_INTERNAL_ERROR_TEXTURE_CREATION_FAILED", "CUDA_ERROR_UNKNOWN"),
                ("CUDNN_STATUS_EXECUTION_FAILED", "CUDA_ERROR_UNKNOWN"),
                ("CUDNN_STATUS_EXECUTION_FAILED_CUDA_DRIVER", "CUDA_ERROR_UNKNOWN"),
                ("CUDNN_STATUS_EXECUTION_FAILED_CUBLAS", "CUDA_ERROR_UNKNOWN"),
                ("CUDNN_STATUS_EXECUTION_FAILED_CUDART", "CUDA_ERROR_UNKNOWN"),
                ("CUDNN_STATUS_EXECUTION_FAILED_CURAND", "CUDA_ERROR_UNKNOWN"),
            ])),
}

PRIVATE_VERSION = "GLEAM_PRIVATE_1"

# Set by main() from --library.
LIB = LIBRARIES["cudart"]


def banner():
    return ("// Generated by interpose/gen/generate.py from interpose/spec/%s.spec.\n"
            "// Do not edit: change the spec and rebuild.\n" % LIB.name)


class spec_error(Exception):
    """A malformed spec line: carries the file name and line number."""


class param:
    """One parameter: its C declaration, name and pointer annotation.

    kind is None for the plain '<dir> <length>' annotation, "dev" for a
    device pointer (length: elements of the pointee touched, bytes for void)
    and "scalar" for a pointer-mode scalar (length: elements, default 1;
    bytes for void, then required)."""

    def __init__(self, decl, name, direction, length, kind=None):
        self.decl = decl
        self.name = name
        self.direction = direction
        self.length = length
        # Generated entries: see library_calls.POINTER_KINDS / VALUE_KINDS.
        self.kind = kind
        # '| optional': a handle value the function takes as NULL.
        self.optional = False
        # 'out handle host'; the declared handle type of a handle parameter.
        self.host_handle = False
        self.handle = None

    def ctype(self):
        """The declared C type without the name, e.g. 'const float *'."""
        return self.decl[:self.decl.rfind(self.name)].strip()

    def pointee(self):
        """The pointee type without qualifiers, e.g. 'float' or 'void'; for
        a devarray, the type of the elements its pointers point to."""
        base = self.ctype()
        if base.endswith("*"):
            base = base[:-1]
        words = [w for w in base.replace("*", " * ").split() if w != "const"]
        if self.kind == "devarray" and words and words[-1] == "*":
            words = words[:-1]
        return " ".join(words)

    def array_parts(self):
        """A devarray's (count, elements of each) expressions."""
        count, _, each = self.length.partition(";")
        return count.strip(), each.strip()


class function:
    """One spec entry."""

    def __init__(self, name, line):
        self.name = name
        self.line = line
        self.header = None
        self.returns = None
        self.cls = None
        self.form = None
        self.reason = None
        # cuda.spec: the CUDA version (1000 * major + 10 * minor) that
        # introduced this _vN variant; cuGetProcAddress hands it out to
        # callers of that version or newer.
        self.since = 0
        self.fail = None
        self.call = None
        self.notes = []
        self.params = []
        self.id = None
        self.checks = []
        # 'remember <handle>.<field> = <param>' lines: (handle, field, param).
        self.remember = []
        # 'verify <condition>' lines: server-side checks before the call.
        self.verify = []
        # 'async <condition>': a sync entry that does not wait when the
        # condition holds at the call (None: always as 'call' says).
        self.async_when = None
        # Legacy entries: the function they forward to, and explicit
        # "<target param>=<expression>" arguments.
        self.forward = None
        self.forward_args = {}

    def prototype(self):
        """The C prototype, e.g. 'cudaError_t cudaFree(void *devPtr)'."""
        args = ", ".join(p.decl for p in self.params) or "void"
        sep = "" if self.returns.endswith("*") else " "
        return "%s%s%s(%s)" % (self.returns, sep, self.name, args)

    def failure_value(self):
        """The value an unsupported stub returns; None for void functions."""
        if self.returns == "void":
            return None
        if self.fail is not None:
            return self.fail
        if self.returns in LIB.fail:
            return LIB.fail[self.returns]
        if self.returns.endswith("*"):
            return "nullptr"
        if self.returns in INTEGRAL:
            return "0"
        return None


def param_name(decl):
    """The declared name of a C parameter declaration."""
    m = re.search(r"\(\s*\*\s*(\w+)\s*\)", decl)
    if m:
        return m.group(1)
    m = re.search(r"(\w+)\s*(\[[^\]]*\])?\s*$", decl)
    return m.group(1) if m else None


def parse_param(text, where):
    decl, _, note = text.partition("|")
    decl = decl.strip()
    name = param_name(decl)
    if not name:
        raise spec_error("%s: cannot find the parameter name in '%s'" % (where, decl))
    direction = length = kind = None
    if note.strip():
        generated = library_calls.parse_note(decl, name, note, where, spec_error, param)
        if generated is not None:
            return generated
        words = note.split(None, 1)
        if len(words) != 2 or words[0] not in DIRECTIONS:
            raise spec_error("%s: annotation '%s' must be '<in|out|inout> <length>'"
                             % (where, note.strip()))
        direction, length = words[0], words[1].strip()
    elif "*" in decl:
        raise spec_error("%s: pointer parameter '%s' needs '| <in|out|inout> <length>'"
                         % (where, decl))
    return param(decl, name, direction, length)


def parse(path):
    """Reads the spec; returns the functions in file order."""
    functions = []
    current = None
    with open(path) as f:
        lines = f.read().splitlines()
    for number, raw in enumerate(lines, 1):
        where = "%s:%d" % (path, number)
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        key, _, rest = line.partition(" ")
        rest = rest.strip()
        if key == "fn":
            if current is not None:
                raise spec_error("%s: 'fn %s' starts before 'end' of %s"
                                 % (where, rest, current.name))
            if not re.match(r"^\w+$", rest):
                raise spec_error("%s: bad function name '%s'" % (where, rest))
            current = function(rest, number)
            continue
        if key == "handle" and current is None:
            if functions:
                raise spec_error("%s: 'handle' lines come before the first entry" % where)
            LIB.handles.append(library_calls.parse_handle_line(
                rest, where, spec_error, len(LIB.handles), number))
            continue
        if current is None:
            raise spec_error("%s: '%s' outside of an fn ... end entry" % (where, key))
        if key == "end":
            validate(current, path)
            functions.append(current)
            current = None
        elif key == "header":
            current.header = rest
        elif key == "returns":
            current.returns = rest
        elif key == "class":
            words = rest.split()
            if not words or words[0] not in CLASSES:
                raise spec_error("%s: class must be one of %s, not '%s'"
                                 % (where, ", ".join(CLASSES), rest))
            current.cls = words[0]
            current.form = words[1] if len(words) > 1 else None
        elif key == "reason":
            current.reason = rest
        elif key == "since":
            if not LIB.proc_table or not re.match(r"^[1-9]\d{3,4}$", rest):
                raise spec_error("%s: 'since <cudaVersion>' belongs to the driver's _vN "
                                 "variants, not '%s'" % (where, rest))
            current.since = int(rest)
        elif key == "fail":
            current.fail = rest
        elif key == "call":
            if rest not in CALLS:
                raise spec_error("%s: call must be one of %s, not '%s'"
                                 % (where, ", ".join(CALLS), rest))
            current.call = rest
        elif key == "note":
            current.notes.append(rest)
        elif key == "id":
            if not re.match(r"^[1-9]\d*$", rest):
                raise spec_error("%s: id must be a positive integer, not '%s'" % (where, rest))
            current.id = int(rest)
        elif key == "forward":
            words = rest.split()
            if not words:
                raise spec_error("%s: forward needs the function to forward to" % where)
            current.forward = words[0]
            for w in words[1:]:
                target, eq, expr = w.partition("=")
                if not eq or not target or not expr:
                    raise spec_error("%s: forward argument '%s' is not <param>=<expr>"
                                     % (where, w))
                current.forward_args[target] = expr
        elif key == "async":
            if not rest:
                raise spec_error("%s: async needs the condition under which the call does "
                                 "not wait" % where)
            current.async_when = rest
        elif key == "remember":
            # remember <handle param>.<field> = <param>
            m = re.match(r"^(\w+)\.(\w+)\s*=\s*(\w+)$", rest)
            if not m:
                raise spec_error("%s: remember takes '<handle>.<field> = <param>'" % where)
            current.remember.append(m.groups())
        elif key == "verify":
            if not rest:
                raise spec_error("%s: verify needs a condition" % where)
            current.verify.append(rest)
        elif key == "check":
            # check <condition> [else <status>]
            condition, _, status = rest.partition(" else ")
            if not condition.strip() or (status and not re.match(r"^\w+$", status.strip())):
                raise spec_error("%s: check needs a condition, then optionally 'else <status>'"
                                 % where)
            current.checks.append((condition.strip(), status.strip() or None))
        elif key == "param":
            current.params.append(parse_param(rest, where))
        else:
            raise spec_error("%s: unknown key '%s'" % (where, key))
    if current is not None:
        raise spec_error("%s: entry %s has no 'end'" % (path, current.name))
    by_name = {f.name: f for f in functions}
    for fn in functions:
        if fn.forward is not None:
            target = by_name.get(fn.forward)
            if target is None or target.cls not in ("generated", "manual") \
                    or target.forward is not None:
                raise spec_error("%s:%d: %s forwards to %s, which is no generated or "
                                 "hand-written function with a handle"
                                 % (path, fn.line, fn.name, fn.forward))
            try:
                library_calls.forward_arguments(fn, target, LIB)
            except ValueError as e:
                raise spec_error("%s:%d: %s: %s" % (path, fn.line, fn.name, e))
    seen = set()
    ids = {}
    for fn in functions:
        if fn.name in seen:
            raise spec_error("%s:%d: %s appears twice" % (path, fn.line, fn.name))
        seen.add(fn.name)
        if fn.id is not None:
            if fn.id in ids:
                raise spec_error("%s:%d: id %d of %s is already %s's"
                                 % (path, fn.line, fn.id, fn.name, ids[fn.id]))
            ids[fn.id] = fn.name
    return functions


def validate(fn, path):
    where = "%s:%d (%s)" % (path, fn.line, fn.name)
    for field in ("header", "returns", "cls", "call"):
        if getattr(fn, field) is None:
            raise spec_error("%s: missing '%s'" % (where, "class" if field == "cls" else field))
    if fn.cls == "unsupported":
        if not fn.reason:
            raise spec_error("%s: unsupported needs a non-empty 'reason'" % where)
        if fn.returns != "void" and fn.failure_value() is None:
            raise spec_error("%s: returns %s; give the failure value with 'fail <expr>'"
                             % (where, fn.returns))
        if '"' in fn.reason or "\\" in fn.reason:
            raise spec_error("%s: the reason may not contain quotes or backslashes" % where)
    elif fn.reason or fn.fail:
        raise spec_error("%s: 'reason' and 'fail' belong to unsupported entries only" % where)
    if fn.cls == "generated":
        library_calls.validate_generated(fn, where, LIB, LIB.handles, spec_error)
    elif fn.checks or fn.remember or fn.async_when or fn.verify:
        raise spec_error("%s: 'check', 'remember', 'verify' and 'async' belong to generated "
                         "entries only" % where)
    elif fn.id is not None and (fn.cls != "manual" or LIB.generated is None):
        raise spec_error("%s: 'id' belongs to generated entries and to manual entries of "
                         "libraries with generated calls (their hand-written server side)"
                         % where)
    names = {p.name for p in fn.params}
    words = EXPRESSION_WORDS + (LIB.generated.expression_words if LIB.generated else ())
    for p in fn.params:
        if p.kind is not None and fn.cls != "generated":
            raise spec_error("%s: '%s %s' annotations belong to generated entries only"
                             % (where, p.direction, p.kind))
        if p.length is None or p.length in ("opaque", "cstr"):
            continue
        for ident in re.findall(r"[A-Za-z_]\w*", p.length):
            # note(<handle>): server-side, checked by validate_generated.
            if ident == "note" and p.kind == "dev":
                continue
            if ident not in names and ident not in words \
                    and not library_calls.EXPRESSION_CONSTANT.match(ident):
                raise spec_error("%s: length '%s' of %s names no parameter '%s'"
                                 % (where, p.length, p.name, ident))
    conditions = [c for c, _ in fn.checks] + ([fn.async_when] if fn.async_when else [])
    for check in conditions + fn.verify:
        server_words = ("env", "note") if check in fn.verify else ()
        for ident in re.findall(r"[A-Za-z_]\w*", check):
            if ident not in names and ident not in words and ident not in server_words \
                    and not library_calls.EXPRESSION_CONSTANT.match(ident):
                raise spec_error("%s: check '%s' names no parameter '%s'"
                                 % (where, check, ident))


def write_if_changed(path, text):
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    if os.path.exists(path):
        with open(path) as f:
            if f.read() == text:
                return
    with open(path, "w") as f:
        f.write(text)


def version_script(functions):
    body = "".join("    %s;\n" % n for n in sorted(f.name for f in functions))
    text = ("/* Generated from interpose/spec/%s.spec. Do not edit. */\n%s{\n"
            "  global:\n%s  local:\n    *;\n};\n"
            % (LIB.name, LIB.version + " " if LIB.version else "", body))
    if LIB.private:
        text += "%s {\n  global:\n%s};\n" % (
            PRIVATE_VERSION, "".join("    %s;\n" % n for n in LIB.private))
    return text


def stub(fn, reason):
    value = fn.failure_value()
    ret = "  return %s;\n" % value if value is not None else ""
    return ("GLEAM_INTERPOSE_EXPORT %s {\n"
            "  %s(\"%s\", \"%s\");\n%s}\n"
            % (fn.prototype(), LIB.report, fn.name, reason, ret))


def stubs_file(functions, reason_of, what, vendor_header=None):
    if vendor_header is None:
        includes = '#include "interpose/%s"\n' % LIB.export_header
        if LIB.proc_table:
            # The driver's legacy (v1) and per-thread names are macros
            # unless the vendor's internal view is on; its stubs define them.
            includes = "#define __CUDA_API_VERSION_INTERNAL\n" + includes
    else:
        includes = ("#include <%s>\n\n"
                    '#define GLEAM_INTERPOSE_EXPORT __attribute__((visibility("default")))\n'
                    % vendor_header)
    out = [banner(), "// %s\n\n" % what,
           '%s#include "%s"\n\n' % (includes, LIB.report_header),
           "static_assert(noexcept(%s(\"\", \"\")),\n" % LIB.report,
           "              \"report_unsupported must be noexcept: no exception may "
           "cross the C ABI\");\n\n",
           'extern "C" {\n\n']
    for fn in functions:
        out.append(stub(fn, reason_of(fn)) + "\n")
    out.append('} // extern "C"\n')
    return "".join(out)


def export_header(functions):
    own = [f for f in functions if f.header == "none" or LIB.prototypes]
    out = [banner(), "#pragma once\n\n",
           "/// The vendor runtime headers, included so that every definition of the\n"
           "/// interposer is checked against the vendor prototype. Define\n"
           "/// __CUDA_API_VERSION_INTERNAL before including this header to see the\n"
           "/// _ptsz/_ptds names and the plain names side by side.\n"]
    out += ["#include <%s>\n" % h for h in LIB.headers]
    out += ["\n/// Marks a definition as part of the exported surface (the version script\n"
            "/// %s.map decides the final set).\n" % LIB.name,
            "#ifndef GLEAM_INTERPOSE_EXPORT\n",
            '#define GLEAM_INTERPOSE_EXPORT __attribute__((visibility("default")))\n',
            "#endif\n\n",
            "/// Functions that the vendor declares only for its own code (or not\n"
            "/// at all); prototypes from interpose/spec/%s.spec.\n" % LIB.name,
            'extern "C" {\n']
    for fn in own:
        for note in fn.notes:
            out.append("/// %s\n" % note)
        if not fn.notes:
            out.append("/// %s internal entry point.\n" % LIB.name)
        out.append("%s;\n" % fn.prototype())
    out.append('} // extern "C"\n')
    return "".join(out)


def prototypes_header(functions):
    """The server's declarations of a library whose vendor header is not
    installed: its types, and the spec's prototype of every function."""
    out = [banner(), "#pragma once\n\n",
           "/// The %s functions as the spec declares them (no vendor header with\n"
           "/// their prototypes is installed), for the server's loaded library.\n"
           % LIB.name]
    out += ["#include <%s>\n" % h for h in LIB.headers]
    out.append('\nextern "C" {\n')
    out += ["%s;\n" % f.prototype() for f in functions]
    out.append('} // extern "C"\n')
    return "".join(out)


def generated_of(functions):
    return [f for f in functions if f.cls == "generated"]


VDPAU_SHIM = """// Fallback for hosts without libvdpau-dev: the VDPAU types that
// cuda_vdpau_interop.h names, with the ABI of vdpau/vdpau.h.
#pragma once
#include <stdint.h>
typedef uint32_t VdpDevice;
typedef uint32_t VdpVideoSurface;
typedef uint32_t VdpOutputSurface;
typedef uint32_t VdpFuncId;
typedef int VdpStatus;
typedef VdpStatus VdpGetProcAddress(VdpDevice device, VdpFuncId function_id,
                                    void **function_pointer);
"""

GL_SHIM = """// Fallback for hosts without OpenGL headers: the GL types that
// cuda_gl_interop.h names, with the ABI of GL/gl.h.
#pragma once
typedef unsigned int GLenum;
typedef unsigned int GLuint;
"""


def main():
    global LIB
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--spec", required=True)
    ap.add_argument("--library", "--surface", choices=sorted(LIBRARIES),
                    help="which library the spec describes (default: the spec's stem)")
    ap.add_argument("--out-dir", help="where the outputs go (omit to only check the spec)")
    ap.add_argument("--manual-placeholder", action="store_true",
                    help="also write <lib>_manual_placeholder.cpp")
    ap.add_argument("--server-out-dir",
                    help="write only the server side of the generated calls here: "
                         "<lib>_library_calls.cpp and <lib>_generated_api.inc")
    args = ap.parse_args()
    name = args.library or os.path.splitext(os.path.basename(args.spec))[0]
    LIB = LIBRARIES.get(name, LIBRARIES["cudart"])
    try:
        functions = parse(args.spec)
    except spec_error as e:
        print("generate.py: error: %s" % e, file=sys.stderr)
        return 1
    except OSError as e:
        print("generate.py: error: cannot read the spec %s: %s" % (args.spec, e),
              file=sys.stderr)
        return 1
    if args.server_out_dir:
        if LIB.generated is None:
            print("generate.py: error: %s has no generated calls" % LIB.name, file=sys.stderr)
            return 1
        write_if_changed(os.path.join(args.server_out_dir, LIB.name + "_library_calls.cpp"),
                         library_calls.server_file(functions, LIB, banner()))
        write_if_changed(os.path.join(args.server_out_dir, LIB.name + "_generated_api.inc"),
                         library_calls.api_list(functions, banner(), LIB.handles))
        if LIB.prototypes:
            write_if_changed(os.path.join(args.server_out_dir, LIB.name + "_prototypes.hpp"),
                             prototypes_header(functions))
        write_if_changed(os.path.join(args.server_out_dir, LIB.name + "_function_ids.hpp"),
                         library_calls.id_header(functions, LIB, banner()))
    if not args.out_dir:
        return 0
    out = args.out_dir
    lib = LIB.name
    by_name = sorted(functions, key=lambda f: f.name)
    unsupported = [f for f in by_name if f.cls == "unsupported"]
    manual = [f for f in by_name if f.cls == "manual"]
    write_if_changed(os.path.join(out, lib + ".map"), version_script(functions))
    write_if_changed(os.path.join(out, lib + "_symbols.txt"),
                     "".join(f.name + "\n" for f in by_name))
    write_if_changed(os.path.join(out, lib + "_manual.txt"),
                     "".join(f.name + "\n" for f in manual))
    write_if_changed(os.path.join(out, lib + "_unsupported.txt"),
                     "".join("%s\t%s\n" % (f.name, f.reason) for f in unsupported))
    write_if_changed(os.path.join(out, lib + "_private.txt"),
                     "".join(n + "\n" for n in LIB.private))
    write_if_changed(os.path.join(out, LIB.export_header), export_header(by_name))
    if LIB.proc_table:
        # The name -> function table of cuGetProcAddress: every export,
        # with the CUDA version that introduced it (0: the name's first ABI).
        write_if_changed(os.path.join(out, lib + "_proc_table.inc"),
                         banner() + "".join("GLEAM_DRIVER_PROC(%s, %d)\n" % (f.name, f.since)
                                            for f in by_name))
    if lib == "cudart":
        write_if_changed(os.path.join(out, "shim", "vdpau", "vdpau.h"), VDPAU_SHIM)
        write_if_changed(os.path.join(out, "shim", "GL", "gl.h"), GL_SHIM)
    if LIB.generated is not None:
        write_if_changed(os.path.join(out, lib + "_generated.cpp"),
                         library_calls.client_file(by_name, LIB, banner()))
        write_if_changed(os.path.join(out, lib + "_function_ids.hpp"),
                         library_calls.id_header(functions, LIB, banner()))
        write_if_changed(os.path.join(out, lib + "_generated.txt"),
                         "".join("%s\t%s\n" % (f.name, f.id if f.forward is None else
                                                  "forward " + f.forward)
                                 for f in generated_of(by_name)))
    write_if_changed(os.path.join(out, lib + "_unsupported.cpp"),
                     stubs_file([f for f in unsupported if f.header not in LIB.split],
                                lambda f: f.reason,
                                "Functions of the %s surface that Gleam does not support."
                                % lib))
    for header, suffix in sorted(LIB.split.items()):
        write_if_changed(os.path.join(out, "%s_unsupported_%s.cpp" % (lib, suffix)),
                         stubs_file([f for f in unsupported if f.header == header],
                                    lambda f: f.reason,
                                    "Functions of %s that Gleam does not support." % header,
                                    header))
    if args.manual_placeholder:
        write_if_changed(os.path.join(out, lib + "_manual_placeholder.cpp"),
                         stubs_file(manual, lambda f: "its hand-written implementation "
                                    "is not built yet",
                                    "Placeholders for the hand-written functions, used "
                                    "while interpose/%s/ has no sources." % lib))
    return 0


if __name__ == "__main__":
    sys.exit(main())
