package io.github.flinkstate.lru.cow;

/**
 * One cached key/value pair of the {@link CowLruMap}: the identity (owner state, key, namespace,
 * and for map state the user key, held by the subclass {@link MapCacheEntry}) plus the cached value
 * and whether the delegate backend already has it.
 *
 * <p>Size: every cached value costs one of these, so the fields are kept to what a lookup, a write,
 * an eviction or a snapshot needs. With compressed references this class is 56 bytes (12-byte
 * header, seven references, three ints, a 16-bit key group and two flags) and a map entry 64 (it
 * was 72 for every entry while each held a user key field and a recency stamp).
 *
 * <p>Thread safety: created and mutated only by the task thread. Snapshots read the frozen fields
 * ({@link #key}, {@link #namespace}, the user key, the key group, {@link #next}, {@link #value},
 * {@link #dirty}) from their own thread.
 *
 * <p>Invariants:
 *
 * <ol>
 *   <li>An entry whose {@link #entryVersion} is lower than the map's highest required snapshot
 *       version may be reachable from a running snapshot; its frozen fields are never written again
 *       (writers get a copy through {@link CowLruMap#writable}).
 *   <li>A value object whose {@link #valueVersion} is lower than the highest required snapshot
 *       version may be read by a snapshot; it is never mutated in place (writers get a copy through
 *       {@link CowLruMap#privateValue}).
 *   <li>The LRU links ({@link #lruPrev}, {@link #lruNext}) and {@link #referenced} are never read
 *       by snapshots, so they may change on any entry; they always link the live copy, never a
 *       superseded one.
 *   <li>An entry has a non-null user key if and only if it is a {@link MapCacheEntry} (a map
 *       state's null user key is held by a plain entry).
 * </ol>
 */
public class CacheEntry {

    /** Marks "no value": the key is known to be absent (clean) or deleted (dirty). */
    public static final Object ABSENT =
            new Object() {
                @Override
                public String toString() {
                    return "ABSENT";
                }
            };

    final CacheOwner owner;
    final Object key;
    final Object namespace;
    final int hash;

    /** The key group; 16 bits hold every key group Flink allows (at most 32,768). */
    private final char keyGroup;

    CacheEntry next;
    Object value;
    boolean dirty;
    int entryVersion;
    int valueVersion;

    CacheEntry lruPrev;
    CacheEntry lruNext;

    /** Used since it was last linked at the front (second chance at eviction); not frozen. */
    boolean referenced;

    CacheEntry(
            CacheOwner owner,
            Object key,
            Object namespace,
            int hash,
            int keyGroup,
            Object value,
            boolean dirty,
            int version,
            CacheEntry next) {
        if (keyGroup != (char) keyGroup) {
            throw new IllegalArgumentException(
                    "Key group "
                            + keyGroup
                            + " does not fit a cache entry's 16 bits (0-65535); Flink allows at"
                            + " most 32,768 key groups");
        }
        this.owner = owner;
        this.key = key;
        this.namespace = namespace;
        this.hash = hash;
        this.keyGroup = (char) keyGroup;
        this.value = value;
        this.dirty = dirty;
        this.entryVersion = version;
        this.valueVersion = version;
        this.next = next;
    }

    /** A new entry, of the subclass when there is a user key. */
    static CacheEntry create(
            CacheOwner owner,
            Object key,
            Object namespace,
            Object userKey,
            int hash,
            int keyGroup,
            Object value,
            boolean dirty,
            int version,
            CacheEntry next) {
        return userKey == null
                ? new CacheEntry(owner, key, namespace, hash, keyGroup, value, dirty, version, next)
                : new MapCacheEntry(
                        owner, key, namespace, userKey, hash, keyGroup, value, dirty, version,
                        next);
    }

    /** A copy with a new version; the value object is shared (see invariant 2). */
    final CacheEntry copy(int version, CacheEntry newNext) {
        CacheEntry c =
                create(
                        owner, key, namespace, userKey(), hash, keyGroup, value, dirty, version,
                        newNext);
        c.valueVersion = valueVersion;
        c.referenced = referenced;
        return c;
    }

    final boolean matches(CacheOwner o, Object k, Object ns, Object uk, int h) {
        return hash == h
                && owner == o
                && (key == k || key.equals(k))
                && (namespace == ns || namespace.equals(ns))
                && (uk == null
                        ? !(this instanceof MapCacheEntry)
                        : this instanceof MapCacheEntry m
                                && (uk == m.userKey || uk.equals(m.userKey)));
    }

    public final CacheOwner owner() {
        return owner;
    }

    public final Object key() {
        return key;
    }

    public final Object namespace() {
        return namespace;
    }

    /** The map state's user key, or null (every other state, and a map's null user key). */
    public Object userKey() {
        return null;
    }

    public final int keyGroup() {
        return keyGroup;
    }

    /**
     * The cached value, or {@link #ABSENT}. Callers must not mutate it; see {@link
     * CowLruMap#privateValue}.
     */
    public final Object value() {
        return value;
    }

    public final boolean isDirty() {
        return dirty;
    }

    public final boolean isAbsent() {
        return value == ABSENT;
    }

    @Override
    public String toString() {
        return "CacheEntry{key="
                + key
                + ", ns="
                + namespace
                + (userKey() == null ? "" : ", uk=" + userKey())
                + ", value="
                + value
                + ", dirty="
                + dirty
                + '}';
    }
}
