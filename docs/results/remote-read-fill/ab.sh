#!/bin/bash
# A/B: our backend's warm-up before (whole files only) and after filling the room whole files leave
# with blocks, at a local cache budget of 50% of the state, ForSt at the same budget in the
# invocation of the new jar; alternating invocations, 3 rounds, seed per round.
cd /tmp/rr
OPENS=$(cat /tmp/opens.txt)
for r in 1 2 3; do
  for j in nofill fill; do
    be=disaggregated; [ $j = fill ] && be=disaggregated,forst
    java -Xmx3g $OPENS -Dlog4j.configurationFile=log4j2-demo.properties -cp /tmp/bench-$j.jar io.github.flinkstate.benchmarks.scenario.RemoteReadScenario --backends $be --budgets 50 --keys uniform,zipf --rounds 1 --seed $((80+r)) --json /tmp/rr/fill/$j-r$r.json --out /tmp/rr/fill/$j-r$r.md 2>&1 | grep "^round" | sed "s/^/$j r$r /"
  done
done
echo DONE
