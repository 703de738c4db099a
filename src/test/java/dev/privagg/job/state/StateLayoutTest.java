package dev.privagg.job.state;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.fail;

import dev.privagg.correlated.BandedToeplitz;
import dev.privagg.job.JobProgress;
import dev.privagg.job.NoiseBuffers;
import java.io.IOException;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;
import org.apache.flink.api.common.serialization.SerializerConfigImpl;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.common.typeutils.TypeSerializerSchemaCompatibility;
import org.apache.flink.api.common.typeutils.TypeSerializerSnapshot;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every state layout writes every field of its type, and a layout's bytes change only with a
 * version step: each version's bytes of a sample (every field set) are stored under {@code
 * src/test/resources/state-layouts}, and every stored version must still be read. A new version's
 * file is written by running this test with {@code -Dprivagg.writeStateLayouts=true}; a stored file
 * is never rewritten.
 */
class StateLayoutTest {
  private static final Path STORED = Path.of("src/test/resources/state-layouts");

  static Stream<StateLayout<?>> layouts() {
    return StateSerializers.LAYOUTS.stream();
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("layouts")
  <T> void everyFieldSurvivesARoundTrip(StateLayout<T> layout) throws Exception {
    T sample = sample(layout.type());
    T back = layout.read(layout.version(), input(bytes(layout, sample)));
    assertThat(back)
        .as("a field of %s that layout '%s' does not write", layout.type(), layout.id())
        .usingRecursiveComparison()
        .isEqualTo(sample);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("layouts")
  <T> void theCurrentVersionsBytesAreTheStoredOnes(StateLayout<T> layout) throws Exception {
    byte[] now = bytes(layout, sample(layout.type()));
    Path stored = STORED.resolve(layout.id() + "-v" + layout.version() + ".bin");
    if (!Files.exists(stored)) {
      if (Boolean.getBoolean("privagg.writeStateLayouts")) {
        Files.createDirectories(STORED);
        Files.write(stored, now);
      } else {
        fail(
            "no stored bytes for layout '%s' version %d: write them with"
                + " -Dprivagg.writeStateLayouts=true and commit %s",
            layout.id(), layout.version(), stored);
      }
    }
    assertThat(now)
        .as(
            "layout '%s' changed without a version step: bump %s.version(), write the new"
                + " layout, and keep reading version %d",
            layout.id(), layout.getClass().getSimpleName(), layout.version())
        .isEqualTo(Files.readAllBytes(stored));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("layouts")
  <T> void everyStoredVersionIsStillRead(StateLayout<T> layout) throws Exception {
    for (int version = 1; version <= layout.version(); version++) {
      Path stored = STORED.resolve(layout.id() + "-v" + version + ".bin");
      assertThat(stored).as("bytes of every released version of '%s'", layout.id()).exists();
      DataInputDeserializer in = input(Files.readAllBytes(stored));
      T value = layout.read(version, in);
      assertThat(in.available()).as("bytes left after reading %s", stored).isZero();
      assertThat(layout.read(layout.version(), input(bytes(layout, value))))
          .usingRecursiveComparison()
          .isEqualTo(value);
    }
  }

  // Review 34: a banded strategy keeps b - 1 buffers per block, up to 1,023; the layout once read
  // back at most 64 and called the rest corrupt, so a planned 500-band job lost its state.
  @Test
  void noiseBuffers_asManyAsTheMostBandsKeep_readBack_andOneMoreIsCorrupt() throws Exception {
    NoiseBuffersLayout layout = NoiseBuffersLayout.INSTANCE;
    NoiseBuffers most =
        new NoiseBuffers(7, "bandmf(...)", new double[BandedToeplitz.MAX_BANDS - 1][3]);
    most.buffers[most.buffers.length - 1][2] = 0.5;
    assertThat(layout.read(layout.version(), input(bytes(layout, most))))
        .usingRecursiveComparison()
        .isEqualTo(most);
    NoiseBuffers tooMany =
        new NoiseBuffers(7, "bandmf(...)", new double[BandedToeplitz.MAX_BANDS][1]);
    assertThatThrownBy(() -> layout.read(layout.version(), input(bytes(layout, tooMany))))
        .isInstanceOf(IOException.class)
        .hasMessageContaining("corrupt state: 1024 noise buffers");
  }

  @Test
  void aSavepointsSnapshot_restoresAsIs_migratesPojoState_andRefusesANewerLayout()
      throws Exception {
    TypeSerializerSnapshot<JobProgress> current =
        StateSerializers.JOB_PROGRESS.snapshotConfiguration();
    assertThat(current.resolveSchemaCompatibility(reread(current)).isCompatibleAsIs()).isTrue();

    // privagg 0.1.0 kept JobProgress as a Flink POJO.
    TypeSerializerSnapshot<JobProgress> pojo =
        Types.POJO(JobProgress.class)
            .createSerializer(new SerializerConfigImpl())
            .snapshotConfiguration();
    TypeSerializerSchemaCompatibility<JobProgress> fromPojo =
        current.resolveSchemaCompatibility(pojo);
    assertThat(fromPojo.isCompatibleAfterMigration()).isTrue();

    @SuppressWarnings({"unchecked", "rawtypes"})
    TypeSerializerSnapshot<JobProgress> otherType =
        (TypeSerializerSnapshot) StateSerializers.OPEN_ROUND.snapshotConfiguration();
    assertThat(current.resolveSchemaCompatibility(otherType).isIncompatible()).isTrue();

    DataOutputSerializer newer = new DataOutputSerializer(64);
    newer.writeUTF("job-progress");
    newer.writeInt(JobProgressLayout.INSTANCE.version() + 1);
    assertThatThrownBy(
            () ->
                new StateLayoutSnapshot<JobProgress>()
                    .readSnapshot(1, input(newer.getCopyOfBuffer()), getClass().getClassLoader()))
        .isInstanceOf(IOException.class)
        .hasMessageContaining("job-progress")
        .hasMessageContaining("newer one");
  }

  private static <T> TypeSerializerSnapshot<T> reread(TypeSerializerSnapshot<T> snapshot)
      throws IOException {
    DataOutputSerializer out = new DataOutputSerializer(64);
    TypeSerializerSnapshot.writeVersionedSnapshot(out, snapshot);
    return TypeSerializerSnapshot.readVersionedSnapshot(
        input(out.getCopyOfBuffer()), StateLayoutTest.class.getClassLoader());
  }

  private static <T> byte[] bytes(StateLayout<T> layout, T value) throws IOException {
    DataOutputSerializer out = new DataOutputSerializer(256);
    layout.write(value, out);
    return out.getCopyOfBuffer();
  }

  private static DataInputDeserializer input(byte[] bytes) {
    return new DataInputDeserializer(bytes);
  }

  /** An instance with every public field set to a value of its own (nested types filled too). */
  static <T> T sample(Class<T> type) throws Exception {
    T value = type.getConstructor().newInstance();
    int i = 0;
    for (Field f : type.getFields()) {
      if (Modifier.isStatic(f.getModifiers())) {
        continue;
      }
      f.set(value, valueOf(f.getType(), f.getName(), ++i));
    }
    return value;
  }

  private static Object valueOf(Class<?> t, String name, int i) throws Exception {
    if (t == long.class) {
      return 1_000_003L * i;
    } else if (t == int.class) {
      return 17 * i;
    } else if (t == double.class || t == Double.class) {
      return 0.25 * i;
    } else if (t == boolean.class) {
      return true;
    } else if (t == String.class) {
      return name + "-" + i;
    } else if (t == byte[].class) {
      return new byte[] {(byte) i, 2, 3};
    } else if (t == byte[][].class) {
      return new byte[][] {{(byte) i}, {}, {4, 5}};
    } else if (t == long[].class) {
      return new long[] {i, -i, Long.MAX_VALUE};
    } else if (t == int[].class) {
      return new int[] {i, 0, Integer.MAX_VALUE};
    } else if (t == int[][].class) {
      return new int[][] {{i, 1}, {2, 3}};
    } else if (t == boolean[].class) {
      return new boolean[] {true, false, i % 2 == 0};
    } else if (t == float[].class) {
      return new float[] {i, -1.5f, Float.MIN_VALUE};
    } else if (t == double[].class) {
      return new double[] {i, -0.5, Double.MIN_VALUE};
    } else if (t == double[][].class) {
      return new double[][] {{i, -0.5, Double.MIN_VALUE}, {}, {Math.PI}};
    } else if (t == String[].class) {
      return new String[] {name, "é-" + i};
    } else if (t.isEnum()) {
      Object[] constants = t.getEnumConstants();
      return constants[constants.length - 1];
    } else if (t.getPackageName().startsWith("dev.privagg")) {
      return sample(t);
    }
    throw new AssertionError("no sample value for field " + name + " of type " + t);
  }
}
