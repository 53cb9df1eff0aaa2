#!/bin/bash
cd /work/main/flink-state-benchmarks
OPENS=$(sed -n 's:.*<flink.jvm.opens>\(.*\)</flink.jvm.opens>.*:\1:p' ../pom.xml | head -1)
for i in 1 2 3 4 5; do
  java -Xmx3g $OPENS -Dlog4j.configurationFile=log4j2-demo.properties -cp /tmp/bench-cl.jar \
    io.github.flinkstate.benchmarks.scenario.ChangelogScenario --workload value --records 5000000 \
    --configs filesystem,dfs-batched --materialize-interval 1h --tail-fraction 0.05 \
    --json /tmp/cl5/run-$i.json > /tmp/cl5/run-$i.log 2>&1
done
echo ALLDONE
