package io.github.flinkstate.disagg.engine.key;

/**
 * One version of a key: its sequence number, {@link EntryType} and value (null for deletes).
 *
 * @param seq global sequence number; higher is newer
 * @param type {@link EntryType#PUT} or {@link EntryType#DELETE}
 * @param value the value of a put; never modified after creation
 */
public record Versioned(long seq, byte type, byte[] value) {}
