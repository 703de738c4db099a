package dev.privagg.job.state;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.DataInputStream;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.flink.api.common.serialization.SerializerConfigImpl;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.common.typeutils.CompositeTypeSerializerSnapshot;
import org.apache.flink.api.common.typeutils.TypeSerializerSchemaCompatibility;
import org.apache.flink.api.common.typeutils.TypeSerializerSnapshot;
import org.apache.flink.api.java.typeutils.runtime.PojoSerializerSnapshot;
import org.apache.flink.core.memory.DataInputViewStreamWrapper;
import org.apache.flink.runtime.checkpoint.Checkpoints;
import org.apache.flink.runtime.checkpoint.OperatorState;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.runtime.checkpoint.metadata.CheckpointMetadata;
import org.apache.flink.runtime.state.KeyGroupsStateHandle;
import org.apache.flink.runtime.state.KeyedBackendSerializationProxy;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.metainfo.StateMetaInfoSnapshot;
import org.junit.jupiter.api.Test;

/**
 * privagg 0.1.0's savepoint holds its keyed state as Flink POJOs, which name the Java classes and
 * their fields. {@link StateLayoutSnapshot} answers "compatible after migration" for any POJO
 * snapshot of the right class without asking the POJO snapshot itself, and Flink's POJO restore
 * serializer silently drops a field the current class no longer has (or reads a renamed one as its
 * default). So a field renamed or retyped in a state class loses that field's value from every
 * 0.1.0 savepoint, and no test but UpgradeIT's end-to-end comparison would notice. This reads the
 * stored 0.1.0 savepoint and requires every POJO it names to still read as is.
 */
class ReleasedSavepointPojoFieldsTest {
  private static final Path UPGRADES = Path.of("src/test/resources/upgrade");

  @Test
  void everyPojoStateOfAReleasedSavepoint_readsAsIsWithTodaysClasses() throws Exception {
    List<String> checked = new ArrayList<>();
    List<String> problems = new ArrayList<>();
    try (var releases = Files.list(UPGRADES)) {
      for (Path release : releases.filter(Files::isDirectory).toList()) {
        for (Map.Entry<String, TypeSerializerSnapshot<?>> e : valueSnapshots(release).entrySet()) {
          for (PojoSerializerSnapshot<?> pojo : pojos(e.getValue())) {
            String what = release.getFileName() + " " + e.getKey() + " " + pojo;
            checked.add(what);
            TypeSerializerSchemaCompatibility<?> c = asIs(pojo);
            if (!c.isCompatibleAsIs()) {
              problems.add(what + ": " + c);
            }
          }
        }
      }
    }
    System.out.println("checked POJO states: " + checked);
    assertThat(checked).as("POJO states found in the stored savepoints").isNotEmpty();
    assertThat(problems)
        .as("POJO state of a released savepoint that no longer reads as is")
        .isEmpty();
  }

  @SuppressWarnings({"unchecked", "rawtypes"})
  private static TypeSerializerSchemaCompatibility<?> asIs(PojoSerializerSnapshot<?> old) {
    Class<?> type = old.restoreSerializer().createInstance().getClass();
    TypeSerializerSnapshot now =
        Types.POJO(type).createSerializer(new SerializerConfigImpl()).snapshotConfiguration();
    return now.resolveSchemaCompatibility((TypeSerializerSnapshot) old);
  }

  /** POJO snapshots in {@code s}, nested ones (map values) included, outermost only. */
  private static List<PojoSerializerSnapshot<?>> pojos(TypeSerializerSnapshot<?> s) {
    List<PojoSerializerSnapshot<?>> found = new ArrayList<>();
    if (s instanceof PojoSerializerSnapshot<?> p) {
      found.add(p);
    } else if (s instanceof CompositeTypeSerializerSnapshot<?, ?> c) {
      for (TypeSerializerSnapshot<?> nested : c.getNestedSerializerSnapshots()) {
        found.addAll(pojos(nested));
      }
    }
    return found;
  }

  /** Each keyed state's value serializer snapshot, by "operator id/state name". */
  private static Map<String, TypeSerializerSnapshot<?>> valueSnapshots(Path release)
      throws Exception {
    Map<String, TypeSerializerSnapshot<?>> snapshots = new TreeMap<>();
    Path metadata = release.resolve("savepoint/_metadata");
    ClassLoader loader = ReleasedSavepointPojoFieldsTest.class.getClassLoader();
    CheckpointMetadata cp;
    try (DataInputStream in = new DataInputStream(Files.newInputStream(metadata))) {
      cp = Checkpoints.loadCheckpointMetadata(in, loader, metadata.getParent().toString());
    }
    for (OperatorState op : cp.getOperatorStates()) {
      for (OperatorSubtaskState subtask : op.getStates()) {
        for (KeyedStateHandle handle : subtask.getManagedKeyedState()) {
          if (!(handle instanceof KeyGroupsStateHandle groups)) {
            throw new AssertionError("unexpected keyed state handle " + handle.getClass());
          }
          try (InputStream in = groups.openInputStream()) {
            KeyedBackendSerializationProxy<?> proxy = new KeyedBackendSerializationProxy<>(loader);
            proxy.read(new DataInputViewStreamWrapper(in));
            for (StateMetaInfoSnapshot info : proxy.getStateMetaInfoSnapshots()) {
              TypeSerializerSnapshot<?> value =
                  info.getTypeSerializerSnapshot(
                      StateMetaInfoSnapshot.CommonSerializerKeys.VALUE_SERIALIZER);
              if (value != null) {
                snapshots.put(op.getOperatorID() + "/" + info.getName(), value);
              }
            }
          }
        }
      }
    }
    return snapshots;
  }
}
