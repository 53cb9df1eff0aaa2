#!/bin/bash
# the jar: mvn -B -q package -pl flink-state-benchmarks -am -DskipTests at 7239033; one locked command (flock /tmp/heavy.lock run.sh)
cd /work/main/flink-state-benchmarks
for mb in 256 1024; do for mode in claim no_claim; do
java -Xmx3g --add-opens=java.base/java.util=ALL-UNNAMED --add-opens=java.base/java.lang=ALL-UNNAMED --add-opens=java.base/java.lang.reflect=ALL-UNNAMED --add-opens=java.base/java.io=ALL-UNNAMED --add-opens=java.base/java.nio=ALL-UNNAMED --add-opens=java.base/sun.nio.ch=ALL-UNNAMED --add-opens=java.base/java.net=ALL-UNNAMED --add-opens=java.base/java.util.concurrent=ALL-UNNAMED --add-opens=java.base/java.util.concurrent.atomic=ALL-UNNAMED --add-opens=java.base/java.time=ALL-UNNAMED --add-opens=java.base/java.text=ALL-UNNAMED --add-opens=java.base/java.math=ALL-UNNAMED  -Dlog4j.configurationFile=log4j2-demo.properties -cp target/benchmarks.jar io.github.flinkstate.benchmarks.scenario.RescaleScenario --backends disaggregated --state-mb $mb --transitions 2-1,8-2 --repeats 7 --claim-mode $mode --read-deadline-s 1 --json /tmp/flat/$mode-$mb.json > /tmp/flat/$mode-$mb.log 2>&1
done; done
