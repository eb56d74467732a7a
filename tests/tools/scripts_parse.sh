#!/usr/bin/env bash
# Every shell script of the repository parses: the GPU-machine scripts run
# only there, so a syntax error would otherwise surface first on the device,
# after its time is spent.
set -u
root=${1:?usage: scripts_parse.sh <source dir>}
status=0
while IFS= read -r script; do
  if ! bash -n "$script"; then
    echo "does not parse: $script"
    status=1
  fi
done < <(find "$root/deploy" "$root/.ci" "$root/tests" -type f \( -name '*.sh' -o -path "$root/.ci/run" \))
exit $status
