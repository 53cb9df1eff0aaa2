package io.github.flinkstate.lru.cow;

/**
 * A {@link CacheEntry} of a map state with a non-null user key. Kept apart so that the entries of
 * every other state do not carry the field (see the size note on {@link CacheEntry}).
 *
 * <p>Thread safety: as {@link CacheEntry}; the user key is frozen.
 */
final class MapCacheEntry extends CacheEntry {

    final Object userKey;

    MapCacheEntry(
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
        super(owner, key, namespace, hash, keyGroup, value, dirty, version, next);
        this.userKey = userKey;
    }

    @Override
    public Object userKey() {
        return userKey;
    }
}
