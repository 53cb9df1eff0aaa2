#!/bin/bash
# A/B of the memory part of the cache hint: bench-g.jar (fa211d4, before) against bench-m.jar (after:
# the commit that added this directory's parent, 16d0a13), alternating, one seed per pair, hint on;
# after-runs of Zipf 50% also run ForSt. Run alone on the machine in /tmp/rr (set up as in
# ../../remote-read-hint: the jars there, /tmp/opens.txt, log4j2-demo.properties), with the JSON
# written to memab/; then, from the repository root, python3 docs/results/remote-read-memory-hint/analyze.py <that dir>.
# The zipf-50-g-503 run of this directory is from a first invocation of the same script, stopped
# after it; forst.sh: four more rounds of ours against ForSt.
run() { v=$1; keys=$2; budget=$3; seed=$4; backends=$5
  java -Xmx3g $(cat /tmp/opens.txt) -Dlog4j.configurationFile=log4j2-demo.properties \
    -cp bench-$v.jar io.github.flinkstate.benchmarks.scenario.RemoteReadScenario \
    --backends $backends --budgets $budget --keys $keys --rounds 1 --seconds 30 \
    --local-cache-hint true --gets-before-checkpoint 600000 --seed $seed \
    --json memab/$keys-$budget-$v-$seed.json --out memab/$keys-$budget-$v-$seed.md \
    --chart memab/$keys-$budget-$v-$seed > memab/$keys-$budget-$v-$seed.log 2>&1; }
for seed in 501 502 503; do
  run g zipf 50 $seed disaggregated
  run m zipf 50 $seed disaggregated,forst
done
for seed in 501 502 503; do
  run g zipf 10 $seed disaggregated
  run m zipf 10 $seed disaggregated
done
for seed in 501 502; do
  run g uniform 50 $seed disaggregated
  run m uniform 50 $seed disaggregated
done
echo AB_DONE
