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
# The first <nvidia wheel>/*/lib directory that has SONAME $1.
wheel_dir_of() {
  python3 -c 'import glob, os, sys, nvidia
hits = [h for r in nvidia.__path__ for h in sorted(glob.glob(os.path.join(r, "*", "lib", sys.argv[1])))]
print(os.path.dirname(hits[0]) if hits else "")' "$1" 2>/dev/null
}
for lib in CUBLAS:libcublas.so.13 CURAND:libcurand.so.10 CUFFT:libcufft.so.12 \
  CUSPARSE:libcusparse.so.12 CUSOLVER:libcusolver.so.12 CUDNN:libcudnn.so.9; do
  var=GLEAM_${lib%%:*}_DIR soname=${lib#*:}
  if [ -z "${!var:-}" ] && { [ ! -e "$cuda_lib/$soname" ] || [ "${lib%%:*}" = CUDNN ]; }; then
    dir=$(wheel_dir_of "$soname")
    [ -n "$dir" ] && export "$var=$dir"
  fi
  echo "vendor ${soname%%.so*} for the server: ${!var:-$cuda_lib}"
  if [ -n "${!var:-}" ]; then
    case ":$LOCAL_LIBS:" in
      *":${!var}:"*) ;;
      *) LOCAL_LIBS=$LOCAL_LIBS:${!var} ;;
    esac
  fi
done
# NVML comes with the driver, not with the toolkit or the wheels: the server
# finds libnvidia-ml.so.1 in the driver's directories (GLEAM_NVML_DIR first).
nvml_from="the driver's directories"
echo "vendor libnvidia-ml for the server: ${GLEAM_NVML_DIR:-$nvml_from}"
