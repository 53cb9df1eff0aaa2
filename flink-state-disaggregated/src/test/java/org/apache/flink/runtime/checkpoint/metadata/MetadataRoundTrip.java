package org.apache.flink.runtime.checkpoint.metadata;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import org.apache.flink.runtime.state.KeyedStateHandle;

/**
 * Test helper: serializes a keyed state handle exactly as checkpoint metadata does and reads it
 * back with the context a restore has (the checkpoint directory), which relative file handles need.
 * Lives in Flink's package only to reach that package-private context.
 */
public final class MetadataRoundTrip {

    private MetadataRoundTrip() {}

    public static KeyedStateHandle roundTrip(KeyedStateHandle handle, String checkpointPointer)
            throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        MetadataV3Serializer.INSTANCE.serializeKeyedStateHandleUtil(
                handle, new DataOutputStream(bytes));
        return MetadataV2V3SerializerBase.deserializeKeyedStateHandle(
                new DataInputStream(new ByteArrayInputStream(bytes.toByteArray())),
                new MetadataV2V3SerializerBase.DeserializationContext(checkpointPointer));
    }
}
