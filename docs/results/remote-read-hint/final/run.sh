#!/bin/bash
# The cache hint after the review fixes: ours with and without it, and ForSt, at 50%, uniform and
# Zipf keys, 2 rounds, 600,000 gets before the checkpoint. Run alone on the machine.
java -Xmx3g $(cat /tmp/opens.txt) -Dlog4j.configurationFile=log4j2-demo.properties \
  -cp hint/benchmarks-final.jar io.github.flinkstate.benchmarks.scenario.RemoteReadScenario \
  --backends disaggregated,forst --budgets 50 --keys uniform,zipf --rounds 2 --seconds 30 \
  --local-cache-hint true,false --gets-before-checkpoint 600000 --seed 111 \
  --json hint/final/runs.json --out hint/final/table.md --chart hint/final/remote-read-hint-final
