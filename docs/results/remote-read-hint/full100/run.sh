#!/bin/bash
# The cache hint at a budget of the whole state (every file fits whole): ours with and without
# it, and ForSt, Zipf keys, 2 rounds, 600,000 gets before the checkpoint. Run alone.
java -Xmx3g $(cat /tmp/opens.txt) -Dlog4j.configurationFile=log4j2-demo.properties \
  -cp hint/benchmarks-full.jar io.github.flinkstate.benchmarks.scenario.RemoteReadScenario \
  --backends disaggregated,forst --budgets 100 --keys zipf --rounds 2 --seconds 30 \
  --local-cache-hint true,false --gets-before-checkpoint 600000 --seed 121 \
  --json hint/full100/runs.json --out hint/full100/table.md --chart hint/full100/remote-read-hint-100
