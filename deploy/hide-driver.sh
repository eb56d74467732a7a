# Sourced by the GPU-machine scripts (gpu-check.sh, torch-bench.sh,
# ingress-check.sh). Sets $hide: run first inside `unshare -m sh -c "$hide;
# ..."`, it bind-mounts /dev/null over every libcuda, libnvidia-ml (NVML) and
# /dev/nvidia* in that
# private mount namespace, so a client started there cannot reach the real
# GPU; GLEAM_CHECK_NO_DRIVER=1 then fails the client at exit if the real
# driver got loaded anyway.
# shellcheck disable=SC2016 # expanded by the inner sh, not here
hide='for f in $(ldconfig -p | awk "/libcuda\.so|libnvidia-ml\.so/{print \$NF}") /usr/local/nvidia/lib64/libcuda.so* /dev/nvidia*; do { [ -f "$f" ] || [ -c "$f" ]; } && mount --bind /dev/null "$f"; done'
