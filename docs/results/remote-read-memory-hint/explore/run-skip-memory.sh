#!/bin/bash
# usage: run.sh SEEDS...; for each seed: hint with memory blocks (as shipped), then without (tmp switch)
for seed in "$@"; do
  for v in with without; do
    extra=""; [ $v = without ] && extra="-Dtmp.hintSkipMemory=true"
    java -Xmx3g $(cat /tmp/opens.txt) $extra -Dlog4j.configurationFile=log4j2-demo.properties \
      -cp bench-h.jar io.github.flinkstate.benchmarks.scenario.RemoteReadScenario \
      --backends disaggregated --budgets 50 --keys zipf --rounds 1 --seconds 30 \
      --local-cache-hint true --gets-before-checkpoint 600000 --seed $seed \
      --json mem/$v-$seed.json --out mem/$v-$seed.md --chart mem/$v-$seed > mem/$v-$seed.log 2>&1
  done
done
echo MEM_DONE
