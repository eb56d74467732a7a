"""The generated calls of interpose/gen/generate.py: LibraryCall ops.

A library with generated calls declares here (generated_calls) what its
stubs and the server need of it: the status type and values, the client's
and the server's pieces. Its spec declares its handle types (spec-level
'handle' lines, handle_type) and, per 'class generated' entry, the pointer
and handle annotations of its parameters. This module validates those
entries and writes the client stubs (<lib>_generated.cpp) and the server
side (<lib>_library_calls.cpp, <lib>_generated_api.inc, <lib>_function_ids.hpp).

cuBLAS is the first library: its handle (cublasHandle_t, created by the
hand-written cublasCreate) is a "legacy" handle of interpose/blas and
executor/blas.cpp, and its stubs keep that form. Every later library
(cuRAND, NVML) uses the generic pieces: interpose/library_call.hpp on the
client, executor/library_runner.hpp on the server, and the per-session
handle table of executor/library_handles.hpp. A library whose vendor header
is not installed (NVML) declares its prototypes in the spec (prototypes=True
of generate.py's library): the generator writes them for both sides.
"""

import re

# Parameter kinds of generated entries (param.kind):
#   dev          '<dir> dev <EXPR>': device memory, EXPR elements
#   scalar       '<dir> scalar [<EXPR>]': cuBLAS pointer-mode scalar
#   devarray     '<dir> devarray <COUNT>; <EXPR>': a device array of COUNT
#                device pointers, each to EXPR elements (batched routines of
#                cuBLAS and cuSOLVER; the server reads the array once the
#                handle's stream has done the earlier work and checks each
#                pointer: executor::check_pointer_array)
#   host         '<dir> host <EXPR>': host memory of the app whatever a
#                pointer mode says; in and inout bytes travel with the call;
#                out and inout ones come back ('out': the server writes into
#                scratch memory)
#   opthost      '<dir> opthost <EXPR>': host memory as 'host' that the app may
#                pass as NULL (cuDNN's padding fills, optional sizes): whether
#                it did travels first, and NULL reaches the library as NULL
#   scratch      'inout scratch <EXPR>': host memory only the library uses
#                (cuSOLVER's bufferOnHost): nothing travels either way; the
#                server gives the library EXPR bytes of its own
#   dev_or_host  'out dev_or_host <EXPR>': device memory when the entry's
#                handle is a device handle, else (a handle made by an
#                'out handle host' create) host memory as 'host'
#   new_handle   'out handle [host]': the call creates a handle of a declared
#                type; 'host': a host-side object (its outputs are 'host')
#   handle       a by-value parameter of a declared handle type
#   destroys     '| destroys': a by-value handle the call destroys
#   stream       '| stream': a by-value cudaStream_t (the client's stream
#                handle on the wire, the session's driver stream on the server)
# A 'dev' extent may read an in or inout host parameter's value as '*<p>',
# and the note slot of an object handle parameter as 'note(<p>)' (what a
# 'verify' of an earlier call kept there: cuSOLVER's IRS main precision).
# Entry lines 'verify <condition>' (server only, after the handles are found
# and the device ranges checked, before the vendor's call): a condition
# that, when false, has failed the call itself; it may name 'env' (the
# call's library_call_env), 'api' and 'note(<handle param>)' (the note slot
# of an object handle parameter, library_handle_entry::note).
POINTER_KINDS = ("dev", "scalar", "devarray", "host", "opthost", "scratch", "dev_or_host", "handle")
VALUE_KINDS = ("destroys", "stream")


class handle_type:
    """A spec-level 'handle' line: a handle type of the library.

      handle <C type> object <struct> destroy <function> [stream <function>]
      handle <C type> value destroy <function> [stream <function>]
      handle <C type> address destroy <function>
      handle <C type> device <struct> lookup <function>

    Any of them may end in 'alias <C type>...': further C types that name
    the same handles (cuSPARSE's cusparseConstSpMatDescr_t, a pointer to a
    const cusparseSpMatDescr).

    object: the app holds a client object (<struct>, whose first member is
    a gleam::interpose::library_handle) named on the wire by a client-chosen
    id. value: the handle is an integer (cuFFT's cufftHandle) that the client
    chooses, a live one of the process's value_handles; the server keeps the
    library's own integer for it. address: the handle is the server library's own pointer value (a
    device address that the app's kernels may read), named on the wire by
    that value. device: a client object per GPU of the session, made by the
    library's hand-written code and never destroyed, named on the wire by
    the GPU's index in the session; the server finds the library's handle
    with the lookup function (from the GPU's UUID text) at its first use in
    a session. destroy: the function that destroys one, also at session
    end; stream: the function that puts one on a stream (the server calls it
    before work when the handle's stream changed)."""

    def __init__(self, ctype, kind, struct, destroy, stream, index, line, lookup=None,
                 aliases=()):
        self.ctype = ctype
        self.aliases = tuple(aliases)
        self.kind = kind
        self.struct = struct
        self.destroy = destroy
        self.stream = stream
        self.index = index
        self.line = line
        self.lookup = lookup

    def client_object(self):
        """Whether the app holds a client object of this type."""
        return self.kind in ("object", "device")


def parse_handle_line(rest, where, spec_error, index, line):
    words = rest.split()
    aliases = []
    if "alias" in words:
        at = words.index("alias")
        words, aliases = words[:at], words[at + 1:]
        if not aliases:
            raise spec_error("%s: 'alias' names one C type or more" % where)
    made = parse_handle_words(words, where, spec_error, index, line)
    made.aliases = tuple(aliases)
    return made


def parse_handle_words(words, where, spec_error, index, line):
    if len(words) < 2 or words[1] not in ("object", "value", "address", "device"):
        raise spec_error("%s: 'handle <type> object <struct> destroy <fn> [stream <fn>]', "
                         "'handle <type> value destroy <fn> [stream <fn>]', "
                         "'handle <type> address destroy <fn>' or "
                         "'handle <type> device <struct> lookup <fn>'" % where)
    ctype, kind = words[0], words[1]
    if kind == "device":
        if len(words) != 5 or words[3] != "lookup":
            raise spec_error("%s: 'handle <type> device <struct> lookup <fn>'" % where)
        return handle_type(ctype, kind, words[2], None, None, index, line, lookup=words[4])
    rest_words = words[2:]
    struct = None
    if kind == "object":
        if not rest_words:
            raise spec_error("%s: an object handle names its client struct" % where)
        struct = rest_words.pop(0)
    keys = dict(zip(rest_words[0::2], rest_words[1::2]))
    if len(rest_words) % 2 != 0 or set(keys) - {"destroy", "stream"} or "destroy" not in keys:
        raise spec_error("%s: after the kind: 'destroy <fn>' and, for objects and values, "
                         "'stream <fn>'" % where)
    if kind == "address" and "stream" in keys:
        raise spec_error("%s: an address handle has no stream function" % where)
    return handle_type(ctype, kind, struct, keys["destroy"], keys.get("stream"), index, line)


class generated_calls:
    """How a library's generated entries are marshalled (LibraryCall ops)."""

    def __init__(self, status, library, invalid, not_initialized, not_supported,
                 client_header, client_namespace, api_class, api_header, server_function,
                 handle=None, success=None, statuses=None, display=None, manual_server=None,
                 alloc_failed=None, internal=None, client_traits=None, legacy_header=None,
                 precondition=None, expression_words=(), client_api=None):
        # The C type of the legacy handle every generated entry takes first
        # (cuBLAS: ns::state_of, ns::library_call, env.handle(id)); None for
        # libraries whose handle types the spec declares.
        self.handle = handle
        # The return type of every generated entry and its values.
        self.status = status
        self.success = success
        self.invalid = invalid
        self.not_initialized = not_initialized
        self.not_supported = not_supported
        self.alloc_failed = alloc_failed
        self.internal = internal
        # Every status value with the CUresult a failure becomes on the
        # server (OpResult.status: the CUDA error an async call defers), in
        # the header's order; legacy libraries write that by hand.
        self.statuses = statuses or []
        # proto::LibraryCall::Library value; the name in messages.
        self.library = library
        self.display = display
        # The client's pieces: the header with the handle structs and the
        # library's traits (interpose/library_call.hpp), their namespace and
        # the traits object.
        self.client_header = client_header
        self.client_namespace = client_namespace
        self.client_traits = client_traits
        # The server's loaded vendor library (members named as the
        # functions), the generated dispatcher's name and the hand-written
        # one of the manual entries with ids (None: none).
        self.api_class = api_class
        self.api_header = api_header
        self.server_function = server_function
        self.manual_server = manual_server
        # Declares what the stubs of forwarding (legacy API) entries call
        # (cuBLAS: interpose/blas/legacy.hpp); None: the library has none.
        self.legacy_header = legacy_header
        # A C++ expression of the library's status that every generated stub
        # checks first, returning it when it is not success (NVML: the
        # library is initialized); None: no such check.
        self.precondition = precondition
        # Helpers the spec's extents and checks may call besides
        # wire/library_args.hpp's, and what 'api' names in a client stub
        # (on the server it is the loaded library); None: no 'api'.
        self.expression_words = tuple(expression_words)
        self.client_api = client_api

    def legacy(self):
        return self.handle is not None


# --- spec checks -------------------------------------------------------------

def parse_note(decl, name, note, where, spec_error, make_param):
    """The generated-call annotation of a parameter, or None for others."""
    words = note.split()
    if words == ["optional"]:
        p = make_param(decl, name, None, None, None)
        p.optional = True
        return p
    if words in (["destroys"], ["stream"]):
        return make_param(decl, name, None, None, words[0])
    if len(words) < 2 or words[1] not in POINTER_KINDS:
        return None
    direction, kind = words[0], words[1]
    length = note.split(None, 2)[2].strip() if len(words) > 2 else None
    if kind in ("dev_or_host", "handle") and direction != "out":
        raise spec_error("%s: '%s' is an output: 'out %s ...'" % (where, decl, kind))
    if kind in ("dev", "devarray", "host", "opthost", "scratch", "dev_or_host") and length is None:
        raise spec_error("%s: '%s' needs the extent: '%s %s <elements>'"
                         % (where, decl, direction, kind))
    if kind == "devarray" and length.count(";") != 1:
        raise spec_error("%s: '%s': devarray takes '<count>; <elements of each>'"
                         % (where, decl))
    p = make_param(decl, name, direction, length, kind)
    if kind == "handle":
        if length not in (None, "host"):
            raise spec_error("%s: 'out handle' takes only 'host' after it, not '%s'"
                             % (where, length))
        p.host_handle = length == "host"
        p.length = None
    return p


def handle_of_type(handles, ctype):
    if ctype is not None and ctype.startswith("const ") and "*" not in ctype:
        # A by-value handle declared const ('const cusparseMatDescr_t').
        ctype = ctype[len("const "):]
    for h in handles:
        if h.ctype == ctype or ctype in h.aliases:
            return h
    return None


def validate_generated(fn, where, lib, handles, spec_error):
    """What the generator needs of a generated entry."""
    g = lib.generated
    if g is None:
        raise spec_error("%s: the %s surface has no generated calls" % (where, lib.name))
    if fn.forward is not None:
        # A legacy entry: the function it forwards to is checked by parse().
        if g.legacy_header is None:
            raise spec_error("%s: the %s surface has no legacy API to forward" % (where, lib.name))
        if fn.id is not None or fn.checks:
            raise spec_error("%s: a forwarding entry has no id or checks of its own" % where)
        return
    if fn.form is not None:
        raise spec_error("%s: 'class generated' takes no form word (got '%s')"
                         % (where, fn.form))
    if fn.id is None:
        raise spec_error("%s: a generated entry needs its pinned 'id'" % where)
    if fn.returns != g.status:
        raise spec_error("%s: a generated entry returns %s" % (where, g.status))
    if g.legacy():
        if not fn.params or fn.params[0].ctype() != g.handle:
            raise spec_error("%s: the first parameter of a generated entry is the %s"
                             % (where, g.handle))
    for p in fn.params:
        if p.kind == "scalar" and not g.legacy():
            raise spec_error("%s: %s: 'scalar' belongs to cuBLAS (pointer mode); use 'host' "
                             "or 'dev'" % (where, p.name))
        if p.kind in ("dev_or_host", "opthost", "scratch", "handle", "destroys", "stream") and g.legacy():
            raise spec_error("%s: %s: '%s' needs the library's handle types in its spec"
                             % (where, p.name, p.kind))
    # By-value parameters of a declared handle type are handles.
    for p in fn.params:
        pointer = "*" in p.decl or "[" in p.decl
        declared = handle_of_type(handles, p.ctype())
        if p.kind is None and not pointer and declared is not None:
            p.kind = "handle_value"
        if p.kind in ("handle_value", "destroys"):
            if declared is None:
                raise spec_error("%s: %s is no handle type of the spec's 'handle' lines"
                                 % (where, p.ctype()))
            p.handle = declared
        if p.kind == "destroys" and declared.kind == "device":
            raise spec_error("%s: the app never destroys a %s (a GPU of the session)"
                             % (where, declared.ctype))
        if p.kind == "destroys" and declared.destroy != fn.name:
            raise spec_error("%s: %s destroys a %s, whose 'handle' line names %s as its "
                             "destroy function" % (where, fn.name, declared.ctype,
                                                    declared.destroy))
        if p.kind == "stream" and p.ctype() != "cudaStream_t":
            raise spec_error("%s: '| stream' marks a cudaStream_t, not %s" % (where, p.ctype()))
        if p.kind is None and p.ctype() == "cudaStream_t":
            raise spec_error("%s: %s: a stream of a generated entry is marked '| stream'"
                             % (where, p.name))
        if pointer and p.kind is None:
            raise spec_error("%s: pointer parameter %s of a generated entry needs "
                             "'<dir> dev <extent>', '<dir> scalar [<count>]', 'out host "
                             "<extent>', 'out dev_or_host <extent>' or 'out handle'"
                             % (where, p.name))
        if p.kind == "handle":
            target = p.ctype()[:-1].strip() if p.ctype().endswith("*") else None
            declared = handle_of_type(handles, target)
            if declared is None or p.ctype().count("*") != 1:
                raise spec_error("%s: 'out handle' %s points to no handle type of the spec's "
                                 "'handle' lines" % (where, p.name))
            if declared.kind == "device":
                raise spec_error("%s: the library's own code makes the %s handles"
                                 % (where, declared.ctype))
            if p.host_handle and declared.kind != "object":
                raise spec_error("%s: only object handles can be host handles" % where)
            p.handle = declared
        elif p.kind in POINTER_KINDS:
            stars = 2 if p.kind == "devarray" else 1
            # A host output may hold pointers (cusparseCsrGet's void **), and
            # a host array of addresses (cuDNN's weight and dropout state
            # addresses): 'void **' takes 'host' and 'opthost'.
            if (p.kind == "host" and p.ctype().count("*") == 2 and p.direction == "out") \
                    or (p.kind in ("host", "opthost") and p.ctype().replace(" ", "") == "void**"):
                stars = 2
            if p.ctype().count("*") != stars or "[" in p.decl:
                raise spec_error("%s: %s: %s takes a %s pointer" % (
                    where, p.name, p.kind, "double" if stars == 2 else "single"))
        if p.kind == "scalar" and p.pointee() == "void" and p.length is None:
            raise spec_error("%s: void scalar %s needs its size in bytes" % (where, p.name))
        # 'const void **' is a pointer to a writable pointer: only the
        # outermost pointee's const forbids writing.
        if p.kind in POINTER_KINDS and p.direction != "in" and p.ctype().startswith("const") \
                and p.ctype().count("*") == 1:
            raise spec_error("%s: %s is const but annotated %s" % (where, p.name, p.direction))
    for p in fn.params:
        if p.optional and p.kind != "handle_value":
            raise spec_error("%s: '| optional' marks a by-value handle, not %s" % (where, p.name))
    by_name = {p.name: p for p in fn.params}
    for handle, field, value in fn.remember:
        h = by_name.get(handle)
        if h is None or h.kind not in ("handle_value", "handle") or h.handle.kind != "object" \
                or h.optional:
            raise spec_error("%s: remember: %s is no required object handle of the entry"
                             % (where, handle))
        if value not in by_name:
            raise spec_error("%s: remember: %s is no parameter" % (where, value))
    values = [p for p in fn.params if p.kind in ("handle_value", "destroys")]
    if any(p.kind == "dev_or_host" for p in fn.params) and \
            not any(p.handle.kind == "object" for p in values):
        raise spec_error("%s: 'dev_or_host' follows the entry's object handle; %s has none"
                         % (where, fn.name))
    addresses = [p for p in fn.params if p.kind == "handle" and p.handle.kind == "address"]
    if addresses and len(host_outputs(fn)) != 1:
        raise spec_error("%s: an entry that creates an address handle has no other host "
                         "output" % where)
    # Without host outputs a call may still wait for its status ('call
    # sync'): one the app acts on at once; 'async <condition>' lets such a
    # call (or one that only creates an object handle) go without waiting
    # when the condition holds at the call.
    if fn.async_when is not None:
        made = [p for p in fn.params if p.kind == "handle"]
        if fn.call != "sync" or any(p.handle.kind != "object" for p in made) \
                or len(host_outputs(fn)) != len(made):
            raise spec_error("%s: 'async <condition>' belongs to a 'call sync' entry whose only "
                             "host output is a new object handle" % where)
    extents = [p.length for p in fn.params if p.kind == "dev" and p.length is not None]
    for extent in extents:
        for m in re.finditer(r"\bnote\(\s*(\w+)\s*\)", extent):
            p = by_name.get(m.group(1))
            if p is None or p.kind not in ("handle_value", "destroys") \
                    or p.handle.kind != "object":
                raise spec_error("%s: a device extent's note(%s) names no object handle "
                                 "parameter" % (where, m.group(1)))
    for condition in fn.verify:
        for m in re.finditer(r"\bnote\(\s*(\w+)\s*\)", condition):
            p = by_name.get(m.group(1))
            if p is None or p.kind not in ("handle_value", "destroys") \
                    or p.handle.kind != "object":
                raise spec_error("%s: verify: note(%s) names no object handle parameter"
                                 % (where, m.group(1)))
    if host_outputs(fn) and fn.call != "sync":
        raise spec_error("%s: a generated entry with host outputs: 'call sync'" % where)
    if fn.call not in ("sync", "async"):
        raise spec_error("%s: a generated entry is 'call sync' or 'call async'" % where)


def host_outputs(fn):
    """Parameters whose values always come back to the app's host memory."""
    return [p for p in fn.params
            if (p.kind in ("scalar", "host", "opthost") and p.direction != "in")
            or p.kind == "handle"]


def host_order(fn):
    """fn's parameters with those whose extent names a host input after
    it: the server sizes a host array by another (CTC loss's labels by the
    label lengths) once that one arrived whole."""
    inputs = {p.name for p in fn.params
              if p.kind in ("host", "opthost", "scalar") and p.direction != "out"}

    def names_input(p):
        return p.length is not None and any(
            n != p.name and re.search(r"\b%s\b" % n, p.length) for n in inputs)
    return ([p for p in fn.params if not names_input(p)]
            + [p for p in fn.params if names_input(p)])


def byte_count(p):
    """The C++ expression of p's extent in bytes."""
    count = p.length if p.length is not None else "1"
    if count.strip() == "0":
        # Also for pointers to an incomplete type (cudnnRuntimeTag_t).
        return "uint64_t{0}"
    if p.pointee() == "void":
        return "(%s)" % count
    return "mul(%s, sizeof(%s))" % (count, p.pointee())


def has_ids(functions):
    """Entries that travel as LibraryCall ops: generated ones and manual ones
    with an id (their server side is hand-written)."""
    return [f for f in functions if f.id is not None]


# --- client ------------------------------------------------------------------

def legacy_client_stub(fn, lib):
    g = lib.generated
    ns = g.client_namespace
    args = ", ".join(p.decl for p in fn.params)
    out = ["GLEAM_INTERPOSE_EXPORT %s %s(%s) {\n" % (fn.returns, fn.name, args),
           "  return %s::guarded([&]() -> %s {\n" % (ns, g.status),
           "    auto* state_ = %s::state_of(%s);\n" % (ns, fn.params[0].name),
           "    if (state_ == nullptr)\n",
           "      return %s;\n" % g.not_initialized]
    out += checks(fn, g, "    ")
    out.append('    %s::library_call call_(%d, "%s", *state_);\n' % (ns, fn.id, fn.name))
    for p in fn.params[1:]:
        if p.kind in ("dev", "devarray"):
            out.append("    call_.device(%s);\n" % p.name)
        elif p.kind in ("scalar", "host"):
            out.append("    if (auto st_ = call_.%s_%s(%s, %s); st_ != %s)\n"
                       "      return st_;\n"
                       % (p.kind, p.direction, p.name, byte_count(p), g.success))
        else:
            out.append("    call_.value(%s);\n" % p.name)
    out.append("    return call_.finish();\n  });\n}\n")
    return "".join(out)


def checks(fn, g, indent):
    """The entry's checks: those without a status grouped (the library's
    invalid status), then each with its own, in spec order."""
    out = []
    plain = [c for c, st in fn.checks if st is None]
    if plain:
        out.append("%sif (%s)\n" % (indent, ("\n%s    || " % indent).join(
            "!(%s)" % c for c in plain)))
        out.append("%s  return %s;\n" % (indent, g.invalid))
    for c, st in fn.checks:
        if st is not None:
            out.append("%sif (!(%s))\n%s  return %s;\n" % (indent, c, indent, st))
    return out


def release_handle(p, expr, traits):
    """The statement that ends the client's handle `expr` of parameter p."""
    if p.handle.kind == "value":
        return "gleam::interpose::release_value_handle(%s, %d, %s)" % (
            traits, p.handle.index, expr)
    # Typed as the client struct: some handle types are void * to the app
    # (cudnnBackendDescriptor_t), some point to const (an alias such as
    # cusparseConstSpMatDescr_t).
    if p.ctype() in p.handle.aliases or p.ctype().rstrip("*").strip() in p.handle.aliases:
        return ("gleam::interpose::release_library_handle(const_cast<%s*>("
                "static_cast<const %s*>(%s)))" % (p.handle.struct, p.handle.struct, expr))
    return "gleam::interpose::release_library_handle(static_cast<%s*>(%s))" % (
        p.handle.struct, expr)


def client_stub(fn, lib):
    g = lib.generated
    if g.legacy():
        return legacy_client_stub(fn, lib)
    traits = g.client_traits
    args = ", ".join(p.decl for p in fn.params)
    out = ["GLEAM_INTERPOSE_EXPORT %s %s(%s) {\n" % (fn.returns, fn.name, args),
           "  return static_cast<%s>(gleam::interpose::library_guarded(%s, [&]() -> int {\n"
           % (g.status, traits)]
    if g.precondition is not None:
        out.append("    if (auto st_ = %s; st_ != %s)\n      return st_;\n"
                   % (g.precondition, g.success))
    if g.client_api is not None:
        out.append("    [[maybe_unused]] const auto& api = %s;\n" % g.client_api)
    owner = None
    # Handles first: a handle the app does not hold is NOT_INITIALIZED
    # before any other check, as the vendor's.
    for p in fn.params:
        if p.kind in ("handle_value", "destroys"):
            if p.handle.client_object():
                out.append("    auto* %s_ = gleam::interpose::library_handle_of(%s, %s, %d);\n"
                           % (p.name, p.name, traits, p.handle.index))
                if p.optional:
                    out.append("    if (%s != nullptr && %s_ == nullptr)\n      return %s;\n"
                               % (p.name, p.name, g.not_initialized))
                    continue
                out.append("    if (%s_ == nullptr)\n      return %s;\n"
                           % (p.name, g.not_initialized))
                if owner is None and p.handle.kind == "object":
                    owner = p
            elif p.handle.kind == "value":
                out.append("    if (!gleam::interpose::value_handle_live(%s, %d, %s))\n"
                           "      return %s;\n"
                           % (traits, p.handle.index, p.name, g.not_initialized))
            else:
                out.append("    if (%s == nullptr)\n      return %s;\n"
                           % (p.name, g.not_initialized))
        elif p.kind == "handle":
            # As the vendor's curandCreatePoissonDistribution: a null place
            # for the new handle is NOT_INITIALIZED.
            out.append("    if (%s == nullptr)\n      return %s;\n" % (p.name, g.not_initialized))
    out += checks(fn, g, "    ")
    out.append('    gleam::interpose::library_call call_(%s, %d, "%s");\n'
               % (traits, fn.id, fn.name))
    created = None
    for p in fn.params:
        if p.kind in ("handle_value", "destroys"):
            if p.handle.kind == "object" and p.optional:
                out.append("    if (%s_ != nullptr)\n      call_.handle(*%s_);\n"
                           "    else\n      call_.handle_id(0);\n" % (p.name, p.name))
            elif p.handle.client_object():
                out.append("    call_.handle(*%s_);\n" % p.name)
            elif p.handle.kind == "value":
                out.append("    call_.handle_id(static_cast<uint64_t>(%s));\n" % p.name)
            else:
                out.append("    call_.handle_id(reinterpret_cast<uintptr_t>(%s));\n" % p.name)
        elif p.kind == "handle":
            if p.handle.kind == "object":
                created = p
                out.append("    auto* %s_ = gleam::interpose::make_library_handle<%s>(%s, %d, "
                           "%s);\n" % (p.name, p.handle.struct, traits, p.handle.index,
                                       "true" if p.host_handle else "false"))
                out.append("    if (%s_ == nullptr)\n      return %s;\n"
                           % (p.name, g.alloc_failed))
                out.append("    call_.handle(%s_->state);\n" % p.name)
            elif p.handle.kind == "value":
                created = p
                out.append("    auto %s_ = gleam::interpose::make_value_handle(%s, %d);\n"
                           % (p.name, traits, p.handle.index))
                out.append("    if (%s_ == 0)\n      return %s;\n" % (p.name, g.alloc_failed))
                out.append("    call_.handle_id(static_cast<uint64_t>(%s_));\n" % p.name)
            else:
                out.append("    if (auto st_ = call_.host_output(%s, sizeof(*%s)); st_ != %s)\n"
                           "      return st_;\n" % (p.name, p.name, g.success))
        elif p.kind == "stream":
            out.append("    call_.stream(%s);\n" % p.name)
        elif p.kind in ("dev", "devarray"):
            out.append("    call_.device(%s);\n" % p.name)
        elif p.kind == "host":
            method = "host_output" if p.direction == "out" else "host_" + p.direction
            out.append("    if (auto st_ = call_.%s(%s, %s); st_ != %s)\n"
                       "      return st_;\n" % (method, p.name, byte_count(p), g.success))
        elif p.kind == "opthost":
            method = "host_output" if p.direction == "out" else "host_" + p.direction
            out.append("    call_.value(uint8_t{%s != nullptr ? uint8_t{1} : uint8_t{0}});\n"
                       % p.name)
            out.append("    if (%s != nullptr)\n"
                       "      if (auto st_ = call_.%s(%s, %s); st_ != %s)\n"
                       "        return st_;\n" % (p.name, method, p.name, byte_count(p), g.success))
        elif p.kind == "scratch":
            pass
        elif p.kind == "dev_or_host":
            out.append("    if (auto st_ = call_.output(%s, %s, %s_->host); st_ != %s)\n"
                       "      return st_;\n" % (p.name, byte_count(p), owner.name, g.success))
        else:
            out.append("    call_.value(%s);\n" % p.name)
    wait = "true" if any(p.kind == "handle" for p in fn.params) or fn.call == "sync" else "false"
    if fn.async_when is not None:
        wait = "!(%s)" % fn.async_when
    by_name = {p.name: p for p in fn.params}
    for handle, field, value in fn.remember:
        if by_name[handle].kind == "handle":
            # The object the call creates.
            out.append("    %s_->%s = %s;\n" % (handle, field, value))
        else:
            out.append("    reinterpret_cast<%s*>(%s)->%s = %s;\n"
                       % (by_name[handle].handle.struct, handle, field, value))
    if created is not None:
        out.append("    auto st_ = call_.finish(%s);\n" % wait)
        out.append("    if (st_ == %s)\n      *%s = %s_;\n    else\n      %s;\n"
                   % (g.success, created.name, created.name,
                      release_handle(created, "%s_" % created.name, traits)))
        out.append("    return st_;\n")
    else:
        destroyed = [p for p in fn.params
                     if p.kind == "destroys" and p.handle.kind in ("object", "value")]
        if destroyed:
            out.append("    auto st_ = call_.finish(%s);\n" % wait)
            for p in destroyed:
                out.append("    %s;\n" % release_handle(p, p.name, traits))
            out.append("    return st_;\n")
        else:
            out.append("    return call_.finish(%s);\n" % wait)
    out.append("  }));\n}\n")
    return "".join(out)


# --- legacy entries (cuBLAS's cublas.h) ------------------------------------

# Legacy character arguments ('N', 'U', 'L', ...) and the v2 enum each
# becomes (interpose/blas/legacy.hpp).
LEGACY_ENUMS = {"cublasOperation_t": "legacy_op", "cublasFillMode_t": "legacy_fill",
                "cublasSideMode_t": "legacy_side", "cublasDiagType_t": "legacy_diag"}


def forward_arguments(fn, target, lib):
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
            args.append("%s::%s(%s)" % (lib.generated.client_namespace, LEGACY_ENUMS[t], q.name))
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


def legacy_stub(fn, target, lib):
    """A legacy entry's stub: its v2 target on the process's implicit handle."""
    g = lib.generated
    args = ", ".join(p.decl for p in fn.params) or "void"
    forwarded = forward_arguments(fn, target, lib)
    ns = g.client_namespace
    call = "return %s(%s);" % (target.name, ", ".join(forwarded))
    # A character the legacy API does not know fails the call, as the
    # vendor's argument check does.
    converted = [a for a in forwarded if a.startswith(ns + "::legacy_")]
    if converted:
        call = ("if (%s)\n      return %s;\n    %s"
                % (" || ".join("static_cast<int>(%s) < 0" % a for a in converted),
                   g.invalid, call))
    if fn.returns == "void":
        body = ('  %s::legacy_run("%s", [&](%s h_) {\n    %s\n  });\n'
                % (ns, fn.name, g.handle, call))
    else:
        body = ('  return %s::legacy_value<%s>("%s", [&](%s h_, %s* r_) {\n'
                "    %s\n  });\n" % (ns, fn.returns, fn.name, g.handle, fn.returns, call))
    return "GLEAM_INTERPOSE_EXPORT %s %s(%s) {\n%s}\n" % (fn.returns, fn.name, args, body)


def client_file(functions, lib, banner):
    g = lib.generated
    generated = [f for f in functions if f.cls == "generated"]
    ns = g.client_namespace
    out = [banner,
           "// Client stubs of the generated %s functions: each checks what the\n"
           "// vendor checks at the call (the spec's 'check' lines), packs its\n"
           "// arguments (wire/library_args.hpp) into one LibraryCall op and sends it\n"
           "// (%s::library_call).\n\n"
           % (lib.name, ns if g.legacy() else "gleam::interpose"),
           '#include "interpose/%s"\n' % lib.export_header,
           '#include "%s"\n' % g.client_header]
    if not g.legacy():
        out.append('#include "interpose/library_call.hpp"\n')
    legacy = [f for f in generated if f.forward is not None]
    if legacy:
        out.append('#include "%s"\n' % g.legacy_header)
    out += ['#include "wire/library_args.hpp"\n\n',
            "using namespace gleam::wire::extents;\n\n",
            'extern "C" {\n\n']
    for fn in generated:
        if fn.forward is None:
            out.append(client_stub(fn, lib) + "\n")
    if legacy:
        out.append("// The legacy API (cublas.h): the process's implicit handle, errors\n"
                   "// kept for cublasGetError (interpose/blas/legacy.hpp).\n\n")
    by_name = {f.name: f for f in functions}
    for fn in legacy:
        out.append(legacy_stub(fn, by_name[fn.forward], lib) + "\n")
    out.append('} // extern "C"\n')
    return "".join(out)


# --- server ------------------------------------------------------------------

def value_type(p):
    """The type a by-value parameter travels as: its C type without a
    top-level const ('const long long int' -> 'long long int')."""
    t = p.ctype()
    if "*" not in t and t.startswith("const "):
        return t[len("const "):]
    return t


def from_table(h, expr):
    """The C++ expression of handle type h's library handle that the
    session's table keeps as void* `expr`."""
    if h.kind == "value":
        return "value_handle_of<%s>(%s)" % (h.ctype, expr)
    return "static_cast<%s>(%s)" % (h.ctype, expr)


def to_table(h, expr):
    """The void* the session's table keeps for library handle `expr`."""
    if h.kind == "value":
        return "value_handle_ptr(%s)" % expr
    return expr


def server_case(fn, lib):
    g = lib.generated
    out = ["    case %d: { // %s\n" % (fn.id, fn.name)]
    legacy = g.legacy()
    handle = fn.params[0] if legacy else None
    setter = [h for h in lib.handles if h.stream == fn.name]
    # Reads, in parameter order.
    for p in fn.params:
        if p is handle or p.kind in ("dev", "devarray", "handle_value", "destroys"):
            out.append("      auto %s_ = in.address();\n" % p.name)
        elif p.kind == "handle":
            if p.handle.kind in ("object", "value"):
                out.append("      auto %s_ = in.address();\n" % p.name)
        elif p.kind == "stream":
            out.append("      auto %s_ = in.address();\n" % p.name)
        elif p.kind == "scalar":
            out.append("      auto %s_ = env.scalar(in, %s);\n"
                       % (p.name, "false" if p.direction == "out" else "true"))
        elif p.kind == "dev_or_host":
            out.append("      auto %s_ = env.placement(in);\n" % p.name)
        elif p.kind == "scratch":
            pass
        elif p.kind == "host":
            if p.direction != "out":
                out.append("      auto %s_ = env.host(in, true);\n" % p.name)
        elif p.kind == "opthost":
            out.append("      bool %s_given_ = in.value<uint8_t>() != 0;\n" % p.name)
            if p.direction != "out":
                out.append("      auto %s_ = env.host(in, %s_given_);\n" % (p.name, p.name))
        else:
            out.append("      auto %s = in.value<%s>();\n" % (p.name, value_type(p)))
    out.append('      if (!in.done())\n        return env.malformed("%s"), true;\n' % fn.name)
    destroyed = [p for p in fn.params if p.kind == "destroys"]
    if destroyed:
        # The handle type's destroy function, now or once no capture is in
        # progress (the runner's table knows it).
        out.append('      env.destroy(%s_, %d, "%s");\n      return true;\n    }\n'
                   % (destroyed[0].name, destroyed[0].handle.index, fn.name))
        return "".join(out)
    out.append('      if (api.%s == nullptr)\n        return env.unavailable("%s"), true;\n'
               % (fn.name, fn.name))
    if legacy:
        out.append("      auto %s = static_cast<%s>(env.handle(%s_));\n"
                   % (handle.name, handle.ctype(), handle.name))
        out.append("      if (%s == nullptr)\n        return true;\n" % handle.name)
    for p in fn.params:
        if p.kind == "handle_value":
            purpose = "setting" if setter and p.handle in setter else "work"
            lookup = "env.library_handle(%s_, %d, handle_use::%s)" % (
                p.name, p.handle.index, purpose)
            if p.optional:
                out.append("      auto* %s_h_ = %s_ == 0 ? nullptr : %s;\n"
                           % (p.name, p.name, lookup))
                out.append("      if (%s_ != 0 && %s_h_ == nullptr)\n        return true;\n"
                           % (p.name, p.name))
            else:
                out.append("      auto* %s_h_ = %s;\n" % (p.name, lookup))
                out.append("      if (%s_h_ == nullptr)\n        return true;\n" % p.name)
            out.append("      auto %s = %s;\n" % (p.name, from_table(p.handle, "%s_h_" % p.name)))
    for p in fn.params:
        if p.kind == "stream":
            out.append("      auto %s = env.stream(%s_, %s);\n"
                       % (p.name, p.name, "false" if setter else "true"))
            out.append("      if (%s == nullptr)\n        return true;\n" % p.name)
    for p in fn.params:
        if p.kind == "handle" and p.handle.kind in ("object", "value"):
            out.append("      if (!env.fresh(%s_, %d))\n        return true;\n"
                       % (p.name, p.handle.index))
    # Device pointers typed as declared (extents may test one for null).
    for p in fn.params:
        if p.kind in ("dev", "devarray"):
            out.append("      auto %s = reinterpret_cast<%s>(static_cast<uintptr_t>(%s_));\n"
                       % (p.name, p.ctype(), p.name))
    for p in fn.params:
        if p.kind == "dev":
            out.append('      if (!env.device(%s_, %s, "%s"))\n        return true;\n'
                       % (p.name, server_condition(fn, host_values(fn, byte_count(p))), p.name))
    for p in fn.params:
        if p.kind == "devarray":
            count, each = p.array_parts()
            each_bytes = each if p.pointee() == "void" else "mul(%s, sizeof(%s))" % (
                each, p.pointee())
            out.append('      if (!env.device_array(%s_, %s, %s, "%s"))\n        return true;\n'
                       % (p.name, count, each_bytes, p.name))
    for condition in fn.verify:
        out.append("      if (!(%s))\n        return true;\n" % server_condition(fn, condition))
    for p in host_order(fn):
        if p.kind == "scalar":
            out.append('      auto* %s = env.scalar_%s(%s_, %s, "%s");\n'
                       '      if (%s == nullptr)\n        return true;\n'
                       % (p.name, p.direction, p.name,
                          byte_count(p), p.name, p.name))
        elif p.kind == "host" and p.direction == "out":
            out.append('      auto* %s = env.host_output(%s, "%s");\n'
                       '      if (%s == nullptr)\n        return true;\n'
                       % (p.name, byte_count(p), p.name, p.name))
        elif p.kind == "host":
            out.append('      auto* %s = env.host_%s(%s_, %s, "%s");\n'
                       '      if (%s == nullptr)\n        return true;\n'
                       % (p.name, p.direction, p.name, byte_count(p), p.name, p.name))
        elif p.kind == "opthost":
            if p.direction == "out":
                made = 'env.host_output(%s, "%s")' % (byte_count(p), p.name)
            else:
                made = 'env.host_%s(%s_, %s, "%s")' % (p.direction, p.name, byte_count(p), p.name)
            out.append("      void* %s = nullptr;\n" % p.name)
            out.append("      if (%s_given_) {\n        %s = %s;\n"
                       "        if (%s == nullptr)\n          return true;\n      }\n"
                       % (p.name, p.name, made, p.name))
        elif p.kind == "scratch":
            out.append('      auto* %s = env.host_scratch(%s, "%s");\n'
                       '      if (%s == nullptr)\n        return true;\n'
                       % (p.name, byte_count(p), p.name, p.name))
        elif p.kind == "dev_or_host":
            out.append("      void* %s = nullptr;\n" % p.name)
            out.append('      if (!env.output(%s_, %s, "%s", &%s))\n        return true;\n'
                       % (p.name, byte_count(p), p.name, p.name))
        elif p.kind == "handle":
            out.append("      %s %s_made{};\n" % (p.ctype()[:-1].strip(), p.name))
    call_args = []
    for p in fn.params:
        if p is handle or p.kind in ("handle_value", "stream"):
            call_args.append(p.name)
        elif p.kind in ("dev", "devarray"):
            call_args.append(p.name)
        elif p.kind in ("scalar", "host", "opthost", "scratch", "dev_or_host"):
            call_args.append("static_cast<%s>(%s)" % (p.ctype(), p.name))
        elif p.kind == "handle":
            call_args.append("&%s_made" % p.name)
        else:
            call_args.append(p.name)
    call = "api.%s(%s)" % (fn.name, ", ".join(call_args))
    created = [p for p in fn.params if p.kind == "handle"]
    if legacy:
        out.append('      env.report(%s, "%s");\n' % (call, fn.name))
    elif created:
        p = created[0]
        out.append("      auto st_ = %s;\n" % call)
        made = "%s_made" % p.name
        if p.ctype()[:-1].strip() in p.handle.aliases:
            # An alias pointing to const (cusparseConstSpMatDescr_t).
            made = "const_cast<void*>(static_cast<const void*>(%s))" % made
        if p.handle.kind in ("object", "value"):
            adopt = "env.adopt(%s_, %d, %s, %s)" % (
                p.name, p.handle.index, to_table(p.handle, made),
                "true" if p.host_handle else "false")
        else:
            adopt = "env.adopt_address(%d, %s_made)" % (p.handle.index, p.name)
        out.append("      if (st_ != %s || %s)\n" % (g.success, adopt))
        out.append('        env.report(st_, "%s");\n' % fn.name)
    elif setter:
        stream = [p for p in fn.params if p.kind == "stream"][0]
        owner = [p for p in fn.params if p.kind == "handle_value" and p.handle in setter][0]
        out.append("      auto st_ = %s;\n" % call)
        out.append("      if (st_ == %s)\n" % g.success)
        out.append("        env.stream_set(%s_, %d, %s_, %s);\n"
                   % (owner.name, owner.handle.index, stream.name, stream.name))
        out.append('      env.report(st_, "%s");\n' % fn.name)
    else:
        out.append('      env.report(%s, "%s");\n' % (call, fn.name))
    out.append("      return true;\n    }\n")
    return "".join(out)


def host_values(fn, expr):
    """A device extent on the server: '*<p>' of an in or inout host
    parameter p is the value the app passed (its bytes as they arrived:
    cusparseSpGEMM_workEstimation's *bufferSize1)."""
    for p in fn.params:
        if p.kind == "host" and p.direction in ("in", "inout"):
            expr = re.sub(r"\*\s*%s\b" % p.name,
                          "host_arg_value<%s>(%s_)" % (p.pointee(), p.name), expr)
    return expr


def server_condition(fn, condition):
    """A 'verify' condition as server code: 'note(<p>)' is the note slot of
    handle parameter p (library_handle_entry::note, by its wire id)."""
    by_name = {p.name: p for p in fn.params}

    def note(m):
        p = by_name[m.group(1)]
        return "env.handle_note(%s_, %d)" % (p.name, p.handle.index)
    return re.sub(r"\bnote\(\s*(\w+)\s*\)", note, condition)


def server_file(functions, lib, banner):
    g = lib.generated
    generated = [f for f in functions if f.cls == "generated" and f.forward is None]
    out = [banner,
           "// The server side of the generated %s functions: unpacks each call's\n"
           "// arguments (wire/library_args.hpp), checks every device address against\n"
           "// the session's allocations with the spec's extents, and calls the\n"
           "// vendor's function (executor/library_call.hpp).\n\n" % lib.name,
           '#include "executor/library_call.hpp"\n',
           '#include "%s"\n' % g.api_header]
    if not g.legacy():
        out.append('#include "executor/library_runner.hpp"\n')
    out += ['#include "wire/library_args.hpp"\n\n',
            "#include <cstdint>\n\n",
            "using namespace gleam::wire::extents;\n\n",
            "namespace gleam::executor {\n\n",
            "bool %s(%s& api, library_call_env& env, uint32_t function,\n"
            "%s wire::arg_reader& in) {\n" % (g.server_function, g.api_class,
                                               " " * (len(g.server_function) + 5)),
            "  switch (function) {\n"]
    for fn in generated:
        out.append(server_case(fn, lib))
    out.append("    default:\n      return false;\n  }\n}\n\n")
    if not g.legacy():
        out.append(descriptor(lib))
    out.append("} // namespace gleam::executor\n")
    return "".join(out)


def descriptor(lib):
    """The library_descriptor of a generic library (executor/library_runner.hpp)."""
    g = lib.generated
    api = g.api_class
    out = ["namespace {\n\n",
           "/// The spec's handle types, by index (its 'handle' lines in order).\n",
           "const library_handle_type handle_types[] = {\n"]
    for h in lib.handles:
        if h.kind == "device":
            # A GPU of the session: never destroyed, found by its UUID.
            lookup = ("[](void* api, const char* uuid, void** h) -> int32_t {\n"
                      "     auto& a = *static_cast<%s*>(api);\n"
                      "     if (a.%s == nullptr)\n       return %s;\n"
                      "     %s made = nullptr;\n"
                      "     auto st = static_cast<int32_t>(a.%s(uuid, &made));\n"
                      "     *h = made;\n     return st;\n   }"
                      % (api, h.lookup, g.not_supported, h.ctype, h.lookup))
            out.append('  {"%s", [](void*, void*) -> int32_t { return %s; }, nullptr,\n   %s},\n'
                       % (h.ctype, g.success, lookup))
            continue
        destroy = ("[](void* api, void* h) -> int32_t {\n"
                   "     auto& a = *static_cast<%s*>(api);\n"
                   "     return a.%s == nullptr ? %s\n"
                   "                         : static_cast<int32_t>(a.%s(%s));\n"
                   "   }" % (api, h.destroy, g.not_supported, h.destroy, from_table(h, "h")))
        if h.stream is not None:
            stream = ("[](void* api, void* h, CUstream s) -> int32_t {\n"
                      "     auto& a = *static_cast<%s*>(api);\n"
                      "     return a.%s == nullptr ? %s\n"
                      "                         : static_cast<int32_t>(a.%s(%s, s));\n"
                      "   }" % (api, h.stream, g.not_supported, h.stream, from_table(h, "h")))
        else:
            stream = "nullptr"
        out.append('  {"%s", %s,\n   %s},\n' % (h.ctype, destroy, stream))
    out.append("};\n\n")
    out.append("CUresult cu_of(int32_t status) {\n  switch (status) {\n")
    for name, cu in g.statuses:
        out.append("    case %s:\n      return %s;\n" % (name, cu))
    out.append("    default:\n      return CUDA_ERROR_UNKNOWN;\n  }\n}\n\n")
    out.append("const char* status_name(int32_t status) {\n  switch (status) {\n")
    for name, _ in g.statuses:
        out.append('    case %s:\n      return "%s";\n' % (name, name))
    out.append('    default:\n      return "unrecognized status";\n  }\n}\n\n')
    out.append("bool run(void* api, library_call_env& env, uint32_t function, "
               "wire::arg_reader& in) {\n")
    out.append("  auto& a = *static_cast<%s*>(api);\n" % api)
    if g.manual_server:
        out.append("  return %s(a, env, function, in) || %s(a, env, function, in);\n}\n\n"
                   % (g.server_function, g.manual_server))
    else:
        out.append("  return %s(a, env, function, in);\n}\n\n" % g.server_function)
    out.append("caf::expected<void*> shared() {\n"
               "  auto loaded = %s::shared();\n"
               "  if (!loaded)\n    return loaded.error();\n"
               "  return static_cast<void*>(*loaded);\n}\n\n" % api)
    out.append("} // namespace\n\n")
    # Declared extern first: a namespace-scope const has internal linkage.
    out.append("/// %s for the generic runner (executor/library_runner.cpp, find_library).\n"
               % g.display)
    out.append("extern const library_descriptor %s_library;\n" % lib.name)
    out.append("const library_descriptor %s_library = {\n" % lib.name)
    out.append("  proto::LibraryCall::%s,\n  \"%s\",\n  \"interpose/spec/%s.spec\",\n"
               % (g.library, g.display, lib.name))
    out.append("  {%s, %s, %s, %s, %s, %s},\n" % (g.success, g.not_initialized, g.invalid,
                                               g.not_supported, g.alloc_failed, g.internal))
    out.append("  cu_of,\n  status_name,\n  handle_types,\n  %d,\n  run,\n  shared,\n};\n\n"
               % len(lib.handles))
    return "".join(out)


def id_header(functions, lib, banner):
    out = [banner, "#pragma once\n\n#include <cstdint>\n\n",
           "/// The pinned ids of the %s functions that travel as LibraryCall ops (the\n"
           "/// spec's 'id' lines), as LibraryCall.function carries them.\n" % lib.name,
           "namespace gleam::generated::%s_ids {\n\n" % lib.name]
    out += ["inline constexpr uint32_t %s = %d;\n" % (f.name, f.id) for f in has_ids(functions)]
    out.append("\n} // namespace gleam::generated::%s_ids\n" % lib.name)
    return "".join(out)


def api_list(functions, banner, handles=()):
    """X(name) per function the server calls: those with ids, then the
    device handles' lookup functions."""
    names = [f.name for f in has_ids(functions)]
    names += [h.lookup for h in handles if h.lookup is not None and h.lookup not in names]
    return banner + "".join("X(%s)\n" % n for n in names)


EXPRESSION_CONSTANT = re.compile(r"^(CUBLAS|CUDA|CURAND|CUFFT|NVML|CUDNN|CUSPARSE|CUSOLVER)_\w+$")
