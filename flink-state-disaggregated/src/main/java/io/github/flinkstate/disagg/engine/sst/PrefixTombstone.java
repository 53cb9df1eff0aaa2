package io.github.flinkstate.disagg.engine.sst;

/**
 * A range delete of every key starting with {@code prefix} that was written before sequence number
 * {@code seq}. Prefixes are at least 2 bytes, so a tombstone never spans key groups.
 */
public record PrefixTombstone(byte[] prefix, long seq) {}
