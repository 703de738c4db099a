package dev.privagg.job.state;

import java.io.IOException;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.common.typeutils.TypeSerializerSchemaCompatibility;
import org.apache.flink.api.common.typeutils.TypeSerializerSnapshot;
import org.apache.flink.api.java.typeutils.runtime.PojoSerializerSnapshot;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;
import org.apache.flink.runtime.execution.SuppressRestartsException;

/**
 * What a savepoint records of a {@link StateSerializer}: the layout's id and version. This class's
 * name is stored in every savepoint since 0.2.0 and must not move.
 *
 * <p>Restoring: the same version restores as is; an earlier version, or the {@code Types.POJO}
 * state of privagg 0.1.0, migrates (Flink reads it with the old serializer and writes the current
 * layout); a later version, from a newer privagg, is refused with a message.
 */
public final class StateLayoutSnapshot<T> implements TypeSerializerSnapshot<T> {
  private static final int FORMAT = 1;

  private StateLayout<T> layout;
  private int version;

  /** For Flink, which reads the fields with {@link #readSnapshot}. */
  public StateLayoutSnapshot() {}

  StateLayoutSnapshot(StateLayout<T> layout, int version) {
    this.layout = layout;
    this.version = version;
  }

  @Override
  public int getCurrentVersion() {
    return FORMAT;
  }

  @Override
  public void writeSnapshot(DataOutputView out) throws IOException {
    out.writeUTF(layout.id());
    out.writeInt(version);
  }

  @Override
  @SuppressWarnings("unchecked")
  public void readSnapshot(int format, DataInputView in, ClassLoader classLoader)
      throws IOException {
    if (format != FORMAT) {
      throw new IOException("unknown state snapshot format " + format + ", expected " + FORMAT);
    }
    String id = in.readUTF();
    version = in.readInt();
    try {
      layout = (StateLayout<T>) StateSerializers.layout(id);
      if (version > layout.version()) {
        throw layout.unknownVersion(version);
      }
    } catch (IOException refused) {
      // A savepoint of a newer privagg: fail the job once, since a restart cannot help.
      throw new IOException(refused.getMessage(), new SuppressRestartsException(refused));
    }
  }

  @Override
  public TypeSerializer<T> restoreSerializer() {
    return new StateSerializer<>(layout, version);
  }

  /** Called on the current serializer's snapshot with the one the savepoint holds. */
  @Override
  public TypeSerializerSchemaCompatibility<T> resolveSchemaCompatibility(
      TypeSerializerSnapshot<T> old) {
    if (old instanceof StateLayoutSnapshot<T> earlier && earlier.layout.id().equals(layout.id())) {
      return earlier.version == version
          ? TypeSerializerSchemaCompatibility.compatibleAsIs()
          : TypeSerializerSchemaCompatibility.compatibleAfterMigration();
    }
    if (old instanceof PojoSerializerSnapshot<T> pojo
        && layout.type().isInstance(pojo.restoreSerializer().createInstance())) {
      return TypeSerializerSchemaCompatibility.compatibleAfterMigration();
    }
    return TypeSerializerSchemaCompatibility.incompatible();
  }

  int version() {
    return version;
  }
}
