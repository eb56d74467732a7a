#!/usr/bin/env python3
"""Makes the legacy cuBLAS API of interpose/spec/cublas.spec real.

Rewrites the spec in place (re-runnable; a second run changes nothing):
every cublas.h routine that has a cublas_v2 counterpart (<name>_v2, class
generated or manual) becomes "class generated" with "forward <name>_v2":
generate.py writes a stub that calls the counterpart on the process's
implicit handle (interpose/blas/legacy.hpp), turning the legacy character
arguments into enums and by-value scalars into pointers. Its call class is
the counterpart's. The legacy trmm is in place (B is also the output):
"forward cublas?trmm_v2 C=B ldc=ldb". The API's own functions (cublasInit,
cublasShutdown, cublasGetError, cublasGetVersion, cublasSetKernelStream,
cublasAlloc, cublasFree) become "class manual" (interpose/cublas/legacy.cpp).

  python3 interpose/gen/forward_legacy.py

Python 3 standard library only.
"""

import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SPEC = os.path.join(HERE, "..", "spec", "cublas.spec")

MANUAL = {"cublasInit", "cublasShutdown", "cublasGetError", "cublasGetVersion",
          "cublasSetKernelStream", "cublasAlloc", "cublasFree"}
IN_PLACE = {"trmm": "C=B ldc=ldb"}


def entries(text):
    return list(re.finditer(r"^fn (\w+)\n(.*?)^end\n", text, re.M | re.S))


def key(body, name):
    m = re.search(r"^  %s (.*)$" % name, body, re.M)
    return m.group(1) if m else None


def rewrite(name, body, targets):
    if key(body, "header") != "cublas.h":
        return None
    cls = key(body, "class")
    if name in MANUAL:
        if cls == "manual":
            return None
        body = re.sub(r"^  class .*\n", "  class manual\n", body, flags=re.M)
        return re.sub(r"^  reason .*\n", "", body, flags=re.M)
    target = name + "_v2"
    if target not in targets or cls == "generated":
        return None
    line = "  forward %s" % target
    for routine, args in IN_PLACE.items():
        if name.endswith(routine):
            line += " " + args
    body = re.sub(r"^  class .*\n", "  class generated\n%s\n" % line, body, flags=re.M)
    body = re.sub(r"^  reason .*\n", "", body, flags=re.M)
    return re.sub(r"^  call .*\n", "  call %s\n" % targets[target], body, flags=re.M)


def main():
    with open(SPEC) as f:
        text = f.read()
    targets = {}
    for m in entries(text):
        cls = key(m.group(2), "class")
        if key(m.group(2), "header") == "cublas_api.h" and cls in ("generated", "manual"):
            targets[m.group(1)] = key(m.group(2), "call")
    out = []
    pos = 0
    changed = 0
    for m in entries(text):
        new = rewrite(m.group(1), m.group(2), targets)
        if new is None:
            continue
        out.append(text[pos:m.start(2)])
        out.append(new)
        pos = m.end(2)
        changed += 1
    out.append(text[pos:])
    with open(SPEC, "w") as f:
        f.write("".join(out))
    print("forward_legacy.py: %d entries changed" % changed)
    return 0


if __name__ == "__main__":
    sys.exit(main())
