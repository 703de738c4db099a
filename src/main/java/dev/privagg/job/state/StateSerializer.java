package dev.privagg.job.state;

import java.io.IOException;
import java.util.Objects;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.common.typeutils.TypeSerializerSnapshot;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.apache.flink.core.memory.DataOutputView;

/**
 * Flink serializer of one state type through its {@link StateLayout}: writes the current layout,
 * reads the layout version it was restored with (the current one, unless it migrates a savepoint of
 * an earlier release).
 */
public final class StateSerializer<T> extends TypeSerializer<T> {
  private static final long serialVersionUID = 1L;

  private final StateLayout<T> layout;
  private final int readVersion;

  StateSerializer(StateLayout<T> layout, int readVersion) {
    if (readVersion < 1 || readVersion > layout.version()) {
      throw new IllegalArgumentException(
          "layout version of '" + layout.id() + "' must be in [1, " + layout.version() + "]");
    }
    this.layout = layout;
    this.readVersion = readVersion;
  }

  @Override
  public boolean isImmutableType() {
    return false;
  }

  @Override
  public TypeSerializer<T> duplicate() {
    return this; // stateless
  }

  @Override
  public T createInstance() {
    return layout.create();
  }

  /** A deep copy, by writing and reading back: the one path every field already takes. */
  @Override
  public T copy(T from) {
    try {
      DataOutputSerializer out = new DataOutputSerializer(256);
      layout.write(from, out);
      return layout.read(
          layout.version(), new DataInputDeserializer(out.getSharedBuffer(), 0, out.length()));
    } catch (IOException e) {
      throw new IllegalStateException("could not copy state '" + layout.id() + "'", e);
    }
  }

  @Override
  public T copy(T from, T reuse) {
    return copy(from);
  }

  @Override
  public int getLength() {
    return -1;
  }

  @Override
  public void serialize(T record, DataOutputView target) throws IOException {
    layout.write(record, target);
  }

  @Override
  public T deserialize(DataInputView source) throws IOException {
    return layout.read(readVersion, source);
  }

  @Override
  public T deserialize(T reuse, DataInputView source) throws IOException {
    return deserialize(source);
  }

  @Override
  public void copy(DataInputView source, DataOutputView target) throws IOException {
    layout.write(deserialize(source), target);
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof StateSerializer<?> other
        && other.layout.id().equals(layout.id())
        && other.readVersion == readVersion;
  }

  @Override
  public int hashCode() {
    return Objects.hash(layout.id(), readVersion);
  }

  @Override
  public TypeSerializerSnapshot<T> snapshotConfiguration() {
    return new StateLayoutSnapshot<>(layout, layout.version());
  }

  StateLayout<T> layout() {
    return layout;
  }
}
