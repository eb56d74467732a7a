#!/usr/bin/env python3
"""Writes interpose/spec/cusparse.spec from the vendor's prototypes.

Reads the draft of every export (interpose/gen/draft_spec.py --header
cusparse.h, which asks clang for the prototypes) and gives each entry its
class: the annotations of the remoted functions (ANNOTATED below: ids,
extents, checks, 'verify' lines), the hand-written ones (MANUAL) and, for
everything else, 'unsupported' with the reason of its family (REASONS).
Ids are pinned in ANNOTATED and never reused. Run again after editing the
tables; the build never runs it.

  python3 interpose/gen/draft_spec.py --header cusparse.h \\
      --names interpose/spec/libcusparse.so.12.symbols > /tmp/cusparse.draft
  python3 interpose/gen/annotate_cusparse.py /tmp/cusparse.draft \\
      > interpose/spec/cusparse.spec

Python 3 standard library only.
"""

import re
import sys

HEADER = """\
# cusparse.spec: the cuSPARSE 12 surface of Gleam's interposer (libcusparse.so.12).
#
# Written by interpose/gen/annotate_cusparse.py (its tables hold the
# annotations; edit them there and run it again). In the format of
# cudnn.spec and curand.spec (see their headers and cublas.spec's):
# interpose/gen/generate.py --library cusparse writes the version script
# (every name with version libcusparse.so.12, like the vendor's), the client
# stubs of the generated entries, the unsupported stubs and the name lists
# into the build directory, and with --server-out-dir the server side
# (executor/). One entry per function the vendor's libcusparse.so.12 (CUDA
# 13.0, cuSPARSE 12.6) exports, no more, no less.
#
# Differences from cudnn.spec:
#   handle ... alias <type>
#                 the const descriptor types of the generic API
#                 (cusparseConstSpMatDescr_t, ...) name the same client
#                 objects as their mutable types
#   unsupported   the stub logs the name once and returns
#                 CUSPARSE_STATUS_NOT_SUPPORTED
#   handles       a handle or descriptor the app does not hold is
#                 CUSPARSE_STATUS_NOT_INITIALIZED at the call
#   scalars       alpha and beta are host memory of the compute type's size
#                 (cusparse_scalar_bytes); a handle in
#                 CUSPARSE_POINTER_MODE_DEVICE makes every call with scalars
#                 CUSPARSE_STATUS_NOT_SUPPORTED (logged once)
#   descriptors   the device arrays of a descriptor are checked when it is
#                 made (a null array is allowed: the SpGEMM result is made
#                 empty) and again at every call that computes with it
#                 ('verify cusparse_sparse_ok / cusparse_dense_ok /
#                 cusparse_vector_ok': the extent of every array from the
#                 vendor's descriptor as it is now, after any SetPointers or
#                 SetValues, with the batch strides the server keeps in the
#                 descriptor's note); the setters of pointers check nothing
#                 themselves ('in dev 0')
#   buffers       an externalBuffer is checked against the size the
#                 server's vendor reports for the same call (the
#                 _bufferSize function, called on the server at the
#                 execution: cusparse_spmm_buffer, ...), or against the
#                 size the app passes in (SpGEMM: '*bufferSize1')
#   async 1       descriptor creation does not wait for the server: the
#                 checks at the call cover what the vendor refuses; a later
#                 failure is the runtime's deferred CUDA error
#
# libcusparse.so.12.symbols next to this file is the vendor's exported set,
# regenerated with
#   nm -D --defined-only /usr/local/cuda/lib64/libcusparse.so.12 \\
#     | awk '$2 == "T" { sub(/@.*/, "", $3); print $3 }' | LC_ALL=C sort \\
#     > interpose/spec/libcusparse.so.12.symbols
# tests/interpose checks this spec against it.
#
# Entries are sorted by name (LC_ALL=C order).

handle cusparseHandle_t object cusparseContext destroy cusparseDestroy stream cusparseSetStream
handle cusparseMatDescr_t object cusparseMatDescr destroy cusparseDestroyMatDescr
handle cusparseSpMatDescr_t object cusparseSpMatDescr destroy cusparseDestroySpMat alias cusparseConstSpMatDescr_t
handle cusparseDnMatDescr_t object cusparseDnMatDescr destroy cusparseDestroyDnMat alias cusparseConstDnMatDescr_t
handle cusparseDnVecDescr_t object cusparseDnVecDescr destroy cusparseDestroyDnVec alias cusparseConstDnVecDescr_t
handle cusparseSpGEMMDescr_t object cusparseSpGEMMDescr destroy cusparseSpGEMM_destroyDescr
handle cusparseSpSVDescr_t object cusparseSpSVDescr destroy cusparseSpSV_destroyDescr
handle cusparseSpSMDescr_t object cusparseSpSMDescr destroy cusparseSpSM_destroyDescr
"""

SCALARS = "cusparse_host_scalars(api, handle) else CUSPARSE_STATUS_NOT_SUPPORTED"


def idx(ptr, count, index_type):
    """A descriptor array of `count` indices of `index_type` (null allowed)."""
    return "in dev cusparse_sized(%s, mul(%s, cusparse_index_bytes(%s)))" % (
        ptr, count, index_type)


def val(ptr, count, value_type):
    return "in dev cusparse_sized(%s, mul(%s, cusparse_value_bytes(%s)))" % (
        ptr, count, value_type)


def sparse_create(offsets, offsets_count, indices, values, offsets_type, indices_type):
    """Annotations of a CSR / CSC / COO creation."""
    return {
        "call": "sync", "async": "1",
        "checks": ["rows >= 0 && cols >= 0 && nnz >= 0",
                   "cusparse_index_bytes(%s) <= 8" % offsets_type,
                   "cusparse_index_bytes(%s) <= 8" % indices_type,
                   "idxBase == CUSPARSE_INDEX_BASE_ZERO || idxBase == CUSPARSE_INDEX_BASE_ONE",
                   "cusparse_value_bytes(valueType) <= 16"],
        "params": {"spMatDescr": "out handle",
                   offsets: idx(offsets, offsets_count, offsets_type),
                   indices: idx(indices, "nnz", indices_type),
                   values: val(values, "nnz", "valueType")},
    }


def csr_like(offsets, count, indices, values, otype, itype):
    return sparse_create(offsets, count, indices, values, otype, itype)


CSR = csr_like("csrRowOffsets", "rows + 1", "csrColInd", "csrValues",
               "csrRowOffsetsType", "csrColIndType")
CSC = csr_like("cscColOffsets", "cols + 1", "cscRowInd", "cscValues",
               "cscColOffsetsType", "cscRowIndType")
COO = sparse_create("cooRowInd", "nnz", "cooColInd", "cooValues", "cooIdxType", "cooIdxType")

DNMAT = {
    "call": "sync", "async": "1",
    "checks": ["rows >= 0 && cols >= 0 && ld >= 0",
               "order == CUSPARSE_ORDER_COL || order == CUSPARSE_ORDER_ROW",
               "ld >= (order == CUSPARSE_ORDER_COL ? rows : cols)",
               "cusparse_value_bytes(valueType) <= 16"],
    "params": {"dnMatDescr": "out handle",
               "values": "in dev cusparse_sized(values, cusparse_dense_bytes(rows, cols, ld, "
                         "valueType, order))"},
}

DNVEC = {
    "call": "sync", "async": "1",
    "checks": ["size >= 0", "cusparse_value_bytes(valueType) <= 16"],
    "params": {"dnVecDescr": "out handle",
               "values": val("values", "size", "valueType")},
}

NEW_OBJECT = {"call": "sync", "async": "1", "params": {0: "out handle"}}
DESTROY = {"call": "async", "params": {0: "destroys"}}


def getter(*outs, sync=True):
    """Every named pointer parameter an 'out host 1'."""
    return {"call": "sync", "params": {name: "out host 1" for name in outs}}


def compute(*verify, buffer=None, outs=(), scalars=True, call="async"):
    """A computing call: its descriptors verified, its buffer's extent."""
    spec = {"call": call, "verify": list(verify), "params": {}}
    if scalars:
        spec["checks"] = [SCALARS]
        spec["scalars"] = True
    if buffer is not None:
        spec["params"][buffer[0]] = "inout dev " + buffer[1]
    for name in outs:
        spec["params"][name] = "out host 1"
    if outs:
        spec["call"] = "sync"
    return spec


def sp(name):
    return "cusparse_sparse_ok(api, env, %s, note(%s))" % (name, name)


def dn(name):
    return "cusparse_dense_ok(api, env, %s)" % name


def vec(name):
    return "cusparse_vector_ok(api, env, %s)" % name


SPMM_ARGS = "api, handle, opA, opB, matA, matB, matC, computeType, alg"
SPMV_ARGS = "api, handle, opA, matA, vecX, vecY, computeType, alg"

# name -> (id, annotations). Ids are pinned: never renumber or reuse.
ANNOTATED = {
    "cusparseCreate": (1, {"call": "sync", "params": {"handle": "out handle"}}),
    "cusparseDestroy": (2, {"call": "async", "params": {"handle": "destroys"}}),
    "cusparseSetStream": (3, {"call": "async", "params": {"streamId": "stream"},
                              "remember": ["handle.stream = streamId"]}),
    "cusparseSetPointerMode": (4, {
        "call": "async", "remember": ["handle.pointer_mode = mode"],
        "checks": ["mode == CUSPARSE_POINTER_MODE_HOST || mode == CUSPARSE_POINTER_MODE_DEVICE"]}),
    "cusparseGetVersion": (5, getter("version")),
    "cusparseGetProperty": (6, {"call": "sync", "params": {"value": "out host 1"}}),
    "cusparseCreateMatDescr": (7, {"call": "sync", "async": "1",
                                   "params": {"descrA": "out handle"}}),
    "cusparseDestroyMatDescr": (8, {"call": "async", "params": {"descrA": "destroys"}}),
    "cusparseSetMatType": (9, {
        "call": "async", "remember": ["descrA.type = type"],
        "checks": ["type >= CUSPARSE_MATRIX_TYPE_GENERAL && "
                   "type <= CUSPARSE_MATRIX_TYPE_TRIANGULAR"]}),
    "cusparseSetMatIndexBase": (10, {
        "call": "async", "remember": ["descrA.base = base"],
        "checks": ["base == CUSPARSE_INDEX_BASE_ZERO || base == CUSPARSE_INDEX_BASE_ONE"]}),
    "cusparseSetMatFillMode": (11, {
        "call": "async", "remember": ["descrA.fill = fillMode"],
        "checks": ["fillMode == CUSPARSE_FILL_MODE_LOWER || "
                   "fillMode == CUSPARSE_FILL_MODE_UPPER"]}),
    "cusparseSetMatDiagType": (12, {
        "call": "async", "remember": ["descrA.diag = diagType"],
        "checks": ["diagType == CUSPARSE_DIAG_TYPE_NON_UNIT || "
                   "diagType == CUSPARSE_DIAG_TYPE_UNIT"]}),
    # Generic API descriptors.
    "cusparseCreateCsr": (20, CSR),
    "cusparseCreateConstCsr": (21, CSR),
    "cusparseCreateCsc": (22, CSC),
    "cusparseCreateConstCsc": (23, CSC),
    "cusparseCreateCoo": (24, COO),
    "cusparseCreateConstCoo": (25, COO),
    "cusparseCreateDnMat": (26, DNMAT),
    "cusparseCreateConstDnMat": (27, DNMAT),
    "cusparseCreateDnVec": (28, DNVEC),
    "cusparseCreateConstDnVec": (29, DNVEC),
    "cusparseDestroySpMat": (30, DESTROY),
    "cusparseDestroyDnMat": (31, DESTROY),
    "cusparseDestroyDnVec": (32, DESTROY),
    "cusparseCsrSetPointers": (33, {"call": "async", "params": {
        "csrRowOffsets": "in dev 0", "csrColInd": "in dev 0", "csrValues": "in dev 0"}}),
    "cusparseCscSetPointers": (34, {"call": "async", "params": {
        "cscColOffsets": "in dev 0", "cscRowInd": "in dev 0", "cscValues": "in dev 0"}}),
    "cusparseCooSetPointers": (35, {"call": "async", "params": {
        "cooRows": "in dev 0", "cooColumns": "in dev 0", "cooValues": "in dev 0"}}),
    "cusparseCsrSetStridedBatch": (36, {
        "call": "async",
        "checks": ["batchCount > 0 && offsetsBatchStride >= 0 && columnsValuesBatchStride >= 0"],
        "verify": ["cusparse_keep_batch(note(spMatDescr), batchCount, offsetsBatchStride, "
                   "columnsValuesBatchStride)"]}),
    "cusparseCooSetStridedBatch": (37, {
        "call": "async", "checks": ["batchCount > 0 && batchStride >= 0"],
        "verify": ["cusparse_keep_batch(note(spMatDescr), batchCount, batchStride, "
                   "batchStride)"]}),
    "cusparseDnMatSetStridedBatch": (38, {
        "call": "async", "checks": ["batchCount > 0 && batchStride >= 0"]}),
    "cusparseSpMatSetValues": (39, {"call": "async", "params": {"values": "in dev 0"}}),
    "cusparseDnMatSetValues": (40, {"call": "async", "params": {"values": "in dev 0"}}),
    "cusparseDnVecSetValues": (41, {"call": "async", "params": {"values": "in dev 0"}}),
    "cusparseSpMatSetAttribute": (42, {"call": "async", "params": {"data": "in host dataSize"}}),
    "cusparseSpMatGetAttribute": (43, {"call": "sync", "params": {"data": "out host dataSize"}}),
    "cusparseSpMatGetSize": (44, getter("rows", "cols", "nnz")),
    "cusparseSpMatGetFormat": (45, getter("format")),
    "cusparseSpMatGetIndexBase": (46, getter("idxBase")),
    "cusparseSpMatGetStridedBatch": (47, getter("batchCount")),
    "cusparseSpMatGetValues": (48, getter("values")),
    "cusparseConstSpMatGetValues": (49, getter("values")),
    "cusparseCsrGet": (50, getter("rows", "cols", "nnz", "csrRowOffsets", "csrColInd",
                                  "csrValues", "csrRowOffsetsType", "csrColIndType", "idxBase",
                                  "valueType")),
    "cusparseConstCsrGet": (51, getter("rows", "cols", "nnz", "csrRowOffsets", "csrColInd",
                                       "csrValues", "csrRowOffsetsType", "csrColIndType",
                                       "idxBase", "valueType")),
    "cusparseCscGet": (52, getter("rows", "cols", "nnz", "cscColOffsets", "cscRowInd",
                                  "cscValues", "cscColOffsetsType", "cscRowIndType", "idxBase",
                                  "valueType")),
    "cusparseConstCscGet": (53, getter("rows", "cols", "nnz", "cscColOffsets", "cscRowInd",
                                       "cscValues", "cscColOffsetsType", "cscRowIndType",
                                       "idxBase", "valueType")),
    "cusparseCooGet": (54, getter("rows", "cols", "nnz", "cooRowInd", "cooColInd", "cooValues",
                                  "idxType", "idxBase", "valueType")),
    "cusparseConstCooGet": (55, getter("rows", "cols", "nnz", "cooRowInd", "cooColInd",
                                       "cooValues", "idxType", "idxBase", "valueType")),
    "cusparseDnMatGet": (56, getter("rows", "cols", "ld", "values", "type", "order")),
    "cusparseConstDnMatGet": (57, getter("rows", "cols", "ld", "values", "type", "order")),
    "cusparseDnMatGetStridedBatch": (58, getter("batchCount", "batchStride")),
    "cusparseDnMatGetValues": (59, getter("values")),
    "cusparseConstDnMatGetValues": (60, getter("values")),
    "cusparseDnVecGet": (61, getter("size", "values", "valueType")),
    "cusparseConstDnVecGet": (62, getter("size", "values", "valueType")),
    "cusparseDnVecGetValues": (63, getter("values")),
    "cusparseConstDnVecGetValues": (64, getter("values")),
    # Generic API computations.
    "cusparseSpMM_bufferSize": (70, compute(outs=("bufferSize",))),
    "cusparseSpMM_preprocess": (71, compute(sp("matA"), dn("matB"), dn("matC"), buffer=(
        "externalBuffer", "cusparse_spmm_buffer(%s)" % SPMM_ARGS))),
    "cusparseSpMM": (72, compute(sp("matA"), dn("matB"), dn("matC"), buffer=(
        "externalBuffer", "cusparse_spmm_buffer(%s)" % SPMM_ARGS))),
    "cusparseSpMV_bufferSize": (73, compute(outs=("bufferSize",))),
    "cusparseSpMV_preprocess": (74, compute(sp("matA"), vec("vecX"), vec("vecY"), buffer=(
        "externalBuffer", "cusparse_spmv_buffer(%s)" % SPMV_ARGS))),
    "cusparseSpMV": (75, compute(sp("matA"), vec("vecX"), vec("vecY"), buffer=(
        "externalBuffer", "cusparse_spmv_buffer(%s)" % SPMV_ARGS))),
    "cusparseSDDMM_bufferSize": (76, compute(outs=("bufferSize",))),
    "cusparseSDDMM_preprocess": (77, compute(dn("matA"), dn("matB"), sp("matC"), buffer=(
        "externalBuffer", "cusparse_sddmm_buffer(%s)" % SPMM_ARGS))),
    "cusparseSDDMM": (78, compute(dn("matA"), dn("matB"), sp("matC"), buffer=(
        "externalBuffer", "cusparse_sddmm_buffer(%s)" % SPMM_ARGS))),
    "cusparseSpGEMM_createDescr": (80, {"call": "sync", "async": "1",
                                        "params": {"descr": "out handle"}}),
    "cusparseSpGEMM_destroyDescr": (81, {"call": "async", "params": {"descr": "destroys"}}),
    "cusparseSpGEMM_workEstimation": (82, {
        "call": "sync", "checks": [SCALARS], "scalars": True,
        "verify": [sp("matA"), sp("matB"), sp("matC")],
        "params": {"bufferSize1": "inout host 1",
                   "externalBuffer1": "inout dev cusparse_sized(externalBuffer1, *bufferSize1)"}}),
    "cusparseSpGEMM_compute": (83, {
        "call": "sync", "checks": [SCALARS], "scalars": True,
        "verify": [sp("matA"), sp("matB"), sp("matC")],
        "params": {"bufferSize2": "inout host 1",
                   "externalBuffer2": "inout dev cusparse_sized(externalBuffer2, *bufferSize2)"}}),
    "cusparseSpGEMM_copy": (84, compute(sp("matA"), sp("matB"), sp("matC"))),
    "cusparseSpSV_createDescr": (85, {"call": "sync", "async": "1",
                                      "params": {"descr": "out handle"}}),
    "cusparseSpSV_destroyDescr": (86, {"call": "async", "params": {"descr": "destroys"}}),
    "cusparseSpSV_bufferSize": (87, compute(outs=("bufferSize",))),
    "cusparseSpSV_analysis": (88, compute(
        sp("matA"), vec("vecX"), vec("vecY"),
        "cusparse_keep_buffer(note(spsvDescr), externalBuffer, "
        "cusparse_spsv_buffer(api, handle, opA, matA, vecX, vecY, computeType, alg, spsvDescr))",
        buffer=("externalBuffer", "cusparse_spsv_buffer(api, handle, opA, matA, vecX, vecY, "
                                  "computeType, alg, spsvDescr)"))),
    "cusparseSpSV_solve": (89, compute(sp("matA"), vec("vecX"), vec("vecY"),
                                       "cusparse_buffer_ok(env, note(spsvDescr))")),
    "cusparseSpSM_createDescr": (90, {"call": "sync", "async": "1",
                                      "params": {"descr": "out handle"}}),
    "cusparseSpSM_destroyDescr": (91, {"call": "async", "params": {"descr": "destroys"}}),
    "cusparseSpSM_bufferSize": (92, compute(outs=("bufferSize",))),
    "cusparseSpSM_analysis": (93, compute(
        sp("matA"), dn("matB"), dn("matC"),
        "cusparse_keep_buffer(note(spsmDescr), externalBuffer, "
        "cusparse_spsm_buffer(api, handle, opA, opB, matA, matB, matC, computeType, alg, "
        "spsmDescr))",
        buffer=("externalBuffer", "cusparse_spsm_buffer(api, handle, opA, opB, matA, matB, "
                                  "matC, computeType, alg, spsmDescr)"))),
    "cusparseSpSM_solve": (94, compute(sp("matA"), dn("matB"), dn("matC"),
                                       "cusparse_buffer_ok(env, note(spsmDescr))")),
    # Format conversions and sorting of the legacy API (int indices).
    "cusparseXcoo2csr": (100, {
        "call": "async", "checks": ["nnz >= 0 && m >= 0",
                                    "idxBase == CUSPARSE_INDEX_BASE_ZERO || "
                                    "idxBase == CUSPARSE_INDEX_BASE_ONE"],
        "params": {"cooRowInd": "in dev nnz", "csrSortedRowPtr": "out dev m + 1"}}),
    "cusparseXcsr2coo": (101, {
        "call": "async", "checks": ["nnz >= 0 && m >= 0",
                                    "idxBase == CUSPARSE_INDEX_BASE_ZERO || "
                                    "idxBase == CUSPARSE_INDEX_BASE_ONE"],
        "params": {"csrSortedRowPtr": "in dev m + 1", "cooRowInd": "out dev nnz"}}),
    "cusparseXcoosort_bufferSizeExt": (102, {
        "call": "sync", "checks": ["m >= 0 && n >= 0 && nnz >= 0"],
        "params": {"cooRowsA": "in dev nnz", "cooColsA": "in dev nnz",
                   "pBufferSizeInBytes": "out host 1"}}),
    "cusparseXcoosortByRow": (103, {
        "call": "async", "checks": ["m >= 0 && n >= 0 && nnz >= 0"],
        "params": {"cooRowsA": "inout dev nnz", "cooColsA": "inout dev nnz",
                   "P": "inout dev cusparse_sized(P, nnz)",
                   "pBuffer": "inout dev cusparse_coosort_buffer(api, handle, m, n, nnz, "
                              "cooRowsA, cooColsA)"}}),
    "cusparseXcoosortByColumn": (104, {
        "call": "async", "checks": ["m >= 0 && n >= 0 && nnz >= 0"],
        "params": {"cooRowsA": "inout dev nnz", "cooColsA": "inout dev nnz",
                   "P": "inout dev cusparse_sized(P, nnz)",
                   "pBuffer": "inout dev cusparse_coosort_buffer(api, handle, m, n, nnz, "
                              "cooRowsA, cooColsA)"}}),
    "cusparseXcsrsort_bufferSizeExt": (105, {
        "call": "sync", "checks": ["m >= 0 && n >= 0 && nnz >= 0"],
        "params": {"csrRowPtrA": "in dev m + 1", "csrColIndA": "in dev nnz",
                   "pBufferSizeInBytes": "out host 1"}}),
    "cusparseXcsrsort": (106, {
        "call": "async", "checks": ["m >= 0 && n >= 0 && nnz >= 0"],
        "params": {"csrRowPtrA": "in dev m + 1", "csrColIndA": "inout dev nnz",
                   "P": "inout dev cusparse_sized(P, nnz)",
                   "pBuffer": "inout dev cusparse_csrsort_buffer(api, handle, m, n, nnz, "
                              "csrRowPtrA, csrColIndA)"}}),
    "cusparseXcscsort_bufferSizeExt": (107, {
        "call": "sync", "checks": ["m >= 0 && n >= 0 && nnz >= 0"],
        "params": {"cscColPtrA": "in dev n + 1", "cscRowIndA": "in dev nnz",
                   "pBufferSizeInBytes": "out host 1"}}),
    "cusparseXcscsort": (108, {
        "call": "async", "checks": ["m >= 0 && n >= 0 && nnz >= 0"],
        "params": {"cscColPtrA": "in dev n + 1", "cscRowIndA": "inout dev nnz",
                   "P": "inout dev cusparse_sized(P, nnz)",
                   "pBuffer": "inout dev cusparse_cscsort_buffer(api, handle, m, n, nnz, "
                              "cscColPtrA, cscRowIndA)"}}),
    "cusparseCreateIdentityPermutation": (109, {
        "call": "async", "checks": ["n >= 0"], "params": {"p": "out dev n"}}),
    # csr2csc: the _bufferSize reads no array ('in dev 0').
    "cusparseCsr2cscEx2_bufferSize": (110, {
        "call": "sync", "checks": ["m >= 0 && n >= 0 && nnz >= 0"],
        "params": {"csrVal": "in dev 0", "csrRowPtr": "in dev 0", "csrColInd": "in dev 0",
                   "cscVal": "in dev 0", "cscColPtr": "in dev 0", "cscRowInd": "in dev 0",
                   "bufferSize": "out host 1"}}),
    "cusparseCsr2cscEx2": (111, {
        "call": "async", "checks": ["m >= 0 && n >= 0 && nnz >= 0"],
        "params": {"csrVal": val("csrVal", "nnz", "valType"), "csrRowPtr": "in dev m + 1",
                   "csrColInd": "in dev nnz",
                   "cscVal": "out" + val("cscVal", "nnz", "valType")[2:],
                   "cscColPtr": "out dev n + 1", "cscRowInd": "out dev nnz",
                   "buffer": "inout dev cusparse_csr2csc_buffer(api, handle, m, n, nnz, csrVal, "
                             "csrRowPtr, csrColInd, cscVal, cscColPtr, cscRowInd, valType, "
                             "copyValues, idxBase, alg)"}}),
    "cusparseSparseToDense_bufferSize": (112, compute(outs=("bufferSize",), scalars=False)),
    "cusparseSparseToDense": (113, compute(
        sp("matA"), dn("matB"), scalars=False,
        buffer=("externalBuffer", "cusparse_to_dense_buffer(api, handle, matA, matB, alg)"))),
    "cusparseDenseToSparse_bufferSize": (114, compute(outs=("bufferSize",), scalars=False)),
    "cusparseDenseToSparse_analysis": (115, compute(
        dn("matA"), sp("matB"), scalars=False,
        buffer=("externalBuffer", "cusparse_to_sparse_buffer(api, handle, matA, matB, alg)"))),
    "cusparseDenseToSparse_convert": (116, compute(
        dn("matA"), sp("matB"), scalars=False,
        buffer=("externalBuffer", "cusparse_to_sparse_buffer(api, handle, matA, matB, alg)"))),
}

# Hand-written on the client (interpose/cusparse/local.cpp): answered from
# what the client keeps, no server.
MANUAL = {
    "cusparseGetErrorName": "the vendor's status names, answered locally",
    "cusparseGetErrorString": "the vendor's status descriptions, answered locally",
    "cusparseGetStream": "the stream of the handle's last cusparseSetStream, kept by the client",
    "cusparseGetPointerMode": "the handle's pointer mode, kept by the client",
    "cusparseGetMatType": "returns the setting, not a status: kept by the client's descriptor",
    "cusparseGetMatFillMode": "returns the setting, not a status: kept by the client's "
                              "descriptor",
    "cusparseGetMatDiagType": "returns the setting, not a status: kept by the client's "
                              "descriptor",
    "cusparseGetMatIndexBase": "returns the setting, not a status: kept by the client's "
                               "descriptor",
}

# (regular expression, reason) in order; the first that matches gives an
# unsupported entry its reason.
REASONS = [
    (r"^cusparse[SDCZ]?(bsr|Xbsr|Create.*Bsr|Destroy.*Bsr|gebsr|Xgebsr|bsr2csr|csr2bsr|"
     r"csr2gebsr|Xcsr2bsr|Xcsr2gebsr|.*bsric|.*bsrilu)",
     "the deprecated BSR routines of the legacy API are not remoted: their block arrays and "
     "info objects have no checked extents yet"),
    (r"^cusparse[SDCZ]?csrgeam2|^cusparseXcsrgeam2Nnz",
     "the length of the result (csrSortedRowPtrC[m] - base) is in device memory, which the "
     "server would have to read back before checking the output arrays; not remoted"),
    (r"^cusparse.*(csric02|csrilu02|Csric02|Csrilu02)",
     "incomplete factorizations of the legacy API are not remoted (info objects and level "
     "buffers without checked extents)"),
    (r"^cusparse.*(gtsv|gpsv)",
     "tridiagonal and pentadiagonal solvers are not remoted"),
    (r"^cusparse.*(prune|Prune)",
     "pruning to sparse is not remoted (its output length is in device memory)"),
    (r"^cusparse.*(csrcolor|ColorInfo)",
     "graph coloring is not remoted"),
    (r"^cusparse.*(csru2csr|csr2csru|Csru2csr)",
     "unsorted CSR conversion is not remoted"),
    (r"^cusparse[SDCZ](nnz|dense2|csr2dense|csc2dense|nnz_compress|csr2csr_compress)",
     "legacy dense and compression conversions are not remoted (their output lengths are in "
     "device memory); use the generic DenseToSparse / SparseToDense"),
    (r"^cusparse[SDCZ]gemvi",
     "legacy sparse-vector products are not remoted; use cusparseSpMV"),
    (r"^cusparse(Axpby|Gather|Scatter|Rot|SpVV|CreateSpVec|CreateConstSpVec|DestroySpVec|"
     r"SpVec|ConstSpVec)",
     "sparse vectors of the generic API are not remoted (no sparse vector descriptor is "
     "served)"),
    (r"^cusparse.*(BlockedEll|SlicedEll)",
     "Blocked-ELL and Sliced-ELL matrices are not remoted (only CSR, CSC and COO descriptors "
     "are served)"),
    (r"^cusparseSpGEMMreuse|^cusparseSpGEMM_(estimateMemory|getNumProducts)",
     "the SpGEMM reuse and memory-estimating paths are not remoted; use workEstimation / "
     "compute / copy"),
    (r"^cusparseSpMMOp",
     "SpMMOp plans take NVVM device code of the app's own operators: not remoted"),
    (r"^cusparseSp(SV|SM)_updateMatrix",
     "updating an analysed triangular matrix in place is not remoted"),
    (r"^cusparseXcsc2|^cusparseCsc|^cusparseX",
     "legacy format routine not remoted"),
    (r"^cusparseBsrSetStridedBatch",
     "BSR matrices are not served"),
    (r"^cusparseLogger|^cusparseSetLogger|^cusparseLogger",
     "the vendor's logger callbacks run in the server process: not remoted"),
    (r".", "not remoted"),
]


def parse_draft(text):
    """{name: (returns, [param decl])} of the draft's entries."""
    out = {}
    for block in text.split("\n\n"):
        lines = [l.strip() for l in block.strip().splitlines()]
        if not lines or not lines[0].startswith("fn "):
            continue
        name = lines[0][3:]
        returns = next(l[len("returns "):] for l in lines if l.startswith("returns "))
        params = [l[len("param "):].split(" |")[0] for l in lines if l.startswith("param ")]
        out[name] = (returns, params)
    return out


def param_name(decl):
    m = re.search(r"(\w+)\s*$", decl)
    return m.group(1)


def entry(name, returns, params):
    lines = ["fn %s" % name, "  header cusparse.h", "  returns %s" % returns]
    if name in ANNOTATED:
        fid, spec = ANNOTATED[name]
        lines += ["  class generated", "  id %d" % fid, "  call %s" % spec["call"]]
        if "async" in spec:
            lines.append("  async %s" % spec["async"])
        for c in spec.get("checks", []):
            lines.append("  check %s" % c)
        for r in spec.get("remember", []):
            lines.append("  remember %s" % r)
        for v in spec.get("verify", []):
            lines.append("  verify %s" % v)
        notes = dict(spec.get("params", {}))
        for i, decl in enumerate(params):
            pname = param_name(decl)
            note = notes.pop(pname, notes.pop(i, None))
            if note is None and spec.get("scalars") and pname in ("alpha", "beta"):
                note = "in host cusparse_scalar_bytes(computeType)"
            if note is None and "*" in decl:
                raise SystemExit("%s: pointer parameter %s needs an annotation" % (name, pname))
            lines.append("  param %s%s" % (decl, " | " + note if note else ""))
        if notes:
            raise SystemExit("%s: annotations of unknown parameters %s" % (name, list(notes)))
    elif name in MANUAL:
        lines += ["  class manual", "  call local", "  note %s" % MANUAL[name]]
        lines += ["  param %s" % d + (" | out 1" if "*" in d else "") for d in params]
    else:
        reason = next(r for pattern, r in REASONS if re.search(pattern, name))
        lines += ["  class unsupported", "  reason %s" % reason, "  call sync"]
        for d in params:
            note = ""
            if "*" in d:
                note = " | in opaque" if d.startswith("const") else " | inout opaque"
            lines.append("  param %s%s" % (d, note))
    lines.append("end")
    return "\n".join(lines)


def main():
    with open(sys.argv[1]) as f:
        protos = parse_draft(f.read())
    missing = [n for n in list(ANNOTATED) + list(MANUAL) if n not in protos]
    if missing:
        raise SystemExit("not exported by the vendor: %s" % ", ".join(missing))
    out = [HEADER]
    for name in sorted(protos):
        returns, params = protos[name]
        out.append(entry(name, returns, params) + "\n")
    sys.stdout.write("\n".join(out))


if __name__ == "__main__":
    main()
