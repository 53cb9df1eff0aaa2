import io.github.flinkstate.benchmarks.jmh.*;
import org.apache.flink.api.common.state.*;
import org.apache.flink.api.common.typeutils.base.LongSerializer;
import org.apache.flink.runtime.state.CheckpointableKeyedStateBackend;

public class ColdPut {
  public static void main(String[] a) throws Exception {
    try (KeyedBackendFixture f = KeyedBackendFixture.open(BenchmarkBackend.ROCKSDB, 1000)) {
      CheckpointableKeyedStateBackend<Long> b = f.backend();
      ValueState<Long> s = f.state(new ValueStateDescriptor<>("v", LongSerializer.INSTANCE));
      Long[] keys = new Long[1000];
      for (int k = 0; k < 1000; k++) { keys[k] = (long) k; b.setCurrentKey(keys[k]); s.update(0L); }
      int n = 2_000_000;
      for (int round = 0; round < 6; round++) {
        for (int mode = 0; mode < 3; mode++) {
          long t0 = System.nanoTime();
          long sum = 0;
          for (int x = 0; x < n; x++) {
            int k = (x % 500) + 500 * ((x / 1000) % 2);
            b.setCurrentKey(keys[k]);
            Long v = s.value();
            sum += v;
            if (mode == 1) b.setCurrentKey(keys[(k + 500) % 1000]);
            if (mode == 2) b.setCurrentKey(keys[k]);
            s.update(v + 1);
          }
          long t1 = System.nanoTime();
          System.out.printf("round %d mode %s: %.0f ns per get+put%n", round, mode == 0 ? "same-key" : mode == 1 ? "other-key" : "same-key-reset", (t1 - t0) / (double) n);
        }
      }
    }
  }
}
