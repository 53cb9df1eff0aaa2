package io.github.flinkstate.disagg.engine.version;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.flinkstate.disagg.engine.key.KeyGroupSpan;
import io.github.flinkstate.disagg.engine.key.KeyRange;
import io.github.flinkstate.disagg.engine.sst.PrefixTombstone;
import io.github.flinkstate.disagg.engine.sst.PrefixTombstones;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Manifest encoding, decoding and corruption detection; version-set reference counting. */
class ManifestCodecTest {

    /** A level-1 style file over key groups {@code kgLo..kgHi}, with one prefix tombstone. */
    static FileMeta file(String name, int kgLo, int kgHi) {
        KeyGroupSpan s = KeyGroupSpan.of(kgLo, kgHi);
        return new FileMeta(
                "file:/tmp/" + name,
                1234,
                KeyRange.of(s),
                s,
                s,
                10,
                1,
                9,
                PrefixTombstones.of(List.of(new PrefixTombstone(KeyGroupSpan.prefixOf(kgLo), 5))),
                true,
                new FileMeta.RefCount());
    }

    private static List<List<FileMeta>> levels(FileMeta... l1) {
        List<List<FileMeta>> levels = new ArrayList<>();
        levels.add(new ArrayList<>(List.of(file("l0", 0, 7))));
        levels.add(new ArrayList<>(List.of(l1)));
        levels.add(new ArrayList<>());
        return levels;
    }

    @Test
    void roundTrip_preservesFilesAndClips() throws Exception {
        List<FileMeta> obsolete = new ArrayList<>();
        VersionSet vs =
                new VersionSet(
                        KeyGroupSpan.of(0, 7),
                        levels(file("a", 0, 3), file("b", 4, 7)),
                        obsolete::addAll);
        byte[] bytes = ManifestCodec.encode(KeyGroupSpan.of(0, 7), 99, vs.current());
        ManifestCodec.Manifest m = ManifestCodec.decode(bytes);
        assertThat(m.lastSeq()).isEqualTo(99);
        assertThat(m.span()).isEqualTo(KeyGroupSpan.of(0, 7));
        assertThat(m.levels()).hasSize(3);
        assertThat(m.levels().get(1))
                .extracting(FileMeta::path)
                .containsExactly("file:/tmp/a", "file:/tmp/b");
        FileMeta a = m.levels().get(1).get(0);
        assertThat(a.createdHere()).isFalse();
        assertThat(a.tombstones().list()).hasSize(1);
        assertThat(a.restoredWithClip(KeyGroupSpan.of(2, 9)).clip())
                .isEqualTo(KeyGroupSpan.of(2, 3));
        assertThat(a.restoredWithClip(KeyGroupSpan.of(2, 9)).isClipped()).isTrue();
    }

    @Test
    void corruptedOrTruncatedManifest_isRejected() {
        VersionSet vs = new VersionSet(KeyGroupSpan.of(0, 7), levels(file("a", 0, 3)), f -> {});
        byte[] bytes = ManifestCodec.encode(KeyGroupSpan.of(0, 7), 5, vs.current());
        byte[] flipped = bytes.clone();
        flipped[20] ^= 1;
        assertThatThrownBy(() -> ManifestCodec.decode(flipped))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("CRC32C");
        byte[] cut = java.util.Arrays.copyOf(bytes, bytes.length - 3);
        assertThatThrownBy(() -> ManifestCodec.decode(cut))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("truncated");
        byte[] magic = bytes.clone();
        magic[0] = 'X';
        assertThatThrownBy(() -> ManifestCodec.decode(magic))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("magic");
    }

    @Test
    void versionSet_refCountsAndReportsObsoleteFilesOnce() {
        List<FileMeta> obsolete = new ArrayList<>();
        FileMeta a = file("a", 0, 3);
        VersionSet vs = new VersionSet(KeyGroupSpan.of(0, 7), levels(a), obsolete::addAll);
        Version pinned = vs.acquire();
        FileMeta c = file("c", 0, 3);
        vs.install(new VersionEdit().remove(1, a).add(2, c));
        vs.checkInvariants();
        assertThat(obsolete).isEmpty();
        assertThat(vs.liveVersions()).isEqualTo(2);
        vs.release(pinned);
        assertThat(obsolete).containsExactly(a);
        vs.checkInvariants();
        assertThat(vs.liveVersions()).isEqualTo(1);
    }

    @Test
    void versionSet_rejectsOverlappingFilesInSortedLevel() {
        assertThatThrownBy(
                        () ->
                                new VersionSet(
                                        KeyGroupSpan.of(0, 7),
                                        levels(file("a", 0, 3), file("b", 3, 5)),
                                        f -> {}))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("overlap");
    }
}
