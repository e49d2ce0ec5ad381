#!/bin/sh
# The image's size and its memory at rest, as docs/containers.md reports them:
# starts a container with a throwaway token, waits until /readyz answers and
# then 10 s more with no client, and prints each process's RSS and PSS
# (from /proc/PID/smaps_rollup inside the container) and their sums.
#   docker/measure.sh [IMAGE]             (CONTAINER_ENGINE=docker for docker; default podman)
#   extra engine flags: MEASURE_RUN_FLAGS="--runtime runc ..." docker/measure.sh
set -eu
image=${1:-execmux}
engine=${CONTAINER_ENGINE:-podman}
port=${MEASURE_PORT:-17399}
name=execmux-measure-$$
# shellcheck disable=SC2086
$engine ${MEASURE_ENGINE_FLAGS:-} run --detach --name "$name" ${MEASURE_RUN_FLAGS:-} --publish "127.0.0.1:$port:7373" --env EXECMUX_TOKEN="measure-$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')" "$image" >/dev/null
trap '$engine ${MEASURE_ENGINE_FLAGS:-} rm --force "$name" >/dev/null 2>&1' EXIT
start=$(date +%s%N)
until curl -sf "http://127.0.0.1:$port/readyz" >/dev/null; do
  [ $(( ($(date +%s%N) - start) / 1000000000 )) -lt 60 ] || { echo "not ready after 60 s" >&2; exit 1; }
  sleep 0.1
done
ready_ms=$(( ($(date +%s%N) - start) / 1000000 ))
sleep 10
size=$($engine ${MEASURE_ENGINE_FLAGS:-} image inspect --format '{{.Size}}' "$image")
echo "image $image: $(( size / 1000000 )) MB ($size bytes)"
echo "run -> /readyz 200: $ready_ms ms"
echo "at rest, 10 s after ready, no client (kB):"
# shellcheck disable=SC2016
$engine ${MEASURE_ENGINE_FLAGS:-} exec "$name" sh -c '
  rss_total=0; pss_total=0; count=0
  for dir in /proc/[0-9]*; do
    [ "${dir#/proc/}" = "$$" ] && continue
    command=$(tr "\0" " " < "$dir/cmdline" 2>/dev/null) || continue
    [ -n "$command" ] || continue
    rss=$(awk "/^Rss:/ {print \$2}" "$dir/smaps_rollup" 2>/dev/null) || continue
    pss=$(awk "/^Pss:/ {print \$2}" "$dir/smaps_rollup" 2>/dev/null) || continue
    case "$command" in "sh -c "*) continue ;; esac
    printf "  %8s RSS %8s PSS  %s\n" "$rss" "$pss" "$(echo "$command" | cut -c1-80)"
    rss_total=$((rss_total + rss)); pss_total=$((pss_total + pss)); count=$((count + 1))
  done
  printf "  %8s RSS %8s PSS  total of %s processes\n" "$rss_total" "$pss_total" "$count"'
