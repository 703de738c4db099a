package dev.privagg.io;

import dev.privagg.avro.ClientUpdate;
import java.io.IOException;
import java.util.HashMap;
import java.util.Map;
import org.apache.avro.Schema;
import org.apache.avro.SchemaNormalization;
import org.apache.avro.io.DecoderFactory;
import org.apache.avro.specific.SpecificDatumReader;

/**
 * The earlier ClientUpdate schemas a client may still write, by fingerprint, each with a reader
 * that resolves it to the current schema (built once, shared by every record: Avro's resolving
 * readers are thread-safe once built). {@link UpdateReader} reads the current schema itself, fast;
 * a record of an earlier one is first checked by {@link BoundedAvro} (so Avro's decoder cannot be
 * made to allocate more than the record's size), resolved, and written again as the current schema,
 * which the bounded reader then reads with every cap of the job: one validation path for every
 * version.
 */
final class UpdateVersions {
  /** The versions recorded in {@code schemas/history/ClientUpdate}. */
  static final UpdateVersions RECORDED =
      of(SchemaHistory.versions("ClientUpdate").toArray(new Schema[0]));

  private record Earlier(Schema writer, SpecificDatumReader<ClientUpdate> reader) {}

  private final Map<Long, Earlier> earlier;

  private UpdateVersions(Map<Long, Earlier> earlier) {
    this.earlier = earlier;
  }

  /** The given writer schemas, except the current one (the bounded reader reads that). */
  static UpdateVersions of(Schema... writers) {
    long current = SchemaNormalization.parsingFingerprint64(ClientUpdate.getClassSchema());
    Map<Long, Earlier> map = new HashMap<>();
    for (Schema writer : writers) {
      long fingerprint = SchemaNormalization.parsingFingerprint64(writer);
      if (fingerprint != current) {
        map.put(
            fingerprint,
            new Earlier(writer, new SpecificDatumReader<>(writer, ClientUpdate.getClassSchema())));
      }
    }
    return new UpdateVersions(Map.copyOf(map));
  }

  /** Whether {@code fingerprint} is an earlier version's. */
  boolean knows(long fingerprint) {
    return earlier.containsKey(fingerprint);
  }

  /**
   * The single-object encoding, in the current schema, of the record {@code bytes} holds in the
   * earlier version {@code fingerprint}.
   */
  byte[] upgrade(long fingerprint, byte[] bytes, int bodyStart, long maxItems)
      throws BoundedAvro.Malformed {
    Earlier version = earlier.get(fingerprint);
    BoundedAvro.check(version.writer(), bytes, bodyStart, maxItems);
    ClientUpdate update;
    try {
      update =
          version
              .reader()
              .read(
                  null,
                  DecoderFactory.get()
                      .binaryDecoder(bytes, bodyStart, bytes.length - bodyStart, null));
    } catch (IOException | RuntimeException e) {
      // The walk above makes this unexpected; still a reject, never a task failure.
      throw new BoundedAvro.Malformed("cannot be resolved to the current schema: " + e);
    }
    try {
      return AvroCodec.encode(update);
    } catch (RuntimeException e) {
      throw new BoundedAvro.Malformed("cannot be written in the current schema: " + e);
    }
  }
}
