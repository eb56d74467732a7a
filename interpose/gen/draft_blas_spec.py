#!/usr/bin/env python3
"""Drafts cublas.spec / cublasLt.spec entries from the vendor headers.

For every name in --names (the vendor library's exported set) that --spec
does not hold yet, prints a draft entry on stdout: the prototype as clang
reads it from the vendor headers, a guessed annotation for each pointer
parameter, class unsupported with a reason picked by the kind of function
(legacy API, cublasXt, 64-bit index variant, other routine), and "header".
Names no header declares get a prototype-less entry (header none, no
parameters): the stub then reads no argument, which is ABI-safe on x86-64.
A person reviews the output before it is added to the spec, and turns the
entries Gleam implements into class manual by hand; the build never runs
this tool.

  python3 interpose/gen/draft_blas_spec.py --library cublas \\
      --names interpose/spec/libcublas.so.13.symbols \\
      --spec interpose/spec/cublas.spec > /tmp/draft.spec

Needs clang++ on PATH and the CUDA headers (--cuda-include). Python 3
standard library only.
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from draft_spec import guess_annotation  # noqa: E402

FUNC_RE = re.compile(r"FunctionDecl 0x[0-9a-f]+ (?:prev 0x[0-9a-f]+ )?<[^>]*> \S+"
                     r"(?: (?:referenced|used|implicit))* (\w+) '([^']*)'")
PARM_RE = re.compile(r"ParmVarDecl 0x[0-9a-f]+ <.*?> (?:<scratch space>:\d+:\d+|\S+)"
                     r"(?: (?:referenced|used))*(?: (\w+))? '([^']*)'")

TRANSLATION_UNITS = {
    "cublas": [["cublas_api.h"], ["cublas.h"], ["cublasXt.h"]],
    "cublasLt": [["cublasLt.h"]],
}


def prototypes(cuda_include, headers):
    """{name: (return type, [(param type, param name)])} declared by headers."""
    with tempfile.TemporaryDirectory() as tmp:
        source = os.path.join(tmp, "all.cpp")
        with open(source, "w") as f:
            for h in headers:
                f.write("#include <%s>\n" % h)
        ast = subprocess.run(
            ["clang++", "-std=c++17", "-I", cuda_include, "-fsyntax-only",
             "-fno-color-diagnostics", "-Xclang", "-ast-dump", source],
            check=True, capture_output=True, text=True).stdout
    protos = {}
    current = None
    depth = 0
    for line in ast.splitlines():
        marker = re.search(r"[-`]\w", line)
        level = marker.start() if marker else 0
        m = FUNC_RE.search(line)
        if m:
            name, ftype = m.group(1), m.group(2)
            current = None
            if name not in protos and "(" in ftype:
                protos[name] = (ftype[:ftype.index("(")].strip(), [])
                current, depth = name, level
            continue
        if current is None:
            continue
        if level <= depth:
            current = None
            continue
        p = PARM_RE.search(line)
        if p and level == depth + 2:
            protos[current][1].append((p.group(2), p.group(1)))
    return protos


def reason_for(library, name, header):
    if library == "cublasLt":
        return ("cuBLASLt function not remoted yet: Gleam forwards handles, matmul "
                "descriptors, layouts, preferences, heuristics and cublasLtMatmul")
    if header == "cublasXt.h":
        return "cublasXt (multi-GPU host-memory BLAS) is not remoted"
    if header == "cublas.h":
        return ("legacy cuBLAS API (cublas.h, implicit handle) is not remoted; "
                "use the cublas_v2.h API")
    if header == "none":
        return "internal vendor entry point without a public prototype"
    return ("cuBLAS routine not remoted yet: Gleam forwards the gemm family "
            "(gemm, GemmEx, batched, strided batched) and handle settings")


def draft(library, name, proto, header):
    lines = ["fn %s" % name, "  header %s" % header]
    if proto is None:
        lines += ["  returns cublasStatus_t", "  class unsupported",
                  "  reason %s" % reason_for(library, name, "none"),
                  "  call sync", "  note no vendor declaration: the stub reads no argument"]
        return "\n".join(lines + ["end"])
    ret, params = proto
    lines += ["  returns %s" % ret, "  class unsupported",
              "  reason %s" % reason_for(library, name, header), "  call sync"]
    for i, (ptype, pname) in enumerate(params):
        pname = pname or "arg%d" % i
        decl = ptype + ("" if ptype.endswith("*") else " ") + pname
        note = guess_annotation(ptype, pname, params)
        lines.append("  param %s%s" % (decl, " | " + note if note else ""))
    return "\n".join(lines + ["end"])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--library", required=True, choices=sorted(TRANSLATION_UNITS))
    ap.add_argument("--names", required=True, help="one exported name per line")
    ap.add_argument("--spec", help="existing spec; names it has are skipped")
    ap.add_argument("--cuda-include", default="/usr/local/cuda/include")
    args = ap.parse_args()
    with open(args.names) as f:
        names = [n.strip() for n in f if n.strip() and not n.startswith("#")]
    known = set()
    if args.spec and os.path.exists(args.spec):
        with open(args.spec) as f:
            known = {l.split()[1] for l in f if l.startswith("fn ")}
    # First header set that declares a name wins: cublas_api.h before the
    # legacy cublas.h (which includes it).
    found = {}
    for headers in TRANSLATION_UNITS[args.library]:
        for name, proto in prototypes(args.cuda_include, headers).items():
            found.setdefault(name, (proto, headers[-1]))
    for name in sorted(names):
        if name in known:
            continue
        proto, header = found.get(name, (None, "none"))
        print(draft(args.library, name, proto, header) + "\n")


if __name__ == "__main__":
    sys.exit(main())
