#!/usr/bin/env python3
"""Generates the interposer's mechanical parts from an interpose/spec/*.spec.

One spec per library (--library or --surface, default: the spec's file name
stem): cudart (libcudart.so.13), cuda (libcuda.so.1, the driver-level
surface), cublas (libcublas.so.13), cublasLt (libcublasLt.so.13). Writes, into
--out-dir (the build directory, never the source tree), with <lib> the
library's name:
  <lib>.map                   GNU ld version script: every spec name, version
                              lib<lib>.so.13 (cuda: unversioned, as the
                              vendor's driver), everything else local; plus
                              Gleam's private exports under GLEAM_PRIVATE_1
  <lib>_private.txt           those private exports (cudart: the entry point
                              our libcuda.so.1 reaches the client through)
  cuda_proc_table.inc         cuda only: GLEAM_DRIVER_PROC(name) per export,
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
  <lib>_generated.cpp         libraries with generated calls (cublas): the
                              client stub of every 'class generated' entry:
                              the spec's checks, then its arguments packed
                              (wire/library_args.hpp) into one LibraryCall op
  <lib>_generated.txt         "<name>\t<id>" per generated function
With --server-out-dir DIR it writes the server side instead (the executor's
build directory): <lib>_library_calls.cpp (one case per generated function:
unpack, check every device range with the spec's extent, call the vendor's
function), <lib>_generated_api.inc (X(name) per generated function, for the
loaded vendor library's members) and <lib>_function_ids.hpp (the pinned ids).
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

CLASSES = ("manual", "unsupported", "generated")
CALLS = ("async", "local", "handle", "sync")
DIRECTIONS = ("in", "out", "inout")
# Annotation kinds of generated entries: device memory, a pointer-mode
# scalar, a device array of device pointers, host memory.
KINDS = ("dev", "scalar", "devarray", "host")

# Identifiers an extent or check expression may use besides parameter names
# and CUBLAS_* / CUDA_* constants: wire/library_args.hpp (gleam::wire::extents).
EXPRESSION_WORDS = ("sizeof", "vec", "mat", "packed", "strided", "mul", "add", "type_size",
                    "max1", "op_ok", "fill_ok", "side_ok", "diag_ok", "nullptr")
INTEGRAL = ("char", "int", "unsigned", "unsigned int", "size_t", "float", "double")


class generated_calls:
    """How a library's generated entries are marshalled (LibraryCall ops)."""

    def __init__(self, handle, status, library, invalid, not_initialized, not_supported,
                 client_header, client_namespace, api_class, api_header, server_function,
                 legacy_header=None):
        # The C type of the handle every generated entry takes first.
        self.handle = handle
        # The return type of every generated entry and its values.
        self.status = status
        self.invalid = invalid
        self.not_initialized = not_initialized
        self.not_supported = not_supported
        # proto::LibraryCall::Library value.
        self.library = library
        # The client's library_call class: header and namespace.
        self.client_header = client_header
        self.client_namespace = client_namespace
        # The server's loaded vendor library (members named as the
        # functions) and the generated dispatcher's name.
        self.api_class = api_class
        self.api_header = api_header
        self.server_function = server_function
        # Declares what the stubs of forwarding (legacy) entries call.
        self.legacy_header = legacy_header


class library:
    """What differs between the interposer libraries."""

    def __init__(self, name, headers, fail, report, report_header, export_header,
                 split=None, version="", private=None, proc_table=False, generated=None):
        self.name = name
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
        "cuda", ["cuda.h"],
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
            "cublasHandle_t", "cublasStatus_t", "CUBLAS", "CUBLAS_STATUS_INVALID_VALUE",
            "CUBLAS_STATUS_NOT_INITIALIZED", "CUBLAS_STATUS_NOT_SUPPORTED",
            "interpose/blas/library_call.hpp", "gleam::interpose::blas",
            "blas_api", "executor/blas_api.hpp", "run_generated_cublas",
            "interpose/blas/legacy.hpp")),
    "cublasLt": library(
        "cublasLt", ["cublasLt.h"],
        {"cublasStatus_t": "CUBLAS_STATUS_NOT_SUPPORTED",
         "const char *": '"unsupported by gleam"'},
        "gleam::interpose::blas::report_unsupported", "interpose/blas/common.hpp",
        "cublasLt_export.hpp"),
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
        self.kind = kind

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
        self.fail = None
        self.call = None
        self.notes = []
        self.params = []
        self.id = None
        self.checks = []
        # Legacy entries: the v2 function they forward to, and explicit
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
        words = note.split(None, 1)
        if words and words[0] in DIRECTIONS and len(words) == 2 \
                and words[1].split()[0] in KINDS:
            direction = words[0]
            kind, _, length = words[1].partition(" ")
            length = length.strip() or None
            if kind != "scalar" and length is None:
                raise spec_error("%s: '%s' needs the extent: '%s %s <elements>'"
                                 % (where, decl, direction, kind))
            if kind == "devarray" and length.count(";") != 1:
                raise spec_error("%s: '%s': devarray takes '<count>; <elements of each>'"
                                 % (where, decl))
            return param(decl, name, direction, length, kind)
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
        elif key == "check":
            if not rest:
                raise spec_error("%s: check needs a condition" % where)
            current.checks.append(rest)
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
                forward_arguments(fn, target)
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
        validate_generated(fn, where)
    elif fn.id is not None or fn.checks:
        raise spec_error("%s: 'id' and 'check' belong to generated entries only" % where)
    names = {p.name for p in fn.params}
    for p in fn.params:
        if p.kind is not None and fn.cls != "generated":
            raise spec_error("%s: '%s %s' annotations belong to generated entries only"
                             % (where, p.direction, p.kind))
        if p.length is None or p.length in ("opaque", "cstr"):
            continue
        for ident in re.findall(r"[A-Za-z_]\w*", p.length):
            if ident not in names and ident not in EXPRESSION_WORDS \
                    and not re.match(r"^(CUBLAS|CUDA)_\w+$", ident):
                raise spec_error("%s: length '%s' of %s names no parameter '%s'"
                                 % (where, p.length, p.name, ident))
    for check in fn.checks:
        for ident in re.findall(r"[A-Za-z_]\w*", check):
            if ident not in names and ident not in EXPRESSION_WORDS \
                    and not re.match(r"^(CUBLAS|CUDA)_\w+$", ident):
                raise spec_error("%s: check '%s' names no parameter '%s'"
                                 % (where, check, ident))


def validate_generated(fn, where):
    """What the generator needs of a generated entry."""
    if LIB.generated is None:
        raise spec_error("%s: the %s surface has no generated calls" % (where, LIB.name))
    if fn.forward is not None:
        # A legacy entry: the function it forwards to is checked in parse().
        if LIB.generated.legacy_header is None:
            raise spec_error("%s: the %s surface has no legacy API to forward" % (where, LIB.name))
        if fn.id is not None or fn.checks:
            raise spec_error("%s: a forwarding entry has no id or checks of its own" % where)
        return
    if fn.form is not None:
        raise spec_error("%s: 'class generated' takes no form word (got '%s')"
                         % (where, fn.form))
    outputs = host_outputs(fn)
    want = "sync" if outputs else "async"
    if fn.call != want:
        raise spec_error("%s: a generated entry %s host outputs: 'call %s'"
                         % (where, "with" if outputs else "without", want))
    if fn.id is None:
        raise spec_error("%s: a generated entry needs its pinned 'id'" % where)
    if fn.returns != LIB.generated.status:
        raise spec_error("%s: a generated entry returns %s" % (where, LIB.generated.status))
    if not fn.params or fn.params[0].ctype() != LIB.generated.handle:
        raise spec_error("%s: the first parameter of a generated entry is the %s"
                         % (where, LIB.generated.handle))
    for p in fn.params:
        pointer = "*" in p.decl or "[" in p.decl
        if pointer and p.kind is None:
            raise spec_error("%s: pointer parameter %s of a generated entry needs "
                             "'<dir> dev <extent>' or '<dir> scalar [<count>]'"
                             % (where, p.name))
        stars = 2 if p.kind == "devarray" else 1
        if p.kind is not None and (p.ctype().count("*") != stars or "[" in p.decl):
            raise spec_error("%s: %s: %s takes a %s pointer" % (
                where, p.name, p.kind, "double" if stars == 2 else "single"))
        if p.kind == "scalar" and p.pointee() == "void" and p.length is None:
            raise spec_error("%s: void scalar %s needs its size in bytes" % (where, p.name))
        if p.kind is not None and p.direction != "in" and p.ctype().startswith("const"):
            raise spec_error("%s: %s is const but annotated %s" % (where, p.name, p.direction))


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
    own = [f for f in functions if f.header == "none"]
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


def generated_of(functions):
    return [f for f in functions if f.cls == "generated"]


def remoted_of(functions):
    """Generated entries with a LibraryCall of their own (not forwarding)."""
    return [f for f in generated_of(functions) if f.forward is None]


def host_outputs(fn):
    return [p for p in fn.params if p.kind in ("scalar", "host") and p.direction != "in"]


def byte_count(p):
    """The C++ expression of p's extent in bytes."""
    count = p.length if p.length is not None else "1"
    if p.pointee() == "void":
        return "(%s)" % count
    return "mul(%s, sizeof(%s))" % (count, p.pointee())


def client_stub(fn):
    g = LIB.generated
    ns = g.client_namespace
    args = ", ".join(p.decl for p in fn.params)
    out = ["GLEAM_INTERPOSE_EXPORT %s %s(%s) {\n" % (fn.returns, fn.name, args),
           "  return %s::guarded([&]() -> %s {\n" % (ns, g.status),
           "    auto* state_ = %s::state_of(%s);\n" % (ns, fn.params[0].name),
           "    if (state_ == nullptr)\n",
           "      return %s;\n" % g.not_initialized]
    if fn.checks:
        out.append("    if (%s)\n" % "\n        || ".join("!(%s)" % c for c in fn.checks))
        out.append("      return %s;\n" % g.invalid)
    out.append('    %s::library_call call_(%d, "%s", *state_);\n' % (ns, fn.id, fn.name))
    for p in fn.params[1:]:
        if p.kind in ("dev", "devarray"):
            out.append("    call_.device(%s);\n" % p.name)
        elif p.kind == "host":
            out.append("    if (auto st_ = call_.host_%s(%s, %s); st_ != %s)\n"
                       "      return st_;\n"
                       % (p.direction, p.name, byte_count(p), "CUBLAS_STATUS_SUCCESS"))
        elif p.kind == "scalar":
            out.append("    if (auto st_ = call_.scalar_%s(%s, %s); st_ != %s)\n"
                       "      return st_;\n"
                       % (p.direction, p.name, byte_count(p), "CUBLAS_STATUS_SUCCESS"))
        else:
            out.append("    call_.value(%s);\n" % p.name)
    out.append("    return call_.finish();\n  });\n}\n")
    return "".join(out)


# Legacy character arguments ('N', 'U', 'L', ...) and the v2 enum each
# becomes (interpose/blas/legacy.hpp).
LEGACY_ENUMS = {"cublasOperation_t": "legacy_op", "cublasFillMode_t": "legacy_fill",
                "cublasSideMode_t": "legacy_side", "cublasDiagType_t": "legacy_diag"}


def forward_arguments(fn, target):
    """The argument list of fn's call of target: the handle "h_", fn's
    parameters in order (characters turned into enums, values passed by
    address where target takes a pointer), fn's return value as "r_" (the
    target's last parameter), and the spec's explicit arguments."""
    params = list(target.params[1:])
    returns = fn.returns != "void"
    if returns:
        if not params or "*" not in params[-1].decl:
            raise ValueError("returns %s but %s has no result parameter"
                             % (fn.returns, target.name))
        params = params[:-1]
    legacy = list(fn.params)
    args = ["h_"]
    used = set()
    for p in params:
        if p.name in fn.forward_args:
            args.append(fn.forward_args[p.name])
            for ident in re.findall(r"[A-Za-z_]\w*", fn.forward_args[p.name]):
                used.add(ident)
            continue
        rest = [q for q in legacy if q.name not in used]
        if not rest:
            raise ValueError("nothing left for %s's parameter %s" % (target.name, p.name))
        q = rest[0]
        used.add(q.name)
        t = p.ctype()
        if t in LEGACY_ENUMS and q.ctype() == "char":
            args.append("%s::%s(%s)" % (LIB.generated.client_namespace, LEGACY_ENUMS[t], q.name))
        elif "*" in t and "*" not in q.decl:
            args.append("&" + q.name)
        else:
            args.append(q.name)
    unused = [q.name for q in legacy if q.name not in used]
    if unused:
        raise ValueError("parameters %s are not passed to %s" % (", ".join(unused), target.name))
    if returns:
        args.append("r_")
    return args


def legacy_stub(fn, target):
    args = ", ".join(fn.params[i].decl for i in range(len(fn.params))) or "void"
    forwarded = forward_arguments(fn, target)
    ns = LIB.generated.client_namespace
    call = "return %s(%s);" % (target.name, ", ".join(forwarded))
    # A character the legacy API does not know fails the call, as the
    # vendor's argument check does.
    converted = [a for a in forwarded if a.startswith(ns + "::legacy_")]
    if converted:
        call = ("if (%s)\n      return CUBLAS_STATUS_INVALID_VALUE;\n    %s"
                % (" || ".join("static_cast<int>(%s) < 0" % a for a in converted), call))
    if fn.returns == "void":
        body = ('  %s::legacy_run("%s", [&](cublasHandle_t h_) {\n    %s\n  });\n'
                % (ns, fn.name, call))
    else:
        body = ('  return %s::legacy_value<%s>("%s", [&](cublasHandle_t h_, %s* r_) {\n'
                "    %s\n  });\n" % (ns, fn.returns, fn.name, fn.returns, call))
    return "GLEAM_INTERPOSE_EXPORT %s %s(%s) {\n%s}\n" % (fn.returns, fn.name, args, body)


def client_file(functions):
    g = LIB.generated
    out = [banner(),
           "// Client stubs of the generated %s functions: each checks what the\n"
           "// vendor checks at the call (the spec's 'check' lines), packs its\n"
           "// arguments (wire/library_args.hpp) into one LibraryCall op and sends it\n"
           "// (%s::library_call).\n\n" % (LIB.name, g.client_namespace),
           '#include "interpose/%s"\n' % LIB.export_header,
           '#include "%s"\n' % g.client_header,
           '#include "%s"\n' % g.legacy_header if any(
               f.forward for f in functions) else "",
           '#include "wire/library_args.hpp"\n\n',
           "using namespace gleam::wire::extents;\n\n",
           'extern "C" {\n\n']
    by_name = {f.name: f for f in functions}
    for fn in generated_of(functions):
        if fn.forward is None:
            out.append(client_stub(fn) + "\n")
    legacy = [f for f in generated_of(functions) if f.forward is not None]
    if legacy:
        out.append("// The legacy API (cublas.h): the process's implicit handle, errors\n"
                   "// kept for cublasGetError (interpose/blas/legacy.hpp).\n\n")
    for fn in legacy:
        out.append(legacy_stub(fn, by_name[fn.forward]) + "\n")
    out.append('} // extern "C"\n')
    return "".join(out)


def server_case(fn):
    out = ["    case %d: { // %s\n" % (fn.id, fn.name)]
    handle = fn.params[0]
    out.append("      auto %s_ = in.address();\n" % handle.name)
    for p in fn.params[1:]:
        if p.kind in ("dev", "devarray"):
            out.append("      auto %s_ = in.address();\n" % p.name)
        elif p.kind == "scalar":
            out.append("      auto %s_ = env.scalar(in, %s);\n"
                       % (p.name, "false" if p.direction == "out" else "true"))
        elif p.kind == "host":
            out.append("      auto %s_ = env.host(in, %s);\n"
                       % (p.name, "false" if p.direction == "out" else "true"))
        else:
            out.append("      auto %s = in.value<%s>();\n" % (p.name, p.ctype()))
    out.append('      if (!in.done())\n        return env.malformed("%s"), true;\n' % fn.name)
    out.append('      if (api.%s == nullptr)\n        return env.unavailable("%s"), true;\n'
               % (fn.name, fn.name))
    out.append("      auto %s = static_cast<%s>(env.handle(%s_));\n"
               % (handle.name, handle.ctype(), handle.name))
    out.append("      if (%s == nullptr)\n        return true;\n" % handle.name)
    # Device pointers typed as declared (extents may test one for null).
    for p in fn.params[1:]:
        if p.kind in ("dev", "devarray"):
            out.append("      auto %s = reinterpret_cast<%s>(static_cast<uintptr_t>(%s_));\n"
                       % (p.name, p.ctype(), p.name))
    for p in fn.params[1:]:
        if p.kind == "dev":
            out.append('      if (!env.device(%s_, %s, "%s"))\n        return true;\n'
                       % (p.name, byte_count(p), p.name))
    for p in fn.params[1:]:
        if p.kind == "devarray":
            count, each = p.array_parts()
            each_bytes = each if p.pointee() == "void" else "mul(%s, sizeof(%s))" % (
                each, p.pointee())
            out.append('      if (!env.device_array(%s_, %s, %s, "%s"))\n        return true;\n'
                       % (p.name, count, each_bytes, p.name))
    for p in fn.params[1:]:
        if p.kind in ("scalar", "host"):
            out.append('      auto* %s = env.%s_%s(%s_, %s, "%s");\n'
                       '      if (%s == nullptr)\n        return true;\n'
                       % (p.name, p.kind, p.direction, p.name,
                          byte_count(p), p.name, p.name))
    call_args = []
    for p in fn.params:
        if p is handle:
            call_args.append(p.name)
        elif p.kind in ("dev", "devarray"):
            call_args.append(p.name)
        elif p.kind in ("scalar", "host"):
            call_args.append("static_cast<%s>(%s)" % (p.ctype(), p.name))
        else:
            call_args.append(p.name)
    out.append('      env.report(api.%s(%s), "%s");\n' % (fn.name, ", ".join(call_args), fn.name))
    out.append("      return true;\n    }\n")
    return "".join(out)


def server_file(functions):
    g = LIB.generated
    out = [banner(),
           "// The server side of the generated %s functions: unpacks each call's\n"
           "// arguments (wire/library_args.hpp), checks every device address against\n"
           "// the session's allocations with the spec's extents, and calls the\n"
           "// vendor's function (executor/library_call.hpp).\n\n" % LIB.name,
           '#include "executor/library_call.hpp"\n',
           '#include "%s"\n' % g.api_header,
           '#include "wire/library_args.hpp"\n\n',
           "#include <cstdint>\n\n",
           "using namespace gleam::wire::extents;\n\n",
           "namespace gleam::executor {\n\n",
           "bool %s(%s& api, library_call_env& env, uint32_t function,\n"
           "%s wire::arg_reader& in) {\n" % (g.server_function, g.api_class,
                                              " " * (len(g.server_function) + 5)),
           "  switch (function) {\n"]
    for fn in remoted_of(functions):
        out.append(server_case(fn))
    out.append("    default:\n      return false;\n  }\n}\n\n} // namespace gleam::executor\n")
    return "".join(out)


def id_header(functions):
    out = [banner(), "#pragma once\n\n#include <cstdint>\n\n",
           "/// The pinned ids of the generated %s functions (the spec's 'id' lines),\n"
           "/// as LibraryCall.function carries them.\n" % LIB.name,
           "namespace gleam::generated::%s_ids {\n\n" % LIB.name]
    out += ["inline constexpr uint32_t %s = %d;\n" % (f.name, f.id) for f in remoted_of(functions)]
    out.append("\n} // namespace gleam::generated::%s_ids\n" % LIB.name)
    return "".join(out)


def api_list(functions):
    return banner() + "".join("X(%s)\n" % f.name for f in remoted_of(functions))


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
                         server_file(functions))
        write_if_changed(os.path.join(args.server_out_dir, LIB.name + "_generated_api.inc"),
                         api_list(functions))
        write_if_changed(os.path.join(args.server_out_dir, LIB.name + "_function_ids.hpp"),
                         id_header(functions))
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
        # The name -> function table of cuGetProcAddress: every export.
        write_if_changed(os.path.join(out, lib + "_proc_table.inc"),
                         banner() + "".join("GLEAM_DRIVER_PROC(%s)\n" % f.name
                                            for f in by_name))
    if lib == "cudart":
        write_if_changed(os.path.join(out, "shim", "vdpau", "vdpau.h"), VDPAU_SHIM)
        write_if_changed(os.path.join(out, "shim", "GL", "gl.h"), GL_SHIM)
    if LIB.generated is not None:
        write_if_changed(os.path.join(out, lib + "_generated.cpp"), client_file(by_name))
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
