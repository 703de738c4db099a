package dev.privagg.job.state;

import java.io.IOException;
import java.io.Serializable;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;

/**
 * How one type the job keeps in state is laid out in checkpoints and savepoints, in every version
 * this release can read. The id and the version numbers are stored in each savepoint (see {@link
 * StateLayoutSnapshot}); the Java class and field names are not. (privagg 0.1.0's savepoints do
 * name the classes and fields of its POJO state: those stay as they are while such savepoints are
 * supported, which ReleasedSavepointPojoFieldsTest checks.)
 *
 * <p>To change a layout: bump {@link #version()}, make {@link #write} write the new layout, and
 * keep {@link #read} reading every earlier version (StateLayoutTest holds each version's bytes). A
 * layout that nests another (combined-round holds a round-signal) reads the nested one at the
 * version the outer one implies: bump the outer layout whenever a nested one changes.
 */
abstract class StateLayout<T> implements Serializable {
  private static final long serialVersionUID = 1L;

  private final String id;
  private final int version;
  private final Class<T> type;

  /**
   * @param id the name stored in savepoints: never changes once released
   * @param version the version {@link #write} writes
   * @param type the state type, with a public no-argument constructor
   */
  StateLayout(String id, int version, Class<T> type) {
    this.id = id;
    this.version = version;
    this.type = type;
  }

  final String id() {
    return id;
  }

  final int version() {
    return version;
  }

  final Class<T> type() {
    return type;
  }

  /** An empty value, for Flink's {@code createInstance}. */
  final T create() {
    try {
      return type.getConstructor().newInstance();
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException(type + " needs a public no-argument constructor", e);
    }
  }

  /** Writes {@code value} in the current layout. */
  abstract void write(T value, DataOutputView out) throws IOException;

  /** Reads a value written in layout {@code version} (at most {@link #version()}). */
  abstract T read(int version, DataInputView in) throws IOException;

  /** Refuses a version this release does not read, naming the state. */
  final void requireKnown(int version) throws IOException {
    if (version < 1 || version > this.version) {
      throw unknownVersion(version);
    }
  }

  /** The error for a version this release does not read. */
  final IOException unknownVersion(int version) {
    return new IOException(
        "state '"
            + id
            + "' in layout version "
            + version
            + ", but this privagg reads versions 1 to "
            + this.version
            + ": restore it with the privagg release that wrote it or a newer one");
  }
}
