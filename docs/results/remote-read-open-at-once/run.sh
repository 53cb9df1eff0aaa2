#!/bin/bash
# The first get after a restore (RemoteReadScenario, ours only, budgets 10% and 100%, uniform keys),
# benchmark jars alternating, one round per invocation:
#   run.sh <out-dir> <tag>...   reads /tmp/bench-<tag>.jar, writes <out-dir>/<tag>-<i>.{json,out,log}
# Run from the repository root, alone on the machine.
here=$(cd "$(dirname "$0")" && pwd)
out=$1; shift
mkdir -p "$out"
OPENS=$(sed -n 's/.*<flink.jvm.opens>\(.*\)<\/flink.jvm.opens>.*/\1/p' pom.xml)
for i in 1 2 3; do
  for tag in "$@"; do
    flock /tmp/heavy.lock java -Xmx3g $OPENS \
      -Dlog4j.configurationFile="$here/log4j2-first-get.properties" \
      -cp /tmp/bench-$tag.jar io.github.flinkstate.benchmarks.scenario.RemoteReadScenario \
      --backends disaggregated --budgets 10,100 --keys uniform --rounds 1 \
      --json "$out/$tag-$i.json" > "$out/$tag-$i.out" 2>&1
    cp /tmp/first-get.log "$out/$tag-$i.log"
  done
done
