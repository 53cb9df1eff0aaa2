#!/bin/bash
cd /work/main/flink-state-benchmarks
for i in 1 2 3; do
  for j in before after; do
    java -Xmx3g --add-opens=java.base/java.util=ALL-UNNAMED --add-opens=java.base/java.lang=ALL-UNNAMED --add-opens=java.base/java.lang.reflect=ALL-UNNAMED --add-opens=java.base/java.io=ALL-UNNAMED --add-opens=java.base/java.nio=ALL-UNNAMED --add-opens=java.base/sun.nio.ch=ALL-UNNAMED --add-opens=java.base/java.net=ALL-UNNAMED --add-opens=java.base/java.util.concurrent=ALL-UNNAMED --add-opens=java.base/java.util.concurrent.atomic=ALL-UNNAMED --add-opens=java.base/java.time=ALL-UNNAMED --add-opens=java.base/java.text=ALL-UNNAMED --add-opens=java.base/java.math=ALL-UNNAMED  -Dprogress=1 -Dlog4j.configurationFile=log4j2-demo.properties -cp /tmp/bench-$j.jar io.github.flinkstate.benchmarks.scenario.RescaleScenario --backends disaggregated --state-mb 1024 --transitions 2-1,8-2 --repeats 1 --claim-mode claim --read-deadline-s 15 --json /tmp/pread/$j-$i.json > /tmp/pread/$j-$i.log 2>&1
  done
done
