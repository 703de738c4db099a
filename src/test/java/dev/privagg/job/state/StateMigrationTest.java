package dev.privagg.job.state;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.privagg.job.CombinedRound;
import dev.privagg.job.DecodedUpdate;
import dev.privagg.job.JobProgress;
import dev.privagg.job.ModelState;
import dev.privagg.job.OpenRound;
import dev.privagg.job.PublicRounds;
import dev.privagg.job.ShardCommand;
import dev.privagg.job.ShardRound;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.common.typeutils.base.LongSerializer;
import org.apache.flink.api.common.typeutils.base.StringSerializer;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.runtime.checkpoint.SavepointType;
import org.apache.flink.runtime.state.StateBackend;
import org.apache.flink.runtime.state.hashmap.HashMapStateBackend;
import org.apache.flink.state.rocksdb.EmbeddedRocksDBStateBackend;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.streaming.api.operators.KeyedProcessOperator;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.apache.flink.util.Collector;
import org.apache.flink.util.StateMigrationException;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Keyed state that privagg 0.1.0 wrote as Flink POJOs is restored into operators that declare the
 * same state, under the same names, with {@link StateSerializers}: on the heap and the RocksDB
 * backend, from a checkpoint and from a canonical savepoint. Every value reads back field for
 * field; the state captured after the migration restores into the layouts as is, and no longer into
 * 0.1.0's POJO declarations, so the migration rewrote it. Going back is refused: a POJO declaration
 * does not take state in the layouts, and this release does not read a layout version newer than
 * its own.
 */
class StateMigrationTest {
  /** Two keys: one with every field set, one as its type's constructor leaves it (nulls). */
  private static final String FULL = "job-full";

  private static final String EMPTY = "job-empty";

  /** The keyed state of the decider, shards, combiner and publisher, as both releases name it. */
  private static final List<Slot<?, ?>> SLOTS =
      List.of(
          Slot.value("job-progress", JobProgress.class, StateSerializers.JOB_PROGRESS),
          Slot.value("open-round", OpenRound.class, StateSerializers.OPEN_ROUND),
          Slot.stringMap(
              "held-update-entries", DecodedUpdate.class, StateSerializers.DECODED_UPDATE),
          Slot.stringMap("waiting-values", DecodedUpdate.class, StateSerializers.DECODED_UPDATE),
          Slot.stringMap("waiting-commands", ShardCommand.class, StateSerializers.SHARD_COMMAND),
          Slot.longMap("shard-sums", ShardRound.class, StateSerializers.SHARD_ROUND),
          Slot.longMap("combined-rounds", CombinedRound.class, StateSerializers.COMBINED_ROUND),
          Slot.value("released-model", ModelState.class, StateSerializers.MODEL_STATE),
          Slot.value(
              "published-position",
              PublicRounds.Position.class,
              StateSerializers.PUBLISHED_POSITION));

  enum Backend {
    HASHMAP,
    ROCKSDB;

    StateBackend create(Path dir) {
      if (this == HASHMAP) {
        return new HashMapStateBackend();
      }
      // Full snapshots: a restored incremental backend may hand back the SST files it restored as
      // placeholders, which only a checkpoint coordinator resolves, so a harness restoring its own
      // snapshot failed now and then. The serializers under test are the same either way.
      EmbeddedRocksDBStateBackend rocksDb = new EmbeddedRocksDBStateBackend(false);
      rocksDb.setDbStoragePath(dir.toString());
      return rocksDb;
    }
  }

  /** How the state leaves the operator: as a task's checkpoint or as a savepoint. */
  enum Capture {
    CHECKPOINT,
    CANONICAL_SAVEPOINT
  }

  /** How a release declares its state. */
  enum Declared {
    POJO_0_1_0,
    LAYOUTS
  }

  @TempDir Path dir;

  static Stream<Arguments> backendsAndCaptures() {
    return Stream.of(Backend.values())
        .flatMap(b -> Stream.of(Capture.values()).map(c -> Arguments.of(b, c)));
  }

  @ParameterizedTest(name = "{0} {1}")
  @MethodSource("backendsAndCaptures")
  void pojoStateOf010_migratesToTheLayouts_andIsRewrittenInThem(Backend backend, Capture capture)
      throws Exception {
    OperatorSubtaskState of010 = write(backend, capture, Declared.POJO_0_1_0, SLOTS, s -> s);

    StateFunction migrated = new StateFunction(Declared.LAYOUTS, SLOTS, s -> s, false);
    OperatorSubtaskState rewritten = run(backend, capture, migrated, of010);
    assertEverySample(migrated);

    StateFunction again = new StateFunction(Declared.LAYOUTS, SLOTS, s -> s, false);
    run(backend, capture, again, rewritten);
    assertEverySample(again);
    // Had the snapshot kept a POJO serializer, 0.1.0's declarations would still read it as is.
    assertEveryPojoDeclarationIsRefused(backend, capture, rewritten);
  }

  @ParameterizedTest
  @EnumSource(Backend.class)
  void stateInTheLayouts_restoredIntoAPojoDeclaration_isRefused(Backend backend) throws Exception {
    OperatorSubtaskState current =
        write(backend, Capture.CHECKPOINT, Declared.LAYOUTS, SLOTS, s -> s);
    assertEveryPojoDeclarationIsRefused(backend, Capture.CHECKPOINT, current);
  }

  @ParameterizedTest
  @EnumSource(Backend.class)
  void aLayoutVersionNewerThanThisRelease_isRefused_namingTheState(Backend backend)
      throws Exception {
    for (Slot<?, ?> slot : SLOTS) {
      OperatorSubtaskState fromANewerRelease =
          write(
              backend,
              Capture.CHECKPOINT,
              Declared.LAYOUTS,
              List.of(slot),
              StateMigrationTest::oneVersionNewer);
      StateFunction current = new StateFunction(Declared.LAYOUTS, List.of(slot), s -> s, false);
      String id = slot.serializer().layout().id();
      assertThatThrownBy(() -> run(backend, Capture.CHECKPOINT, current, fromANewerRelease))
          .rootCause()
          .isInstanceOf(IOException.class)
          .hasMessageContaining(
              "state '" + id + "' in layout version " + (slot.serializer().layout().version() + 1))
          .hasMessageContaining("newer");
    }
  }

  /** Runs a function that writes samples under both keys and returns its captured state. */
  private OperatorSubtaskState write(
      Backend backend,
      Capture capture,
      Declared declared,
      List<Slot<?, ?>> slots,
      UnaryOperator<StateSerializer<?>> serializers)
      throws Exception {
    return run(backend, capture, new StateFunction(declared, slots, serializers, true), null);
  }

  /**
   * Opens {@code function} on {@code backend} (from {@code restore} if not null), visits both keys
   * and returns the state captured after.
   */
  private OperatorSubtaskState run(
      Backend backend, Capture capture, StateFunction function, OperatorSubtaskState restore)
      throws Exception {
    try (KeyedOneInputStreamOperatorTestHarness<String, String, Void> harness =
        new KeyedOneInputStreamOperatorTestHarness<>(
            new KeyedProcessOperator<>(function), key -> key, Types.STRING)) {
      harness.setStateBackend(backend.create(dir));
      if (restore != null) {
        harness.initializeState(restore);
      }
      harness.open();
      harness.processElement(FULL, 1L);
      harness.processElement(EMPTY, 1L);
      return switch (capture) {
        case CHECKPOINT -> harness.snapshot(1L, 1L);
        case CANONICAL_SAVEPOINT ->
            harness
                .snapshotWithLocalState(
                    1L, 1L, SavepointType.savepoint(SavepointFormatType.CANONICAL))
                .getJobManagerOwnedState();
      };
    }
  }

  /** Restores {@code state} into 0.1.0's declaration of each slot in turn: each must fail. */
  private void assertEveryPojoDeclarationIsRefused(
      Backend backend, Capture capture, OperatorSubtaskState state) {
    for (Slot<?, ?> slot : SLOTS) {
      StateFunction downgrade =
          new StateFunction(Declared.POJO_0_1_0, List.of(slot), s -> s, false);
      assertThatThrownBy(() -> run(backend, capture, downgrade, state))
          .as("state '%s' in the layouts, declared as a POJO", slot.name())
          .rootCause()
          .isInstanceOf(StateMigrationException.class)
          .hasMessageContaining("must not be incompatible");
      assertThat(downgrade.read).as("values read from '%s'", slot.name()).isEmpty();
    }
  }

  /**
   * Every sample read back; a field added since 0.1.0 is transient to the POJO serializer (so
   * 0.1.0's POJO schema still reads as is) and reads as its default from a POJO state.
   */
  private static void assertEverySample(StateFunction function) throws Exception {
    for (Slot<?, ?> slot : SLOTS) {
      for (String key : List.of(FULL, EMPTY)) {
        Object expected = slot.expected(key);
        assertThat(function.read.get(key + " " + slot.name()))
            .as("state '%s' of key %s", slot.name(), key)
            .usingRecursiveComparison()
            .ignoringFields(addedSince010(expected.getClass()))
            .isEqualTo(expected);
      }
    }
  }

  private static String[] addedSince010(Class<?> type) {
    return java.util.Arrays.stream(type.getFields())
        .filter(f -> java.lang.reflect.Modifier.isTransient(f.getModifiers()))
        .map(java.lang.reflect.Field::getName)
        .toArray(String[]::new);
  }

  /** The value a writer puts under {@code key}: a full sample, or an empty instance. */
  private static <T> T valueFor(String key, Class<T> type) throws Exception {
    return FULL.equals(key) ? StateLayoutTest.sample(type) : type.getConstructor().newInstance();
  }

  /**
   * How one piece of keyed state is declared: a value, or a map holding one entry under {@code
   * mapKey}.
   */
  private record Slot<K, V>(
      String name,
      Class<V> type,
      StateSerializer<V> serializer,
      TypeInformation<K> mapKeyType,
      TypeSerializer<K> mapKeySerializer,
      K mapKey) {
    static <V> Slot<Void, V> value(String name, Class<V> type, StateSerializer<V> serializer) {
      return new Slot<>(name, type, serializer, null, null, null);
    }

    static <V> Slot<String, V> stringMap(
        String name, Class<V> type, StateSerializer<V> serializer) {
      return new Slot<>(name, type, serializer, Types.STRING, StringSerializer.INSTANCE, "7@0:42");
    }

    static <V> Slot<Long, V> longMap(String name, Class<V> type, StateSerializer<V> serializer) {
      return new Slot<>(name, type, serializer, Types.LONG, LongSerializer.INSTANCE, 7L);
    }

    boolean isMap() {
      return mapKeyType != null;
    }

    /** What reading this state under {@code key} must give: the value, or the whole map. */
    Object expected(String key) throws Exception {
      V value = valueFor(key, type);
      return isMap() ? Map.of(mapKey, value) : value;
    }

    @SuppressWarnings("unchecked")
    ValueStateDescriptor<V> valueDescriptor(
        Declared declared, UnaryOperator<StateSerializer<?>> s) {
      return declared == Declared.POJO_0_1_0
          ? new ValueStateDescriptor<>(name, Types.POJO(type))
          : new ValueStateDescriptor<>(name, (StateSerializer<V>) s.apply(serializer));
    }

    @SuppressWarnings("unchecked")
    MapStateDescriptor<K, V> mapDescriptor(Declared declared, UnaryOperator<StateSerializer<?>> s) {
      return declared == Declared.POJO_0_1_0
          ? new MapStateDescriptor<>(name, mapKeyType, Types.POJO(type))
          : new MapStateDescriptor<>(
              name, mapKeySerializer, (StateSerializer<V>) s.apply(serializer));
    }
  }

  /**
   * Declares {@code slots} in {@code open()}, as the operators do; then, for each key it sees,
   * either writes every slot's sample or reads every slot into {@link #read}.
   */
  private static final class StateFunction extends KeyedProcessFunction<String, String, Void> {
    private final Declared declared;
    private final List<Slot<?, ?>> slots;
    private final UnaryOperator<StateSerializer<?>> serializers;
    private final boolean writes;

    /** What was read, by "key slot-name": the value, or the map's entries. */
    final Map<String, Object> read = new HashMap<>();

    private transient List<ValueState<Object>> values;
    private transient List<MapState<Object, Object>> maps;

    StateFunction(
        Declared declared,
        List<Slot<?, ?>> slots,
        UnaryOperator<StateSerializer<?>> serializers,
        boolean writes) {
      this.declared = declared;
      this.slots = slots;
      this.serializers = serializers;
      this.writes = writes;
    }

    @Override
    @SuppressWarnings("unchecked")
    public void open(OpenContext context) {
      values = new ArrayList<>();
      maps = new ArrayList<>();
      for (Slot<?, ?> slot : slots) {
        if (slot.isMap()) {
          maps.add(
              (MapState<Object, Object>)
                  (MapState<?, ?>)
                      getRuntimeContext().getMapState(slot.mapDescriptor(declared, serializers)));
          values.add(null);
        } else {
          values.add(
              (ValueState<Object>)
                  getRuntimeContext().getState(slot.valueDescriptor(declared, serializers)));
          maps.add(null);
        }
      }
    }

    @Override
    public void processElement(String key, Context ctx, Collector<Void> out) throws Exception {
      for (int i = 0; i < slots.size(); i++) {
        Slot<?, ?> slot = slots.get(i);
        if (writes) {
          Object value = valueFor(key, slot.type());
          if (slot.isMap()) {
            maps.get(i).put(slot.mapKey(), value);
          } else {
            values.get(i).update(value);
          }
        } else if (slot.isMap()) {
          Map<Object, Object> entries = new HashMap<>();
          for (Map.Entry<Object, Object> e : maps.get(i).entries()) {
            entries.put(e.getKey(), e.getValue());
          }
          read.put(key + " " + slot.name(), entries);
        } else {
          read.put(key + " " + slot.name(), values.get(i).value());
        }
      }
    }
  }

  /** The same state as a release with the next layout version would write it. */
  private static StateSerializer<?> oneVersionNewer(StateSerializer<?> serializer) {
    return newer(serializer);
  }

  private static <T> StateSerializer<T> newer(StateSerializer<T> serializer) {
    NextVersion<T> layout = new NextVersion<>(serializer.layout());
    return new StateSerializer<>(layout, layout.version());
  }

  /** A layout under the same id with the next version number, writing the same bytes. */
  private static final class NextVersion<T> extends StateLayout<T> {
    private final StateLayout<T> current;

    NextVersion(StateLayout<T> current) {
      super(current.id(), current.version() + 1, current.type());
      this.current = current;
    }

    @Override
    void write(T value, DataOutputView out) throws IOException {
      current.write(value, out);
    }

    @Override
    T read(int version, DataInputView in) throws IOException {
      return current.read(current.version(), in);
    }
  }
}
