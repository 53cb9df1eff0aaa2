#!/bin/bash
# A/B of used blocks outliving their slab: usage ab.sh KEYS AFTER BUDGETS; the runs in zipf/ and
# uniform/ are "ab.sh zipf f 10,50" and "ab.sh uniform f 50"; confirm/ is one pair (seed 304, by
# hand) of bench-a.jar against bench-g.jar, the final code. bench-a.jar is the code before
# (7f6efbf plus the per-bucket read counts), bench-f.jar the code after (e870d6f, with the first
# review's fixes). Alternating invocations, one seed per pair, hint on. Run alone on the machine, in
# /tmp/rr (set up as in ../remote-read-hint), then: python3 analyze.py <dirs with the JSON>.
keys=$1; after=$2; budgets=$3
for seed in 301 302 303; do
  for v in a $after; do
    java -Xmx3g $(cat /tmp/opens.txt) -Dlog4j.configurationFile=log4j2-demo.properties \
      -cp bench-$v.jar io.github.flinkstate.benchmarks.scenario.RemoteReadScenario \
      --backends disaggregated --budgets $budgets --keys $keys --rounds 1 --seconds 30 \
      --local-cache-hint true --gets-before-checkpoint 600000 --seed $seed \
      --json ab-$v-$seed.json --out ab-$v-$seed.md --chart ab-$v-$seed > ab-$v-$seed.log 2>&1
  done
done
echo AB_DONE
