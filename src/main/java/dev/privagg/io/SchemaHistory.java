package dev.privagg.io;

import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.avro.Schema;
import org.apache.avro.SchemaNormalization;
import org.apache.avro.message.SchemaStore;

/**
 * Every released version of a record type's schema, from {@code schemas/history/TYPE/vN.avsc} (on
 * the classpath from the repository's {@code schemas/history}): v1, v2, ... with no gap, the last
 * being the current {@code schemas/TYPE.avsc}. Decoders look a record's writer schema up here by
 * its CRC-64-AVRO fingerprint and resolve it to the current schema, so records written by any
 * released version still decode.
 */
public final class SchemaHistory {
  private static final String ROOT = "/schemas/history/";

  private SchemaHistory() {}

  /** The versions of {@code type} (a simple name, e.g. GlobalModel), oldest first. */
  public static List<Schema> versions(String type) {
    List<Schema> versions = new ArrayList<>();
    for (int v = 1; ; v++) {
      String path = ROOT + type + "/v" + v + ".avsc";
      try (InputStream in = SchemaHistory.class.getResourceAsStream(path)) {
        if (in == null) {
          break;
        }
        versions.add(new Schema.Parser().parse(in));
      } catch (IOException | RuntimeException e) {
        throw new IllegalStateException("cannot read the schema version " + path, e);
      }
    }
    if (versions.isEmpty()) {
      throw new IllegalStateException(
          "no schema history for " + type + " on the classpath (" + ROOT + type + "/v1.avsc)");
    }
    return versions;
  }

  /** The versions of {@code type} by fingerprint (CRC-64-AVRO of the parsing canonical form). */
  public static Map<Long, Schema> byFingerprint(String type) {
    Map<Long, Schema> out = new LinkedHashMap<>();
    for (Schema s : versions(type)) {
      out.putIfAbsent(SchemaNormalization.parsingFingerprint64(s), s);
    }
    return out;
  }

  /** A schema store of every version of {@code type}, for Avro's message decoders. */
  static SchemaStore.Cache store(String type) {
    SchemaStore.Cache store = new SchemaStore.Cache();
    versions(type).forEach(store::addSchema);
    return store;
  }
}
