"""NVML as an app sees it: the GPU count, each GPU's name and total memory
on stdout (stable: a run through Gleam must print the same as a local run),
memory used, utilization and temperature on stderr (they change from run to
run). Uses pynvml when installed, else the same calls through ctypes.

  python3 nvml_query.py
"""
import ctypes
import sys


def with_pynvml():
    import pynvml
    pynvml.nvmlInit()
    try:
        count = pynvml.nvmlDeviceGetCount()
        print("count", count)
        for i in range(count):
            h = pynvml.nvmlDeviceGetHandleByIndex(i)
            name = pynvml.nvmlDeviceGetName(h)
            if isinstance(name, bytes):
                name = name.decode()
            mem = pynvml.nvmlDeviceGetMemoryInfo(h)
            print("gpu", i, "name", name)
            print("gpu", i, "total_memory", mem.total)
            util = pynvml.nvmlDeviceGetUtilizationRates(h)
            temp = pynvml.nvmlDeviceGetTemperature(h, pynvml.NVML_TEMPERATURE_GPU)
            print("gpu", i, "used_memory", mem.used, "utilization", util.gpu,
                  "temperature", temp, file=sys.stderr)
    finally:
        pynvml.nvmlShutdown()


class Memory(ctypes.Structure):
    _fields_ = [("total", ctypes.c_ulonglong), ("free", ctypes.c_ulonglong),
                ("used", ctypes.c_ulonglong)]


class Utilization(ctypes.Structure):
    _fields_ = [("gpu", ctypes.c_uint), ("memory", ctypes.c_uint)]


def with_ctypes():
    lib = ctypes.CDLL("libnvidia-ml.so.1")

    def check(rc, what):
        if rc != 0:
            lib.nvmlErrorString.restype = ctypes.c_char_p
            raise SystemExit("%s: %s" % (what, lib.nvmlErrorString(rc).decode()))

    check(lib.nvmlInit_v2(), "nvmlInit_v2")
    count = ctypes.c_uint()
    check(lib.nvmlDeviceGetCount_v2(ctypes.byref(count)), "nvmlDeviceGetCount_v2")
    print("count", count.value)
    for i in range(count.value):
        h = ctypes.c_void_p()
        check(lib.nvmlDeviceGetHandleByIndex_v2(i, ctypes.byref(h)), "GetHandleByIndex")
        name = ctypes.create_string_buffer(96)
        check(lib.nvmlDeviceGetName(h, name, 96), "nvmlDeviceGetName")
        mem = Memory()
        check(lib.nvmlDeviceGetMemoryInfo(h, ctypes.byref(mem)), "nvmlDeviceGetMemoryInfo")
        print("gpu", i, "name", name.value.decode())
        print("gpu", i, "total_memory", mem.total)
        util = Utilization()
        check(lib.nvmlDeviceGetUtilizationRates(h, ctypes.byref(util)), "GetUtilizationRates")
        temp = ctypes.c_uint()
        check(lib.nvmlDeviceGetTemperature(h, 0, ctypes.byref(temp)), "GetTemperature")
        print("gpu", i, "used_memory", mem.used, "utilization", util.gpu,
              "temperature", temp.value, file=sys.stderr)
    check(lib.nvmlShutdown(), "nvmlShutdown")


if __name__ == "__main__":
    try:
        import pynvml  # noqa: F401
        with_pynvml()
    except ImportError:
        with_ctypes()
    print("done")
