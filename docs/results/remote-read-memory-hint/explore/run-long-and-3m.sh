#!/bin/bash
# (a) 90 s after the restore; (b) 3M gets before the checkpoint; current code (bench-h.jar, switch off)
run() { name=$1; shift
  java -Xmx3g $(cat /tmp/opens.txt) -Dlog4j.configurationFile=log4j2-demo.properties \
    -cp bench-h.jar io.github.flinkstate.benchmarks.scenario.RemoteReadScenario \
    --backends disaggregated --budgets 50 --keys zipf --rounds 1 \
    --local-cache-hint true --seed 401 "$@" \
    --json mem/$name.json --out mem/$name.md --chart mem/$name > mem/$name.log 2>&1; }
run long90 --seconds 90 --gets-before-checkpoint 600000
run before3m --seconds 30 --gets-before-checkpoint 3000000
echo RUN2_DONE
