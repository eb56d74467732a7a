# Sourced by the GPU-machine check scripts. For each vendor library the
# server loads at run time (never bundled), exports GLEAM_<LIB>_DIR to the
# directory of PyTorch's nvidia wheels that has it when the CUDA toolkit's
# lib64 does not, prints where each comes from, and sets LOCAL_LIBS, the
# LD_LIBRARY_PATH of local runs of our programs. cuDNN comes from the wheels
# first (where they have it): a local PyTorch run uses that copy, whose
# version PyTorch checks against the one it was built with, and a run
# through Gleam must run the same kernels to compare bit for bit.
cuda_lib=/usr/local/cuda/lib64
LOCAL_LIBS=$cuda_lib
for lib in CUBLAS:libcublas.so.13 CURAND:libcurand.so.10 CUDNN:libcudnn.so.9; do
  var=GLEAM_${lib%%:*}_DIR soname=${lib#*:}
  if [ -z "${!var:-}" ] && { [ ! -e "$cuda_lib/$soname" ] || [ "${lib%%:*}" = CUDNN ]; }; then
    dir=$(python3 - "$soname" <<'PY' 2>/dev/null
import glob, os, sys, nvidia
for root in nvidia.__path__:
    for hit in sorted(glob.glob(os.path.join(root, "*", "lib", sys.argv[1]))):
        print(os.path.dirname(hit)); sys.exit()
PY
)
    [ -n "$dir" ] && export "$var=$dir"
  fi
  echo "vendor ${soname%%.so*} for the server: ${!var:-$cuda_lib}"
  [ -n "${!var:-}" ] && case ":$LOCAL_LIBS:" in *":${!var}:"*) ;; *) LOCAL_LIBS=$LOCAL_LIBS:${!var} ;; esac
done
