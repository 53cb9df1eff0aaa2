#!/bin/bash
# The cache-hint measurement: ours with and without the hint, and ForSt, at 10% and 50%,
# uniform and Zipf keys, 3 rounds, 600,000 gets before the checkpoint. Run alone on the machine.
java -Xmx3g $(cat /tmp/opens.txt) -Dlog4j.configurationFile=log4j2-demo.properties \
  -cp hint/benchmarks-hint.jar io.github.flinkstate.benchmarks.scenario.RemoteReadScenario \
  --backends disaggregated,forst --budgets 10,50 --keys uniform,zipf --rounds 3 --seconds 30 \
  --local-cache-hint true,false --gets-before-checkpoint 600000 --seed 101 \
  --json hint/full/runs.json --out hint/full/table.md --chart hint/full/remote-read-hint
