package io.github.flinkstate.cluster.job;

import org.apache.flink.api.java.functions.KeySelector;

/** {@code record % keys}, the key of {@link JobInput}. */
final class RecordKey implements KeySelector<Long, Long> {

    private final int keys;

    RecordKey(int keys) {
        this.keys = keys;
    }

    @Override
    public Long getKey(Long record) {
        return record % keys;
    }
}
