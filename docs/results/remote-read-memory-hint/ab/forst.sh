#!/bin/bash
# Ours (after) against ForSt, Zipf keys at 50%, 4 more rounds in one invocation (alternating).
java -Xmx3g $(cat /tmp/opens.txt) -Dlog4j.configurationFile=log4j2-demo.properties \
  -cp bench-m.jar io.github.flinkstate.benchmarks.scenario.RemoteReadScenario \
  --backends disaggregated,forst --budgets 50 --keys zipf --rounds 4 --seconds 30 \
  --local-cache-hint true --gets-before-checkpoint 600000 --seed 511 \
  --json memab/forst-rounds.json --out memab/forst-rounds.md --chart memab/forst-rounds > memab/forst-rounds.log 2>&1
echo FORST_DONE
