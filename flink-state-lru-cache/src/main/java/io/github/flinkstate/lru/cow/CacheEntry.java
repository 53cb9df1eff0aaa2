package io.github.flinkstate.lru.cow;

/**
 * One cached key/value pair of the {@link CowLruMap}: the identity (owner state, key, namespace,
 * optional map user key) plus the cached value and whether the delegate backend already has it.
 *
 * <p>Thread safety: created and mutated only by the task thread. Snapshots read the frozen fields
 * ({@link #key}, {@link #namespace}, {@link #userKey}, {@link #next}, {@link #value}, {@link
 * #dirty}) from their own thread.
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
 *   <li>The LRU links ({@link #lruPrev}, {@link #lruNext}) and the recency fields are never read by
 *       snapshots, so they may change on any entry; they always link the live copy, never a
 *       superseded one.
 * </ol>
 */
public final class CacheEntry {

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
    final Object userKey;
    final int hash;
    final int keyGroup;

    CacheEntry next;
    Object value;
    boolean dirty;
    int entryVersion;
    int valueVersion;

    CacheEntry lruPrev;
    CacheEntry lruNext;

    /** The map's tick when this entry was last linked at the front of the LRU list. */
    long lruTick;

    /** Used since it was last linked at the front (second chance at eviction); not frozen. */
    boolean referenced;

    CacheEntry(
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
        this.owner = owner;
        this.key = key;
        this.namespace = namespace;
        this.userKey = userKey;
        this.hash = hash;
        this.keyGroup = keyGroup;
        this.value = value;
        this.dirty = dirty;
        this.entryVersion = version;
        this.valueVersion = version;
        this.next = next;
    }

    /** A copy with a new version; the value object is shared (see invariant 2). */
    CacheEntry copy(int version, CacheEntry newNext) {
        CacheEntry c =
                new CacheEntry(
                        owner, key, namespace, userKey, hash, keyGroup, value, dirty, version,
                        newNext);
        c.valueVersion = valueVersion;
        c.lruTick = lruTick;
        c.referenced = referenced;
        return c;
    }

    boolean matches(CacheOwner o, Object k, Object ns, Object uk, int h) {
        return hash == h
                && owner == o
                && (key == k || key.equals(k))
                && (namespace == ns || namespace.equals(ns))
                && (uk == null ? userKey == null : uk == userKey || uk.equals(userKey));
    }

    public CacheOwner owner() {
        return owner;
    }

    public Object key() {
        return key;
    }

    public Object namespace() {
        return namespace;
    }

    public Object userKey() {
        return userKey;
    }

    public int keyGroup() {
        return keyGroup;
    }

    /**
     * The cached value, or {@link #ABSENT}. Callers must not mutate it; see {@link
     * CowLruMap#privateValue}.
     */
    public Object value() {
        return value;
    }

    public boolean isDirty() {
        return dirty;
    }

    public boolean isAbsent() {
        return value == ABSENT;
    }

    @Override
    public String toString() {
        return "CacheEntry{key="
                + key
                + ", ns="
                + namespace
                + (userKey == null ? "" : ", uk=" + userKey)
                + ", value="
                + value
                + ", dirty="
                + dirty
                + '}';
    }
}
