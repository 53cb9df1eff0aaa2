package io.github.flinkstate.lru.state;

import io.github.flinkstate.lru.cow.CowLruMap;
import io.github.flinkstate.lru.metrics.CacheStatistics;

/**
 * What a cached state needs from its keyed backend: the cache, the current key and key group, and
 * control over the delegate backend's key context, which is synchronized lazily.
 *
 * <p>Used only on the task thread.
 */
public interface CacheContext<K> {

    CowLruMap cache();

    CacheStatistics statistics();

    K currentKey();

    int currentKeyGroup();

    /** Makes the delegate's current key equal to ours (no-op when already equal). */
    void syncDelegateKey();

    /** Points the delegate at another key, e.g. to write back an evicted entry. */
    void setDelegateKey(Object key, int keyGroup);

    /** Whether values loaded from the delegate are shared with it and must be copied. */
    boolean copyOnLoad();

    /** Whether values written by the job are copied before they are cached. */
    boolean copyValuesOnWrite();
}
