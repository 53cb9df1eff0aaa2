#!/bin/bash
# A/B of used blocks outliving their slab: usage ab.sh KEYS AFTER, e.g. "ab.sh zipf d" and
# "ab.sh uniform e". bench-a.jar is the code before (7f6efbf plus the per-bucket read counts),
# bench-$AFTER.jar the code after ('d' for the Zipf runs, 'e', the final code, for the uniform
# ones; they differ only in where evicted slabs are deleted: under or outside the cache's lock).
# Alternating invocations, one seed per pair, 10% and 50%, hint on. Run alone on the machine, in
# /tmp/rr (set up as in ../remote-read-hint), then: python3 analyze.py <dir with the JSON>.
keys=$1; after=$2
for seed in 301 302 303; do
  for v in a $after; do
    java -Xmx3g $(cat /tmp/opens.txt) -Dlog4j.configurationFile=log4j2-demo.properties \
      -cp bench-$v.jar io.github.flinkstate.benchmarks.scenario.RemoteReadScenario \
      --backends disaggregated --budgets 10,50 --keys $keys --rounds 1 --seconds 30 \
      --local-cache-hint true --gets-before-checkpoint 600000 --seed $seed \
      --json ab-$v-$seed.json --out ab-$v-$seed.md --chart ab-$v-$seed > ab-$v-$seed.log 2>&1
  done
done
echo AB_DONE
