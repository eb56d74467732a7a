#!/usr/bin/env python3
"""Annotates the cuBLAS v2 BLAS routines of interpose/spec/cublas.spec.

Rewrites the spec in place (re-runnable; a second run changes nothing):

  * every cublas_api.h routine of the BLAS families below whose pointer
    parameters can all be described (no arrays of pointers) becomes
    "class generated": an "id" (pinned: an entry that has one keeps it, new
    ones get max(existing) + 1 in file order), "call async" or "call sync"
    (sync when the routine returns a value through a host scalar), the
    "check" lines cuBLAS documents as CUBLAS_STATUS_INVALID_VALUE, and for
    every pointer parameter "in|out|inout dev EXPR" (a device buffer of EXPR
    elements of the pointee, bytes for void) or "in|out|inout scalar [EXPR]"
    (host or device memory by pointer mode; EXPR elements, default 1; bytes
    for void);
      level 1  amax amin asum axpy copy dot dotu dotc nrm2 rot rotg rotm
               rotmg scal swap, and AsumEx AxpyEx CopyEx DotEx DotcEx
               IamaxEx IaminEx Nrm2Ex RotEx RotgEx RotmEx RotmgEx ScalEx
               SwapEx
      level 2  gbmv gemv ger geru gerc symv hemv sbmv hbmv spmv hpmv syr
               her syr2 her2 spr hpr spr2 hpr2 trmv tbmv tpmv trsv tbsv
               tpsv, gemvStridedBatched (S D C Z HSH HSS TST TSS)
      level 3  C/Z gemm, gemm3m and their StridedBatched forms, SgemmEx
               CgemmEx Cgemm3mEx, symm hemm syrk herk syr2k her2k syrkx
               herkx trmm trsm, CsyrkEx Csyrk3mEx CherkEx Cherk3mEx
      extensions  geam dgmm tpttr trttp
    in every type variant and both ABIs (plain or _v2, and _64);
  * cublasSet/GetVector, Set/GetMatrix and their Async and _64 forms become
    "class manual" (hand-written elsewhere) with "in|out opaque" pointers;
  * the remaining unsupported cublas_api.h entries get a reason that says
    what keeps them unsupported.

Entries of class manual (other than the ones above) and of other headers are
left as they are, and so is everything outside the entries.

  python3 interpose/gen/annotate_blas.py            # rewrite the spec
  python3 interpose/gen/annotate_blas.py --check    # verify, change nothing

--check parses the spec and verifies every generated entry: a unique
positive id, a call class that matches its host outputs, an annotation on
every pointer parameter, expressions that parse as C expressions over the
entry's parameters, the helpers (vec mat packed strided mul type_size max1
op_ok fill_ok side_ok diag_ok add) and CUBLAS_*/CUDA_* constants; then prints
the number of entries per class. Python 3 standard library only.

Where the conditions come from: the "Error Values" tables of the cuBLAS
13 documentation (docs.nvidia.com/cuda/cublas), per routine; conditions on
NULL pointers and unsupported data types are left out (the expression
language has no null pointer, and type support is the library's to judge).
Routines the documentation does not describe (Cgemm3mEx and the level-1 Ex
forms other than Nrm2Ex AxpyEx DotEx DotcEx RotEx ScalEx) get the extents
of their documented siblings; Cgemm3mEx also gets the checks of CgemmEx.
"""

import argparse
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_SPEC = os.path.normpath(os.path.join(HERE, "..", "spec", "cublas.spec"))

HELPERS = {"vec": 2, "mat": 3, "packed": 1, "strided": 3, "mul": 2, "add": 2,
           "type_size": 1, "max1": 1, "op_ok": 1, "fill_ok": 1, "side_ok": 1,
           "diag_ok": 1}

OLD_REASON = ("cuBLAS routine not remoted yet: Gleam forwards the gemm family "
              "(gemm, GemmEx, batched, strided batched) and handle settings")

# Host <-> device copy helpers written by hand: name -> (call, {param: direction}).
MANUAL_COPIES = {
    "cublasSetVector": ("keep", {"x": "in", "devicePtr": "out"}),
    "cublasGetVector": ("sync", {"x": "in", "y": "out"}),
    "cublasSetMatrix": ("keep", {"A": "in", "B": "out"}),
    "cublasGetMatrix": ("sync", {"A": "in", "B": "out"}),
    "cublasSetVectorAsync": ("async", {"hostPtr": "in", "devicePtr": "out"}),
    "cublasGetVectorAsync": ("async", {"devicePtr": "in", "hostPtr": "out"}),
    "cublasSetMatrixAsync": ("async", {"A": "in", "B": "out"}),
    "cublasGetMatrixAsync": ("async", {"A": "in", "B": "out"}),
}

# Reasons of the cublas_api.h entries that stay unsupported: (regex over the
# name without "cublas" and without _64, reason). Reasons carry no quotes or
# backslashes (generate.py puts them into C string literals).
REASONS = [
    (r"^(S|D|C|Z)gemmGroupedBatched$|^GemmGroupedBatchedEx$",
     "grouped batched gemm: takes host arrays of per-group shapes and device arrays "
     "of matrix pointers, which Gleam does not check yet"),
    (r"^(S|D|C|Z)(getrf|getrs|getri|matinv|geqrf|gels)Batched$",
     "batched LAPACK-style routine: takes device arrays of matrix pointers, which "
     "Gleam does not check yet"),
    (r"^((C|Z)gemm(3m)?|(S|D|C|Z|HSH|HSS|TST|TSS)gemv|(S|D|C|Z)trsm)Batched$",
     "takes device arrays of matrix pointers, which Gleam does not check yet"),
    (r"^Uint8gemmBias$",
     "undocumented vendor routine without published semantics; not remoted"),
    (r"^Xerbla$",
     "cuBLAS error-report hook of the host library; not remoted"),
    (r"^(LoggerConfigure|GetLoggerCallback|SetLoggerCallback)$",
     "cuBLAS logging setup (log file or host callback) is not remoted"),
    (r"^(Get|Set)(SmCountTarget|EmulationStrategy|EmulationSpecialValuesSupport"
     r"|FixedPointEmulation\w+)$",
     "handle setting not remoted yet: Gleam forwards stream, workspace, pointer mode, "
     "math mode and atomics mode"),
]


OWNED_REASONS = {OLD_REASON} | {reason for _, reason in REASONS}


class spec_error(Exception):
    pass


# --- spec file ---------------------------------------------------------------

class param:
    def __init__(self, decl, note):
        self.decl = decl.strip()
        self.note = note.strip() if note is not None else None
        m = re.search(r"(\w+)\s*(\[[^\]]*\])?\s*$", self.decl)
        if not m:
            raise spec_error("cannot find the parameter name in '%s'" % decl)
        self.name = m.group(1)
        base = self.decl[:m.start(1)].strip()
        self.pointer = "*" in base or m.group(2) is not None
        self.depth = base.count("*") + (1 if m.group(2) is not None else 0)
        # Const pointee: "const T *x" or "T const *x" (first level only).
        first = base.split("*")[0] if "*" in base else base
        self.const = bool(re.search(r"\bconst\b", first))
        self.pointee = re.sub(r"\bconst\b", "", first).strip()

    def line(self):
        if self.note:
            return "  param %s | %s" % (self.decl, self.note)
        return "  param %s" % self.decl


class entry:
    """One fn ... end block; `lines` are its raw lines (fn and end included)."""

    def __init__(self, lines, number):
        self.lines = lines
        self.number = number
        self.name = lines[0].split(None, 1)[1].strip()
        self.keys = []      # (key, value) in order, params excluded
        self.params = []
        for raw in lines[1:-1]:
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            key, _, rest = line.partition(" ")
            if key == "param":
                decl, bar, note = rest.partition("|")
                self.params.append(param(decl, note if bar else None))
            else:
                self.keys.append((key, rest.strip()))

    def get(self, key):
        for k, v in self.keys:
            if k == key:
                return v
        return None

    def all(self, key):
        return [v for k, v in self.keys if k == key]

    @property
    def cls(self):
        c = self.get("class")
        return c.split()[0] if c else None


def read_spec(path):
    """[str | entry] in file order."""
    with open(path) as f:
        text = f.read()
    items, current, start = [], None, 0
    for number, raw in enumerate(text.splitlines(), 1):
        stripped = raw.strip()
        if current is None:
            if stripped.startswith("fn "):
                current, start = [raw], number
            else:
                items.append(raw)
        else:
            current.append(raw)
            if stripped == "end":
                items.append(entry(current, start))
                current = None
            elif stripped.startswith("fn "):
                raise spec_error("%s:%d: fn inside an entry" % (path, number))
    if current is not None:
        raise spec_error("%s: entry at line %d has no end" % (path, start))
    return items


def write_spec(path, items):
    out = []
    for it in items:
        out.extend(it.lines if isinstance(it, entry) else [it])
    text = "\n".join(out) + "\n"
    with open(path) as f:
        if f.read() == text:
            return False
    with open(path, "w") as f:
        f.write(text)
    return True


# --- families ----------------------------------------------------------------

def dev(direction, expr, tparam=None):
    if tparam:
        expr = "mul(%s, type_size(%s))" % (expr, tparam)
    return "%s dev %s" % (direction, expr)


def scalar(direction, expr=None, tparam=None):
    if tparam:
        expr = "type_size(%s)" % tparam if expr is None else "mul(%s, type_size(%s))" % (expr, tparam)
    return "%s scalar" % direction + (" " + expr if expr else "")


def devarray(direction, count, each):
    """A device array of `count` device pointers, each to `each` elements."""
    return "%s devarray %s; %s" % (direction, count, each)


def host(direction, expr="1"):
    """Host memory whatever the pointer mode (the batched routines' info)."""
    return "%s host %s" % (direction, expr)


def nullable(ptr, expr):
    """The extent of an optional pointer: nothing when it is null."""
    return "%s == nullptr ? 0 : %s" % (ptr, expr)


def trans_shape(t, rows, cols, ld):
    """Extent of a matrix that is rows x cols when t == N, cols x rows otherwise."""
    return "%s == CUBLAS_OP_N ? mat(%s, %s, %s) : mat(%s, %s, %s)" % (
        t, rows, cols, ld, cols, rows, ld)


def side_square(ld):
    return "side == CUBLAS_SIDE_LEFT ? mat(m, m, %s) : mat(n, n, %s)" % (ld, ld)


def ld_trans(ld, t, when_n, otherwise):
    return "%s >= max1(%s == CUBLAS_OP_N ? %s : %s)" % (ld, t, when_n, otherwise)


# gemv: cuBLAS documents no INVALID_VALUE for trans, so a value other than
# N, T and C gets the larger of the two lengths.
GEMV_X = ("vec(trans == CUBLAS_OP_N ? n : (trans == CUBLAS_OP_T || trans == CUBLAS_OP_C)"
          " ? m : (m > n ? m : n), incx)")
GEMV_Y = ("vec(trans == CUBLAS_OP_N ? m : (trans == CUBLAS_OP_T || trans == CUBLAS_OP_C)"
          " ? n : (m > n ? m : n), incy)")

GEMM_CHECKS = ["m >= 0", "n >= 0", "k >= 0", "op_ok(transa)", "op_ok(transb)",
               ld_trans("lda", "transa", "m", "k"), ld_trans("ldb", "transb", "k", "n"),
               "ldc >= max1(m)"]
SYRK_CHECKS = ["n >= 0", "k >= 0", "op_ok(trans)", "fill_ok(uplo)",
               ld_trans("lda", "trans", "n", "k"), "ldc >= max1(n)"]


# Sums of int parameters are written with add() (64-bit, saturating), not +:
# the generated code evaluates expressions in the parameters' own types, and
# k + 1 or kl + ku + 1 would overflow an int for the largest values. Checks
# are written so that they cannot overflow either (lda > k for lda >= k + 1).


def family(core):
    """(call, checks, {param: annotation}) for a routine name without the
    cublas prefix, _v2 and _64; None when it is no generated family."""
    def f(call, checks, ann):
        return call, checks, ann

    # Level 1.
    if re.match(r"^I[sdcz]am(ax|in)$|^(S|D|Sc|Dz)(asum|nrm2)$", core):
        return f("sync", [], {"x": dev("in", "vec(n, incx)"), "result": scalar("out")})
    if re.match(r"^[SDCZ]axpy$", core):
        return f("async", [], {"alpha": scalar("in"), "x": dev("in", "vec(n, incx)"),
                               "y": dev("inout", "vec(n, incy)")})
    if re.match(r"^[SDCZ]copy$", core):
        return f("async", [], {"x": dev("in", "vec(n, incx)"), "y": dev("out", "vec(n, incy)")})
    if re.match(r"^[SD]dot$|^[CZ]dot[uc]$", core):
        return f("sync", [], {"x": dev("in", "vec(n, incx)"), "y": dev("in", "vec(n, incy)"),
                              "result": scalar("out")})
    if re.match(r"^([SDCZ]|Cs|Zd)rot$", core):
        return f("async", [], {"x": dev("inout", "vec(n, incx)"),
                               "y": dev("inout", "vec(n, incy)"),
                               "c": scalar("in"), "s": scalar("in")})
    if re.match(r"^[SDCZ]rotg$", core):
        return f("sync", [], {"a": scalar("inout"), "b": scalar("inout"),
                              "c": scalar("out"), "s": scalar("out")})
    if re.match(r"^[SD]rotm$", core):
        return f("async", [], {"x": dev("inout", "vec(n, incx)"),
                               "y": dev("inout", "vec(n, incy)"), "param": scalar("in", "5")})
    if re.match(r"^[SD]rotmg$", core):
        return f("sync", [], {"d1": scalar("inout"), "d2": scalar("inout"),
                              "x1": scalar("inout"), "y1": scalar("in"),
                              "param": scalar("out", "5")})
    if re.match(r"^([SDCZ]|Cs|Zd)scal$", core):
        return f("async", [], {"alpha": scalar("in"), "x": dev("inout", "vec(n, incx)")})
    if re.match(r"^[SDCZ]swap$", core):
        return f("async", [], {"x": dev("inout", "vec(n, incx)"),
                               "y": dev("inout", "vec(n, incy)")})
    # Level 1, mixed precision (byte extents).
    if core in ("AsumEx", "Nrm2Ex"):
        return f("sync", [], {"x": dev("in", "vec(n, incx)", "xType"),
                              "result": scalar("out", tparam="resultType")})
    if core in ("IamaxEx", "IaminEx"):
        return f("sync", [], {"x": dev("in", "vec(n, incx)", "xType"), "result": scalar("out")})
    if core == "AxpyEx":
        return f("async", [], {"alpha": scalar("in", tparam="alphaType"),
                               "x": dev("in", "vec(n, incx)", "xType"),
                               "y": dev("inout", "vec(n, incy)", "yType")})
    if core == "CopyEx":
        return f("async", [], {"x": dev("in", "vec(n, incx)", "xType"),
                               "y": dev("out", "vec(n, incy)", "yType")})
    if core in ("DotEx", "DotcEx"):
        return f("sync", [], {"x": dev("in", "vec(n, incx)", "xType"),
                              "y": dev("in", "vec(n, incy)", "yType"),
                              "result": scalar("out", tparam="resultType")})
    if core == "RotEx":
        return f("async", [], {"x": dev("inout", "vec(n, incx)", "xType"),
                               "y": dev("inout", "vec(n, incy)", "yType"),
                               "c": scalar("in", tparam="csType"),
                               "s": scalar("in", tparam="csType")})
    if core == "RotgEx":
        return f("sync", [], {"a": scalar("inout", tparam="abType"),
                              "b": scalar("inout", tparam="abType"),
                              "c": scalar("out", tparam="csType"),
                              "s": scalar("out", tparam="csType")})
    if core == "RotmEx":
        return f("async", [], {"x": dev("inout", "vec(n, incx)", "xType"),
                               "y": dev("inout", "vec(n, incy)", "yType"),
                               "param": scalar("in", "5", "paramType")})
    if core == "RotmgEx":
        return f("sync", [], {"d1": scalar("inout", tparam="d1Type"),
                              "d2": scalar("inout", tparam="d2Type"),
                              "x1": scalar("inout", tparam="x1Type"),
                              "y1": scalar("in", tparam="y1Type"),
                              "param": scalar("out", "5", "paramType")})
    if core == "ScalEx":
        return f("async", [], {"alpha": scalar("in", tparam="alphaType"),
                               "x": dev("inout", "vec(n, incx)", "xType")})
    if core == "SwapEx":
        return f("async", [], {"x": dev("inout", "vec(n, incx)", "xType"),
                               "y": dev("inout", "vec(n, incy)", "yType")})

    # Level 2.
    if re.match(r"^[SDCZ]gbmv$", core):
        return f("async",
                 ["m >= 0", "n >= 0", "kl >= 0", "ku >= 0", "lda > kl && lda - kl > ku",
                  "incx != 0", "incy != 0", "op_ok(trans)"],
                 {"alpha": scalar("in"), "beta": scalar("in"),
                  "A": dev("in", "mat(add(add(kl, ku), 1), n, lda)"),
                  "x": dev("in", "vec(trans == CUBLAS_OP_N ? n : m, incx)"),
                  "y": dev("inout", "vec(trans == CUBLAS_OP_N ? m : n, incy)")})
    if re.match(r"^[SDCZ]gemv$", core):
        # As cuBLAS 13 answers on the GPU machine: lda < max(1, m) is
        # INVALID_VALUE at the call, a negative n a successful no-op.
        return f("async", ["m >= 0", "incx != 0", "incy != 0", "lda >= max1(m)"],
                 {"alpha": scalar("in"), "beta": scalar("in"), "A": dev("in", "mat(m, n, lda)"),
                  "x": dev("in", GEMV_X), "y": dev("inout", GEMV_Y)})
    m = re.match(r"^(?:[SDCZ]|HSH|HSS|TST|TSS)gemvStridedBatched$", core)
    if m:
        return f("async", ["m >= 0", "n >= 0", "batchCount >= 0"],
                 {"alpha": scalar("in"), "beta": scalar("in"),
                  "A": dev("in", "strided(mat(m, n, lda), strideA, batchCount)"),
                  "x": dev("in", "strided(%s, stridex, batchCount)" % GEMV_X),
                  "y": dev("inout", "strided(%s, stridey, batchCount)" % GEMV_Y)})
    if re.match(r"^[SD]ger$|^[CZ]ger[uc]$", core):
        return f("async", ["m >= 0", "n >= 0", "incx != 0", "incy != 0", "lda >= max1(m)"],
                 {"alpha": scalar("in"), "x": dev("in", "vec(m, incx)"),
                  "y": dev("in", "vec(n, incy)"), "A": dev("inout", "mat(m, n, lda)")})
    if re.match(r"^[SD]sbmv$|^[CZ]hbmv$", core):
        return f("async", ["n >= 0", "k >= 0", "incx != 0", "incy != 0", "fill_ok(uplo)",
                           "lda > k"],
                 {"alpha": scalar("in"), "beta": scalar("in"), "A": dev("in", "mat(add(k, 1), n, lda)"),
                  "x": dev("in", "vec(n, incx)"), "y": dev("inout", "vec(n, incy)")})
    if re.match(r"^[SD]spmv$|^[CZ]hpmv$", core):
        return f("async", ["n >= 0", "incx != 0", "incy != 0", "fill_ok(uplo)"],
                 {"alpha": scalar("in"), "beta": scalar("in"), "AP": dev("in", "packed(n)"),
                  "x": dev("in", "vec(n, incx)"), "y": dev("inout", "vec(n, incy)")})
    if re.match(r"^[SD]spr$|^[CZ]hpr$", core):
        return f("async", ["n >= 0", "incx != 0", "fill_ok(uplo)"],
                 {"alpha": scalar("in"), "x": dev("in", "vec(n, incx)"),
                  "AP": dev("inout", "packed(n)")})
    if re.match(r"^[SD]spr2$|^[CZ]hpr2$", core):
        # The hpr2 table names incx == 0 but not incy == 0.
        checks = ["n >= 0", "incx != 0", "incy != 0", "fill_ok(uplo)"]
        if core.endswith("hpr2"):
            checks.remove("incy != 0")
        return f("async", checks,
                 {"alpha": scalar("in"), "x": dev("in", "vec(n, incx)"),
                  "y": dev("in", "vec(n, incy)"), "AP": dev("inout", "packed(n)")})
    if re.match(r"^[SDCZ]symv$|^[CZ]hemv$", core):
        # Both tables say lda < n, not lda < max(1, n).
        return f("async", ["n >= 0", "incx != 0", "incy != 0", "fill_ok(uplo)", "lda >= n"],
                 {"alpha": scalar("in"), "beta": scalar("in"), "A": dev("in", "mat(n, n, lda)"),
                  "x": dev("in", "vec(n, incx)"), "y": dev("inout", "vec(n, incy)")})
    if re.match(r"^[SDCZ]syr$|^[CZ]her$", core):
        return f("async", ["n >= 0", "incx != 0", "fill_ok(uplo)", "lda >= max1(n)"],
                 {"alpha": scalar("in"), "x": dev("in", "vec(n, incx)"),
                  "A": dev("inout", "mat(n, n, lda)")})
    if re.match(r"^[SDCZ]syr2$|^[CZ]her2$", core):
        # The her2 table names incx == 0 but not incy == 0.
        checks = ["n >= 0", "incx != 0", "incy != 0", "fill_ok(uplo)", "lda >= max1(n)"]
        if core.endswith("her2"):
            checks.remove("incy != 0")
        return f("async", checks,
                 {"alpha": scalar("in"), "x": dev("in", "vec(n, incx)"),
                  "y": dev("in", "vec(n, incy)"), "A": dev("inout", "mat(n, n, lda)")})
    tri = ["op_ok(trans)", "fill_ok(uplo)", "diag_ok(diag)"]
    if re.match(r"^[SDCZ]tb[ms]v$", core):
        return f("async", ["n >= 0", "k >= 0", "incx != 0"] + tri + ["lda > k"],
                 {"A": dev("in", "mat(add(k, 1), n, lda)"), "x": dev("inout", "vec(n, incx)")})
    if re.match(r"^[SDCZ]tp[ms]v$", core):
        return f("async", ["n >= 0", "incx != 0"] + tri,
                 {"AP": dev("in", "packed(n)"), "x": dev("inout", "vec(n, incx)")})
    if re.match(r"^[SDCZ]tr[ms]v$", core):
        return f("async", ["n >= 0", "incx != 0"] + tri + ["lda >= max1(n)"],
                 {"A": dev("in", "mat(n, n, lda)"), "x": dev("inout", "vec(n, incx)")})

    # Level 3.
    gemm_ab = {"alpha": scalar("in"), "beta": scalar("in"),
               "A": dev("in", trans_shape("transa", "m", "k", "lda")),
               "B": dev("in", trans_shape("transb", "k", "n", "ldb")),
               "C": dev("inout", "mat(m, n, ldc)")}
    if re.match(r"^[CZ]gemm(3m)?$", core):
        return f("async", GEMM_CHECKS, gemm_ab)
    if re.match(r"^[CZ]gemm(3m)?StridedBatched$", core):
        return f("async", GEMM_CHECKS,
                 {"alpha": scalar("in"), "beta": scalar("in"),
                  "A": dev("in", "strided(%s, strideA, batchCount)"
                           % trans_shape("transa", "m", "k", "lda")),
                  "B": dev("in", "strided(%s, strideB, batchCount)"
                           % trans_shape("transb", "k", "n", "ldb")),
                  "C": dev("inout", "strided(mat(m, n, ldc), strideC, batchCount)")})
    if core in ("SgemmEx", "CgemmEx", "Cgemm3mEx"):
        return f("async", GEMM_CHECKS,
                 {"alpha": scalar("in"), "beta": scalar("in"),
                  "A": dev("in", trans_shape("transa", "m", "k", "lda"), "Atype"),
                  "B": dev("in", trans_shape("transb", "k", "n", "ldb"), "Btype"),
                  "C": dev("inout", "mat(m, n, ldc)", "Ctype")})
    if re.match(r"^[SDCZ]symm$|^[CZ]hemm$", core):
        return f("async", ["m >= 0", "n >= 0", "side_ok(side)", "fill_ok(uplo)",
                           "lda >= max1(side == CUBLAS_SIDE_LEFT ? m : n)", "ldb >= max1(m)",
                           "ldc >= max1(m)"],
                 {"alpha": scalar("in"), "beta": scalar("in"), "A": dev("in", side_square("lda")),
                  "B": dev("in", "mat(m, n, ldb)"), "C": dev("inout", "mat(m, n, ldc)")})
    if re.match(r"^[SDCZ]syrk$|^[CZ]herk$", core):
        return f("async", SYRK_CHECKS,
                 {"alpha": scalar("in"), "beta": scalar("in"),
                  "A": dev("in", trans_shape("trans", "n", "k", "lda")),
                  "C": dev("inout", "mat(n, n, ldc)")})
    if re.match(r"^[SDCZ]syr(2k|kx)$|^[CZ]her(2k|kx)$", core):
        checks = list(SYRK_CHECKS)
        if core[1:4] == "syr":
            # syr2k and syrkx document the ldb condition; her2k and herkx do not.
            checks.insert(5, ld_trans("ldb", "trans", "n", "k"))
        return f("async", checks,
                 {"alpha": scalar("in"), "beta": scalar("in"),
                  "A": dev("in", trans_shape("trans", "n", "k", "lda")),
                  "B": dev("in", trans_shape("trans", "n", "k", "ldb")),
                  "C": dev("inout", "mat(n, n, ldc)")})
    if core in ("CsyrkEx", "Csyrk3mEx", "CherkEx", "Cherk3mEx"):
        return f("async", ["n >= 0", "k >= 0", "fill_ok(uplo)", "op_ok(trans)",
                           ld_trans("lda", "trans", "n", "k"), "ldc >= max1(n)"],
                 {"alpha": scalar("in"), "beta": scalar("in"),
                  "A": dev("in", trans_shape("trans", "n", "k", "lda"), "Atype"),
                  "C": dev("inout", "mat(n, n, ldc)", "Ctype")})
    if re.match(r"^[SDCZ]trmm$", core):
        # Out of place: C = alpha op(A) B; the table has no diag condition.
        return f("async", ["m >= 0", "n >= 0", "op_ok(trans)", "fill_ok(uplo)", "side_ok(side)",
                           "lda >= max1(side == CUBLAS_SIDE_LEFT ? m : n)", "ldb >= max1(m)",
                           "ldc >= max1(m)"],
                 {"alpha": scalar("in"), "A": dev("in", side_square("lda")),
                  "B": dev("in", "mat(m, n, ldb)"), "C": dev("out", "mat(m, n, ldc)")})
    if re.match(r"^[SDCZ]trsm$", core):
        return f("async", ["m >= 0", "n >= 0", "op_ok(trans)", "fill_ok(uplo)", "side_ok(side)",
                           "diag_ok(diag)", "lda >= max1(side == CUBLAS_SIDE_LEFT ? m : n)",
                           "ldb >= max1(m)"],
                 {"alpha": scalar("in"), "A": dev("in", side_square("lda")),
                  "B": dev("inout", "mat(m, n, ldb)")})

    # Batched forms over device arrays of matrix pointers: each array holds
    # batchCount pointers; the server reads it once the handle's stream has
    # done the work before the call, and checks every matrix it names.
    if re.match(r"^(?:[SDCZ]|HSH|HSS|TST|TSS)gemvBatched$", core):
        return f("async", ["m >= 0", "n >= 0", "incx != 0", "incy != 0", "batchCount >= 0"],
                 {"alpha": scalar("in"), "beta": scalar("in"),
                  "Aarray": devarray("in", "batchCount", "mat(m, n, lda)"),
                  "xarray": devarray("in", "batchCount", GEMV_X),
                  "yarray": devarray("inout", "batchCount", GEMV_Y)})
    if re.match(r"^[CZ]gemm(3m)?Batched$", core):
        return f("async", GEMM_CHECKS + ["batchCount >= 0"],
                 {"alpha": scalar("in"), "beta": scalar("in"),
                  "Aarray": devarray("in", "batchCount", trans_shape("transa", "m", "k", "lda")),
                  "Barray": devarray("in", "batchCount", trans_shape("transb", "k", "n", "ldb")),
                  "Carray": devarray("inout", "batchCount", "mat(m, n, ldc)")})
    if re.match(r"^[SDCZ]trsmBatched$", core):
        return f("async", ["m >= 0", "n >= 0", "op_ok(trans)", "fill_ok(uplo)", "side_ok(side)",
                           "diag_ok(diag)", "lda >= max1(side == CUBLAS_SIDE_LEFT ? m : n)",
                           "ldb >= max1(m)", "batchCount >= 0"],
                 {"alpha": scalar("in"), "A": devarray("in", "batchCount", side_square("lda")),
                  "B": devarray("inout", "batchCount", "mat(m, n, ldb)")})
    # The batched LAPACK-style routines report bad arguments through info
    # (the documentation lists no INVALID_VALUE conditions to check here).
    if re.match(r"^[SDCZ]getrfBatched$", core):
        return f("async", [],
                 {"A": devarray("inout", "batchSize", "mat(n, n, lda)"),
                  "P": dev("out", nullable("P", "mul(n, batchSize)")),
                  "info": dev("out", "batchSize")})
    if re.match(r"^[SDCZ]getrsBatched$", core):
        return f("sync", [],
                 {"Aarray": devarray("in", "batchSize", "mat(n, n, lda)"),
                  "devIpiv": dev("in", "mul(n, batchSize)"),
                  "Barray": devarray("inout", "batchSize", "mat(n, nrhs, ldb)"),
                  "info": host("out")})
    if re.match(r"^[SDCZ]getriBatched$", core):
        return f("async", [],
                 {"A": devarray("in", "batchSize", "mat(n, n, lda)"),
                  "P": dev("in", nullable("P", "mul(n, batchSize)")),
                  "C": devarray("out", "batchSize", "mat(n, n, ldc)"),
                  "info": dev("out", "batchSize")})
    if re.match(r"^[SDCZ]matinvBatched$", core):
        return f("async", [],
                 {"A": devarray("in", "batchSize", "mat(n, n, lda)"),
                  "Ainv": devarray("out", "batchSize", "mat(n, n, lda_inv)"),
                  "info": dev("out", "batchSize")})
    if re.match(r"^[SDCZ]geqrfBatched$", core):
        return f("sync", [],
                 {"Aarray": devarray("inout", "batchSize", "mat(m, n, lda)"),
                  "TauArray": devarray("out", "batchSize", "vec(m < n ? m : n, 1)"),
                  "info": host("out")})
    if re.match(r"^[SDCZ]gelsBatched$", core):
        return f("sync", [],
                 {"Aarray": devarray("inout", "batchSize", "mat(m, n, lda)"),
                  "Carray": devarray("inout", "batchSize", "mat(m > n ? m : n, nrhs, ldc)"),
                  "info": host("out"),
                  "devInfoArray": dev("out", nullable("devInfoArray", "batchSize"))})

    # Handle settings without a pointer: the server's handle keeps them;
    # the getters ask it (a host result). Set/GetEmulationStrategy stay out:
    # cublas_api.h overloads them (a C++ inline form), so the server cannot
    # name the C entry point by its declaration.
    if re.match(r"^Set(SmCountTarget|EmulationSpecialValuesSupport|"
                r"FixedPointEmulationMantissaBitOffset|FixedPointEmulationMantissaControl|"
                r"FixedPointEmulationMaxMantissaBitCount)$", core):
        return f("async", [], {})
    m = re.match(r"^Get(SmCountTarget|EmulationSpecialValuesSupport|"
                 r"FixedPointEmulationMantissaBitOffset|FixedPointEmulationMantissaControl|"
                 r"FixedPointEmulationMaxMantissaBitCount)$", core)
    if m:
        # "*": the one pointer parameter, whatever its name.
        return f("sync", [], {"*": host("out")})

    # BLAS-like extensions.
    if re.match(r"^[SDCZ]geam$", core):
        return f("async", ["m >= 0", "n >= 0", "op_ok(transa)", "op_ok(transb)",
                           ld_trans("lda", "transa", "m", "n"), ld_trans("ldb", "transb", "m", "n"),
                           "ldc >= max1(m)",
                           "!(A == C && (transa != CUBLAS_OP_N || lda != ldc))",
                           "!(B == C && (transb != CUBLAS_OP_N || ldb != ldc))"],
                 {"alpha": scalar("in"), "beta": scalar("in"),
                  "A": dev("in", trans_shape("transa", "m", "n", "lda")),
                  "B": dev("in", trans_shape("transb", "m", "n", "ldb")),
                  "C": dev("out", "mat(m, n, ldc)")})
    if re.match(r"^[SDCZ]dgmm$", core):
        return f("async", ["m >= 0", "n >= 0", "side_ok(mode)", "lda >= max1(m)", "ldc >= max1(m)"],
                 {"A": dev("in", "mat(m, n, lda)"),
                  "x": dev("in", "vec(mode == CUBLAS_SIDE_LEFT ? m : n, incx)"),
                  "C": dev("out", "mat(m, n, ldc)")})
    if re.match(r"^[SDCZ]tpttr$", core):
        return f("async", ["n >= 0", "fill_ok(uplo)", "lda >= max1(n)"],
                 {"AP": dev("in", "packed(n)"), "A": dev("out", "mat(n, n, lda)")})
    if re.match(r"^[SDCZ]trttp$", core):
        return f("async", ["n >= 0", "fill_ok(uplo)", "lda >= max1(n)"],
                 {"A": dev("in", "mat(n, n, lda)"), "AP": dev("out", "packed(n)")})
    return None


def core_name(name):
    core = name[len("cublas"):] if name.startswith("cublas") else name
    if core.endswith("_64"):
        core = core[:-3]
    if core.endswith("_v2"):
        core = core[:-3]
    return core


# --- rewriting ---------------------------------------------------------------

def generated_lines(e, ident, rule):
    call, checks, ann = rule
    if "*" in ann:
        pointers = [p.name for p in e.params if p.pointer and p.name != "handle"]
        if len(pointers) != 1:
            raise spec_error("%s: the rule annotates its one pointer, but it has %d"
                             % (e.name, len(pointers)))
        ann = {pointers[0]: ann["*"]}
    names = [p.name for p in e.params]
    missing = [n for n in ann if n not in names]
    if missing:
        raise spec_error("%s: the rule annotates %s, which the entry lacks"
                         % (e.name, ", ".join(missing)))
    for p in e.params:
        if p.pointer and p.name not in ann and p.name != "handle":
            raise spec_error("%s: no rule for pointer parameter %s" % (e.name, p.name))
        if p.name not in ann:
            continue
        direction, kind = ann[p.name].split()[:2]
        if not p.pointer or p.depth != (2 if kind == "devarray" else 1):
            raise spec_error("%s: %s is not a %s pointer" % (
                e.name, p.name, "double" if kind == "devarray" else "single"))
        if p.const and direction != "in":
            raise spec_error("%s: %s points to const but is %s" % (e.name, p.name, direction))
        if not p.const and direction == "in":
            raise spec_error("%s: %s is written through a non-const pointer yet marked in"
                             % (e.name, p.name))
        if p.pointee == "void" and "type_size" not in ann[p.name]:
            raise spec_error("%s: void pointer %s needs a byte extent" % (e.name, p.name))
    lines = ["fn %s" % e.name, "  header %s" % e.get("header"), "  returns %s" % e.get("returns"),
             "  class generated", "  id %d" % ident, "  call %s" % call]
    lines += ["  check %s" % c for c in checks]
    lines += ["  note %s" % n for n in e.all("note")]
    for p in e.params:
        note = ann.get(p.name)
        lines.append("  param %s | %s" % (p.decl, note) if note else "  param %s" % p.decl)
    lines.append("end")
    return lines


def manual_copy_lines(e, call, dirs):
    lines = ["fn %s" % e.name, "  header %s" % e.get("header"), "  returns %s" % e.get("returns"),
             "  class manual", "  call %s" % (e.get("call") if call == "keep" else call)]
    lines += ["  note %s" % n for n in e.all("note")]
    for p in e.params:
        if p.pointer:
            if p.name not in dirs:
                raise spec_error("%s: no direction for %s" % (e.name, p.name))
            lines.append("  param %s | %s opaque" % (p.decl, dirs[p.name]))
        else:
            lines.append(p.line())
    lines.append("end")
    return lines


def reason_for(e):
    core = core_name(e.name)
    for pattern, reason in REASONS:
        if re.match(pattern, core):
            return reason
    return None


def annotate(items):
    entries = [it for it in items if isinstance(it, entry)]
    ids = [int(e.get("id")) for e in entries if e.get("id") is not None]
    next_id = max(ids, default=0) + 1
    changed = {"generated": 0, "manual": 0, "reason": 0}
    for i, it in enumerate(items):
        if not isinstance(it, entry) or it.get("header") != "cublas_api.h":
            continue
        e = it
        base = e.name[:-3] if e.name.endswith("_64") else e.name
        if base in MANUAL_COPIES:
            call, dirs = MANUAL_COPIES[base]
            new = manual_copy_lines(e, call, dirs)
            kind = "manual"
        elif e.cls == "manual":
            continue
        else:
            rule = family(core_name(e.name))
            if rule is not None:
                ident = e.get("id")
                if ident is None:
                    ident, next_id = next_id, next_id + 1
                new = generated_lines(e, int(ident), rule)
                kind = "generated"
            elif e.cls == "generated":
                raise spec_error("%s: generated, but no rule describes it" % e.name)
            elif e.cls == "unsupported" and e.get("reason") in OWNED_REASONS:
                # Only reasons this tool wrote (or the one it replaces) are rewritten.
                reason = reason_for(e)
                if reason is None:
                    raise spec_error("%s: stays unsupported, but no reason fits it" % e.name)
                new = [("  reason %s" % reason) if l.strip().startswith("reason ") else l
                       for l in e.lines]
                kind = "reason"
            else:
                continue
        if new != e.lines:
            changed[kind] += 1
            items[i] = entry(new, e.number)
    return changed


# --- checking ----------------------------------------------------------------

TOKEN = re.compile(r"\s*(?:(?P<num>\d+[\w.]*)|(?P<id>[A-Za-z_]\w*)|"
                   r"(?P<op>&&|\|\||==|!=|<=|>=|[-+*/%<>!?:(),]))")


def tokenize(text):
    pos, out = 0, []
    text = text.rstrip()
    while pos < len(text):
        m = TOKEN.match(text, pos)
        if not m or m.end() == pos:
            raise spec_error("cannot read '%s' at '%s'" % (text, text[pos:]))
        kind = m.lastgroup
        out.append((kind, m.group(kind)))
        pos = m.end()
    return out


class expr_parser:
    """Recursive descent over the C expression subset the spec uses; records
    every identifier and every call."""

    BINARY = [["||"], ["&&"], ["==", "!="], ["<", ">", "<=", ">="], ["+", "-"], ["*", "/", "%"]]

    def __init__(self, text):
        self.text = text
        self.toks = tokenize(text)
        self.i = 0
        self.idents = []
        self.calls = []

    def peek(self):
        return self.toks[self.i][1] if self.i < len(self.toks) else None

    def take(self, value=None):
        if self.i >= len(self.toks):
            raise spec_error("'%s' ends early" % self.text)
        tok = self.toks[self.i]
        if value is not None and tok[1] != value:
            raise spec_error("'%s': expected '%s', found '%s'" % (self.text, value, tok[1]))
        self.i += 1
        return tok

    def parse(self):
        self.ternary()
        if self.i != len(self.toks):
            raise spec_error("'%s': unexpected '%s'" % (self.text, self.peek()))

    def ternary(self):
        self.binary(0)
        if self.peek() == "?":
            self.take("?")
            self.ternary()
            self.take(":")
            self.ternary()

    def binary(self, level):
        if level == len(self.BINARY):
            return self.unary()
        self.binary(level + 1)
        while self.peek() in self.BINARY[level]:
            self.take()
            self.binary(level + 1)

    def unary(self):
        if self.peek() in ("!", "-", "+"):
            self.take()
            return self.unary()
        kind, value = self.take()
        if kind == "num":
            if not re.match(r"^\d+$", value):
                raise spec_error("'%s': use plain integer literals, not '%s'" % (self.text, value))
            return
        if kind == "id":
            if self.peek() == "(":
                self.take("(")
                nargs = 0
                if self.peek() != ")":
                    self.ternary()
                    nargs = 1
                    while self.peek() == ",":
                        self.take(",")
                        self.ternary()
                        nargs += 1
                self.take(")")
                self.calls.append((value, nargs))
            else:
                self.idents.append(value)
            return
        if value == "(":
            self.ternary()
            self.take(")")
            return
        raise spec_error("'%s': unexpected '%s'" % (self.text, value))


def check_expr(text, params, where, problems):
    p = expr_parser(text)
    try:
        p.parse()
    except spec_error as err:
        problems.append("%s: %s" % (where, err))
        return
    for name, nargs in p.calls:
        if name not in HELPERS:
            problems.append("%s: '%s' calls %s, which is no helper" % (where, text, name))
        elif HELPERS[name] != nargs:
            problems.append("%s: %s takes %d arguments, not %d" % (where, name, HELPERS[name], nargs))
    for name in p.idents:
        if name in params or name == "nullptr" or re.match(r"^(CUBLAS|CUDA)_[A-Z0-9_]+$", name):
            continue
        problems.append("%s: '%s' names '%s', no parameter or constant" % (where, text, name))


ANNOT = re.compile(r"^(in|out|inout)\s+(devarray|dev|scalar|host|opaque|cstr)?\s*(.*)$")


def check(items):
    problems = []
    entries = [it for it in items if isinstance(it, entry)]
    seen_ids = {}
    counts = {}
    by_name = {e.name: e for e in entries}
    for e in entries:
        where = "%s (line %d)" % (e.name, e.number)
        counts[e.cls] = counts.get(e.cls, 0) + 1
        ident = e.get("id")
        if ident is not None:
            if not re.match(r"^[1-9]\d*$", ident):
                problems.append("%s: id '%s' is no positive integer" % (where, ident))
            elif ident in seen_ids:
                problems.append("%s: id %s also belongs to %s" % (where, ident, seen_ids[ident]))
            else:
                seen_ids[ident] = e.name
        if e.cls != "generated":
            if e.all("check"):
                problems.append("%s: check lines belong to generated entries" % where)
            for p in e.params:
                if p.note and re.match(r"^(in|out|inout)\s+(dev|scalar)\b", p.note):
                    problems.append("%s: %s has a dev/scalar annotation outside a generated entry"
                                    % (where, p.name))
            continue
        forward = e.get("forward")
        if forward is not None:
            # A legacy (cublas.h) entry that forwards to its v2 counterpart
            # (interpose/gen/forward_legacy.py): no op of its own.
            target = forward.split()[0]
            if ident is not None or e.all("check"):
                problems.append("%s: a forwarding entry has no id or checks" % where)
            if by_name.get(target) is None or by_name[target].cls not in ("generated", "manual") \
                    or by_name[target].get("forward") is not None:
                problems.append("%s: forwards to %s, no generated or manual entry" % (where, target))
            continue
        if ident is None:
            problems.append("%s: generated entry without id" % where)
        if e.get("class") != "generated":
            problems.append("%s: 'class generated' takes no form word" % where)
        if e.get("reason") is not None:
            problems.append("%s: generated entry with a reason" % where)
        names = {p.name for p in e.params}
        host_out = False
        for p in e.params:
            if not p.pointer:
                if p.note:
                    problems.append("%s: %s is no pointer but annotated" % (where, p.name))
                continue
            if p.name == "handle":
                continue
            m = ANNOT.match(p.note or "")
            if not m or m.group(2) not in ("dev", "scalar", "devarray", "host"):
                problems.append("%s: pointer %s needs 'in|out|inout dev|scalar|devarray|host ...'"
                                % (where, p.name))
                continue
            direction, kind, expr = m.group(1), m.group(2), m.group(3).strip()
            if p.depth != (2 if kind == "devarray" else 1):
                problems.append("%s: %s: %s takes a pointer of depth %d" % (
                    where, p.name, kind, 2 if kind == "devarray" else 1))
            if kind == "host" and direction in ("out", "inout"):
                host_out = True
            if p.const and direction != "in":
                problems.append("%s: %s points to const but is %s" % (where, p.name, direction))
            if kind == "dev" and not expr:
                problems.append("%s: dev pointer %s needs an extent" % (where, p.name))
            if kind == "scalar" and p.pointee == "void" and not expr:
                problems.append("%s: void scalar %s needs a byte count" % (where, p.name))
            if kind == "scalar" and direction in ("out", "inout"):
                host_out = True
            if kind == "devarray":
                if expr.count(";") != 1:
                    problems.append("%s: devarray %s needs '<count>; <elements of each>'"
                                    % (where, p.name))
                    continue
                for part in expr.split(";"):
                    check_expr(part.strip(), names, "%s: %s" % (where, p.name), problems)
            elif expr:
                check_expr(expr, names, "%s: %s" % (where, p.name), problems)
        for c in e.all("check"):
            check_expr(c, names, "%s: check" % where, problems)
        want = "sync" if host_out else "async"
        if e.get("call") != want:
            problems.append("%s: call %s, expected %s" % (where, e.get("call"), want))
    for e in entries:
        if e.cls == "unsupported" and e.get("reason") == OLD_REASON:
            problems.append("%s: outdated reason" % e.name)
        r = e.get("reason") or ""
        if '"' in r or "\\" in r:
            problems.append("%s: reason with a quote or backslash" % e.name)
    return problems, counts


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--spec", default=DEFAULT_SPEC, help="the spec (default: %(default)s)")
    ap.add_argument("--check", action="store_true", help="verify only; change nothing")
    args = ap.parse_args()
    try:
        items = read_spec(args.spec)
        if not args.check:
            changed = annotate(items)
            if write_spec(args.spec, items):
                print("%s: %d entries made generated, %d manual, %d reasons updated"
                      % (args.spec, changed["generated"], changed["manual"], changed["reason"]))
            else:
                print("%s: unchanged" % args.spec)
            items = read_spec(args.spec)
        problems, counts = check(items)
    except spec_error as err:
        print("annotate_blas.py: %s" % err, file=sys.stderr)
        return 1
    for p in problems:
        print("annotate_blas.py: %s" % p, file=sys.stderr)
    print("generated %d, manual %d, unsupported %d, total %d"
          % (counts.get("generated", 0), counts.get("manual", 0), counts.get("unsupported", 0),
             sum(counts.values())))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
