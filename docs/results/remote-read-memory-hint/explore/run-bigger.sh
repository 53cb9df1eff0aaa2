#!/bin/bash
run() { name=$1; shift
  java -Xmx3g $(cat /tmp/opens.txt) "$@" -Dlog4j.configurationFile=log4j2-demo.properties \
    -cp bench-h.jar io.github.flinkstate.benchmarks.scenario.RemoteReadScenario \
    --backends disaggregated --budgets 50 --keys zipf --rounds 1 \
    --local-cache-hint true --seed 401 --seconds 30 --gets-before-checkpoint 600000 \
    --json mem/$name.json --out mem/$name.md --chart mem/$name > mem/$name.log 2>&1; }
run bigger30 -Dtmp.restoreBudgetBytes=98982912
echo RUN4_DONE
