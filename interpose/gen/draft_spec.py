#!/usr/bin/env python3
"""Drafts spec entries for exported names that a spec lacks.

Used when a new CUDA release adds functions or a new library is remoted: it
reads the names a vendor library exports, asks clang for the vendor
prototypes (-Xclang -ast-dump of the runtime headers, or of the headers
given with --header), guesses pointer directions and
lengths, and prints one draft entry per missing name on stdout (class
unsupported, reason "not reviewed yet"). A person reviews every drafted line
before it is added to interpose/spec/cudart.spec; this tool never writes the
spec itself and the build never runs it.

  python3 interpose/gen/draft_spec.py \
      --names interpose/spec/libcudart.so.13.symbols \
      --spec interpose/spec/cudart.spec > /tmp/draft.spec

  python3 interpose/gen/draft_spec.py --header cusparse.h \
      --names interpose/spec/libcusparse.so.12.symbols > /tmp/cusparse.draft

Needs clang on PATH and the CUDA headers (--cuda-include, default
/usr/local/cuda/include). Python 3 standard library only.
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile

HEADERS = [
    "GL/gl.h",
    "cuda_runtime_api.h",
    "cuda_profiler_api.h",
    "cuda_gl_interop.h",
    "cuda_egl_interop.h",
    "cuda_vdpau_interop.h",
]

FUNC_RE = re.compile(r"FunctionDecl 0x[0-9a-f]+ <[^>]*> \S+(?: \S+:\d+:\d+)?"
                     r"(?: (?:referenced|used|implicit))* (\w+) '([^']*)'(?: extern)?$")
PARM_RE = re.compile(r"ParmVarDecl 0x[0-9a-f]+ <.*?> (?:<scratch space>:\d+:\d+|\S+)"
                     r"(?: (?:referenced|used))*(?: (\w+))? '([^']*)'")


def vdpau_shim(directory):
    """Writes a minimal vdpau/vdpau.h for hosts without libvdpau-dev."""
    os.makedirs(os.path.join(directory, "vdpau"), exist_ok=True)
    with open(os.path.join(directory, "vdpau", "vdpau.h"), "w") as f:
        f.write(VDPAU_SHIM)


VDPAU_SHIM = """#pragma once
#include <stdint.h>
typedef uint32_t VdpDevice;
typedef uint32_t VdpVideoSurface;
typedef uint32_t VdpOutputSurface;
typedef uint32_t VdpFuncId;
typedef int VdpStatus;
typedef VdpStatus VdpGetProcAddress(VdpDevice device, VdpFuncId function_id,
                                    void **function_pointer);
"""


def vendor_prototypes(cuda_include, headers=None):
    """Returns {name: (return type, [(param type, param name)])} of the
    functions `headers` (default: the runtime's, HEADERS) declare."""
    with tempfile.TemporaryDirectory() as tmp:
        vdpau_shim(os.path.join(tmp, "shim"))
        source = os.path.join(tmp, "all.cpp")
        with open(source, "w") as f:
            for h in headers or HEADERS:
                f.write("#include <%s>\n" % h)
        ast = subprocess.run(
            ["clang++", "-std=c++17", "-D__CUDA_API_VERSION_INTERNAL",
             "-I", cuda_include, "-idirafter", os.path.join(tmp, "shim"),
             "-fsyntax-only", "-fno-color-diagnostics", "-Xclang", "-ast-dump",
             source], check=True, capture_output=True, text=True).stdout
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
            if name not in protos:
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


def is_plural(name):
    """True for parameter names that name an array ("nodes", "pDependencies")."""
    stem = name[1:] if re.match(r"^p[A-Z]", name) else name
    stem = re.sub(r"_out$", "", stem)
    if stem.endswith("Params") or stem.endswith("Status"):
        return False
    return (stem.endswith("s") and not stem.endswith("ss")) or \
        any(w in stem for w in ("Array", "List", "Idxs"))


def pick_count(pname, counts):
    """The length expression for array `pname`: the count named like it."""
    chosen = counts[0]
    for ctype, cname in counts:
        stem = re.sub(r"^(num|n)", "", cname).lower()[:4]
        if stem and stem in (pname or "").lower():
            chosen = (ctype, cname)
    ctype, cname = chosen
    return ("*" + cname) if "*" in ctype else cname


def guess_annotation(ptype, pname, params):
    """Guesses '<direction> <length>' for a pointer parameter, '' otherwise."""
    if "*" not in ptype:
        return ""
    compact = ptype.replace(" ", "")
    stars = compact.count("*")
    base = ptype.replace("const", "").replace("*", "").strip()
    is_const = compact.startswith("const")
    counts = [(t, n) for t, n in params
              if n and n != pname and re.match(r"^(num[A-Z]|count$|n[A-Z])", n)]
    if compact == "constchar*":
        return "in cstr"
    if pname and re.match(r"^(num[A-Z]|count$)", pname):
        return "in 1" if is_const else "inout 1"
    if counts and "*const*" in compact:
        return "in " + pick_count(pname, counts)
    if stars >= 2:
        return "out 1"
    if counts and is_plural(pname or ""):
        return ("in " if is_const else "out ") + pick_count(pname, counts)
    if base == "void" and stars == 1:
        return "in opaque" if is_const else "inout opaque"
    return "in 1" if is_const else "out 1"


def draft(name, proto):
    ret, params = proto
    lines = ["fn %s" % name, "  returns %s" % ret, "  class unsupported",
             "  reason not reviewed yet", "  call sync"]
    for i, (ptype, pname) in enumerate(params):
        pname = pname or "arg%d" % i
        decl = ptype + ("" if ptype.endswith("*") else " ") + pname
        note = guess_annotation(ptype, pname, params)
        lines.append("  param %s%s" % (decl, " | " + note if note else ""))
    lines.append("end")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--names", required=True, help="one exported name per line")
    ap.add_argument("--spec", help="existing spec; names it has are skipped")
    ap.add_argument("--cuda-include", default="/usr/local/cuda/include")
    ap.add_argument("--header", action="append",
                    help="a vendor header to read instead of the runtime's (repeatable)")
    args = ap.parse_args()
    with open(args.names) as f:
        names = [n.strip() for n in f if n.strip() and not n.startswith("#")]
    known = set()
    if args.spec:
        with open(args.spec) as f:
            known = {l.split()[1] for l in f if l.startswith("fn ")}
    protos = vendor_prototypes(args.cuda_include, args.header)
    for name in names:
        if name in known:
            continue
        if name not in protos:
            print("# %s: no vendor prototype found; write it by hand" % name)
            continue
        print(draft(name, protos[name]) + "\n")


if __name__ == "__main__":
    sys.exit(main())
