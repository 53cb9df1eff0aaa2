package io.github.flinkstate.lru.snapshot;

/**
 * Constants of the cache snapshot stream, format version 2 (version 1, without append records, is
 * still read). The layout is specified in {@code docs/format/lru-cache-snapshot.md}; every number
 * here is persisted and must never change meaning. A new layout gets a new {@link #VERSION}.
 *
 * <pre>
 * stream  := header proxy blockCount:int32 block*
 * header  := MAGIC:int32 VERSION:int8 delegateKind:int8 [keyGroupOffsets if KEY_GROUPS]
 * keyGroupOffsets := first:int32 last:int32 offset:int64 * (last - first + 1)
 * proxy   := Flink KeyedBackendSerializationProxy (key serializer snapshot, state meta infos)
 * block   := keyGroup:int32 records:int32 length:int32 record* (length bytes)
 * record  := stateIndex:int16 op:int8 key namespace [userKey] [value]
 * </pre>
 *
 * Operations: {@link #OP_PUT}, {@link #OP_DELETE}, and from version 2 {@link #OP_APPEND} (list
 * state only: the value is the list of elements to append to the delegate's list).
 *
 * <p>All integers are big-endian (Java {@code DataOutput}). Keys, namespaces, user keys and values
 * are written with the serializers named in the proxy. A map value is a null flag (boolean)
 * followed by the value when not null.
 */
public final class CacheSnapshotFormat {

    /** "LRUC". */
    public static final int MAGIC = 0x4C525543;

    /** The version this build writes. */
    public static final byte VERSION = 2;

    /** The oldest version this build reads. */
    public static final byte MIN_READ_VERSION = 1;

    /** The delegate produced no handle; the envelope holds only the cache stream. */
    public static final byte DELEGATE_NONE = 0;

    /** The delegate produced an IncrementalRemoteKeyedStateHandle, kept as is in the envelope. */
    public static final byte DELEGATE_INCREMENTAL = 1;

    /** The delegate produced a KeyGroupsStateHandle; its offsets are stored in this header. */
    public static final byte DELEGATE_KEY_GROUPS = 2;

    public static final byte OP_PUT = 0;
    public static final byte OP_DELETE = 1;

    /** List state only, version 2 and later: append the value's elements to the delegate's list. */
    public static final byte OP_APPEND = 2;

    /** Private-state name of the cache stream inside the envelope handle. */
    public static final String CACHE_STREAM_NAME = "flinkstate-lru-cache.bin";

    /** Private-state name of the delegate's key-groups stream inside the envelope handle. */
    public static final String DELEGATE_STREAM_NAME = "flinkstate-lru-delegate-keygroups.bin";

    /**
     * Private-state name under which an envelope keeps the delegate's own meta stream (envelope
     * layout 2); the envelope's meta stream is then {@link PlainRestoreGuard}'s.
     */
    public static final String DELEGATE_META_NAME = "flinkstate-lru-delegate-meta.bin";

    private CacheSnapshotFormat() {}
}
