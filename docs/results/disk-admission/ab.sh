#!/bin/bash
# Alternates two benchmark jars running RemoteReadScenario (ours only), one invocation per jar per round:
#   ab.sh <out-dir> <rounds> <scenario-args> <tag-before> <tag-after>
# reads /tmp/bench-<tag>.jar, writes <out-dir>/<tag>-<round>.{json,log}; run alone on the machine.
out=$1; rounds=$2; args=$3; shift 3
opens="--add-opens=java.base/java.util=ALL-UNNAMED --add-opens=java.base/java.lang=ALL-UNNAMED --add-opens=java.base/java.lang.reflect=ALL-UNNAMED --add-opens=java.base/java.io=ALL-UNNAMED --add-opens=java.base/java.nio=ALL-UNNAMED --add-opens=java.base/sun.nio.ch=ALL-UNNAMED --add-opens=java.base/java.net=ALL-UNNAMED --add-opens=java.base/java.util.concurrent=ALL-UNNAMED --add-opens=java.base/java.util.concurrent.atomic=ALL-UNNAMED --add-opens=java.base/java.time=ALL-UNNAMED --add-opens=java.base/java.text=ALL-UNNAMED --add-opens=java.base/java.math=ALL-UNNAMED"
mkdir -p "$out"
for round in $(seq 1 "$rounds"); do
  for tag in "$@"; do
    flock /tmp/heavy.lock java -Xmx3g $opens -cp /tmp/bench-$tag.jar \
      io.github.flinkstate.benchmarks.scenario.RemoteReadScenario $args \
      --json "$out/$tag-$round.json" > "$out/$tag-$round.log" 2>&1
  done
done
