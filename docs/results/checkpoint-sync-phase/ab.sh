#!/bin/bash
# Alternates benchmark jars running CheckpointDurationScenario, one invocation per jar per round:
#   ab.sh <out-dir> <rounds> "<scenario args>" <tag>:<backends> [<tag>:<backends> ...]
# e.g. ab.sh out 3 "--sizes-mb 100 --dfs-latency-ms 5 --dfs-bandwidth-mbps 100" \
#        syncflush:disaggregated async:disaggregated,rocksdb,forst
# reads /tmp/bench-<tag>.jar, writes <out-dir>/<tag>-<round>.{md,log}; run alone on the machine.
# The backends' order rotates by one per round (round 1: as given), so that no backend always runs
# first in its JVM.
out=$1; rounds=$2; args=$3; shift 3
opens="--add-opens=java.base/java.util=ALL-UNNAMED --add-opens=java.base/java.lang=ALL-UNNAMED --add-opens=java.base/java.lang.reflect=ALL-UNNAMED --add-opens=java.base/java.io=ALL-UNNAMED --add-opens=java.base/java.nio=ALL-UNNAMED --add-opens=java.base/sun.nio.ch=ALL-UNNAMED --add-opens=java.base/java.net=ALL-UNNAMED --add-opens=java.base/java.util.concurrent=ALL-UNNAMED --add-opens=java.base/java.util.concurrent.atomic=ALL-UNNAMED --add-opens=java.base/java.time=ALL-UNNAMED --add-opens=java.base/java.text=ALL-UNNAMED --add-opens=java.base/java.math=ALL-UNNAMED"
mkdir -p "$out"
for round in $(seq 1 "$rounds"); do
  for spec in "$@"; do
    tag=${spec%%:*}; IFS=, read -ra list <<< "${spec#*:}"
    k=$(( (round - 1) % ${#list[@]} )); rotated=("${list[@]:k}" "${list[@]:0:k}")
    backends=$(IFS=,; echo "${rotated[*]}")
    flock /tmp/heavy.lock timeout 1200 java -Xmx3g $opens -cp /tmp/bench-$tag.jar \
      io.github.flinkstate.benchmarks.scenario.CheckpointDurationScenario $args \
      --backends "$backends" --out "$out/$tag-$round.md" > "$out/$tag-$round.log" 2>&1
  done
done
