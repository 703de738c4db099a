package dev.privagg.io;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.apache.avro.Schema;
import org.junit.jupiter.api.Test;

/**
 * The build's schema check ({@link SchemaRules}) on the repository's {@code schemas/}: a change to
 * a schema that is not recorded in {@code schemas/history/}, or that an earlier version cannot read
 * or that cannot read an earlier version, fails {@code mvn verify}. The other tests show each rule
 * failing on a pair made for it.
 */
class SchemaHistoryTest {
  private static final Path SCHEMAS = Path.of("schemas");
  private static final Path HISTORY = SCHEMAS.resolve("history");
  private static final Pattern VERSION = Pattern.compile("v([1-9][0-9]*)\\.avsc");
  private static final Pattern BREAK = Pattern.compile("([A-Za-z]+) v([1-9][0-9]*): .+");

  @Test
  void everySchema_isRecorded_andCompatibleBothWaysWithEveryReleasedVersion() throws Exception {
    Map<String, Set<Integer>> breaks = forwardBreaks();
    List<String> problems = new ArrayList<>();
    Map<String, Schema> current = currentSchemas();
    for (Map.Entry<String, Schema> e : current.entrySet()) {
      problems.addAll(
          SchemaRules.check(
              e.getKey(),
              e.getValue(),
              versions(e.getKey()),
              breaks.getOrDefault(e.getKey(), Set.of())));
    }
    try (Stream<Path> dirs = Files.list(HISTORY)) {
      dirs.filter(Files::isDirectory)
          .map(d -> d.getFileName().toString())
          .filter(type -> !current.containsKey(type))
          .forEach(
              type ->
                  problems.add("schemas/history/" + type + " has no schemas/" + type + ".avsc"));
    }
    for (String type : breaks.keySet()) {
      for (int v : breaks.get(type)) {
        if (!Files.exists(HISTORY.resolve(type).resolve("v" + v + ".avsc"))) {
          problems.add("forward-breaks.txt names " + type + " v" + v + ", which is not recorded");
        }
      }
    }
    assertThat(problems).as(String.join("\n", problems)).isEmpty();
    assertThat(current)
        .containsKeys("ClientUpdate", "GlobalModel", "LedgerEntry", "RejectedUpdate");
  }

  /**
   * A released version is never edited: records on the topics carry its fingerprint, and an edit
   * (even an optional field) would make them undecodable, or let a breaking change pass by editing
   * every version alike.
   */
  @Test
  void releasedVersions_keepTheFingerprintsTheyWereReleasedWith() throws Exception {
    Map<String, String> released = new HashMap<>();
    for (String line : Files.readAllLines(HISTORY.resolve("fingerprints.txt"))) {
      if (!line.isBlank() && !line.startsWith("#")) {
        String[] f = line.trim().split("\\s+");
        released.put(f[0] + "/" + f[1] + ".avsc", f[2]);
      }
    }
    List<String> problems = new ArrayList<>();
    Set<String> recorded = new HashSet<>();
    for (String type : currentSchemas().keySet()) {
      List<Schema> versions = versions(type);
      for (int v = 1; v <= versions.size(); v++) {
        String file = type + "/v" + v + ".avsc";
        recorded.add(file);
        String now =
            String.format(
                "%016x",
                org.apache.avro.SchemaNormalization.parsingFingerprint64(versions.get(v - 1)));
        String then = released.get(file);
        if (then == null) {
          problems.add(
              "schemas/history/fingerprints.txt has no line for "
                  + file
                  + "; add: "
                  + type
                  + " v"
                  + v
                  + " "
                  + now);
        } else if (!then.equals(now)) {
          problems.add(
              "schemas/history/"
                  + file
                  + " was released with fingerprint "
                  + then
                  + " and now has "
                  + now
                  + ": restore it, and record the change as a new version instead");
        }
      }
    }
    released.keySet().stream()
        .filter(f -> !recorded.contains(f))
        .forEach(f -> problems.add("fingerprints.txt names " + f + ", which is not recorded"));
    assertThat(problems).as(String.join("\n", problems)).isEmpty();
  }

  @Test
  void classpathHistory_isTheRepositorysHistory() throws Exception {
    for (String type : currentSchemas().keySet()) {
      assertThat(SchemaHistory.versions(type)).as(type).isEqualTo(versions(type));
    }
  }

  private static final Schema V1 =
      new Schema.Parser()
          .parse(
              """
              {"type": "record", "name": "Demo", "fields": [
                {"name": "id", "type": "string"},
                {"name": "kind", "type": {"type": "enum", "name": "Kind", "symbols": ["A", "B"]}}]}
              """);

  private static Schema demo(String fields) {
    return new Schema.Parser()
        .parse("{\"type\": \"record\", \"name\": \"Demo\", \"fields\": [" + fields + "]}");
  }

  private static final String ID = "{\"name\": \"id\", \"type\": \"string\"}";
  private static final String KIND =
      "{\"name\": \"kind\", \"type\": {\"type\": \"enum\", \"name\": \"Kind\", \"symbols\": [\"A\", \"B\"]}}";

  @Test
  void fieldAddedWithoutDefault_failsBackward_andAnUnrecordedChangeIsNamed() {
    Schema changed = demo(ID + ", " + KIND + ", {\"name\": \"count\", \"type\": \"long\"}");

    List<String> problems = SchemaRules.check("Demo", changed, List.of(V1), Set.of());

    assertThat(problems)
        .anySatisfy(
            p -> assertThat(p).contains("record the change as schemas/history/Demo/v2.avsc"))
        .anySatisfy(
            p ->
                assertThat(p)
                    .contains(
                        "schemas/Demo.avsc cannot read records of Demo v1 (not backward compatible)")
                    .contains("READER_FIELD_MISSING_DEFAULT")
                    .contains("count"));
  }

  @Test
  void fieldTypeChanged_failsBothWays() {
    Schema v2 = demo("{\"name\": \"id\", \"type\": \"int\"}, " + KIND);

    List<String> problems = SchemaRules.check("Demo", v2, List.of(V1, v2), Set.of());

    assertThat(problems)
        .anySatisfy(
            p -> assertThat(p).contains("Demo v2 cannot read records of Demo v1 (not backward"))
        .anySatisfy(
            p -> assertThat(p).contains("Demo v1 cannot read records of Demo v2 (not forward"));
  }

  @Test
  void enumSymbolAdded_failsForward_unlessRecordedAsABreak() {
    Schema v2 =
        demo(
            ID
                + ", {\"name\": \"kind\", \"type\": {\"type\": \"enum\", \"name\": \"Kind\","
                + " \"symbols\": [\"A\", \"B\", \"C\"]}}");

    assertThat(SchemaRules.check("Demo", v2, List.of(V1, v2), Set.of()))
        .singleElement()
        .satisfies(
            p ->
                assertThat(p)
                    .contains("Demo v1 cannot read records of Demo v2 (not forward compatible)")
                    .contains("MISSING_ENUM_SYMBOLS")
                    .contains("forward-breaks.txt as 'Demo v2: why'"));
    assertThat(SchemaRules.check("Demo", v2, List.of(V1, v2), Set.of(2))).isEmpty();
  }

  @Test
  void optionalFieldWithDefault_isCompatibleBothWays() {
    Schema v2 =
        demo(
            ID
                + ", "
                + KIND
                + ", {\"name\": \"note\", \"type\": [\"null\", \"string\"], \"default\": null}");

    assertThat(SchemaRules.check("Demo", v2, List.of(V1, v2), Set.of())).isEmpty();
  }

  /** The current schemas by type, parsed with the shared Tensor type as the build does. */
  private static Map<String, Schema> currentSchemas() throws IOException {
    Schema.Parser parser = new Schema.Parser();
    parser.parse(SCHEMAS.resolve("Tensor.avsc").toFile());
    Map<String, Schema> out = new HashMap<>();
    out.put("Tensor", parser.getTypes().get("dev.privagg.avro.Tensor"));
    try (Stream<Path> files = Files.list(SCHEMAS)) {
      for (Path f : files.filter(p -> p.toString().endsWith(".avsc")).sorted().toList()) {
        String type = f.getFileName().toString().replace(".avsc", "");
        if (!type.equals("Tensor")) {
          out.put(type, parser.parse(f.toFile()));
        }
      }
    }
    return out;
  }

  /** schemas/history/TYPE/v1.avsc, v2.avsc, ...; a gap or a stray file is a failure. */
  private static List<Schema> versions(String type) throws IOException {
    Path dir = HISTORY.resolve(type);
    if (!Files.isDirectory(dir)) {
      return List.of();
    }
    int count;
    try (Stream<Path> files = Files.list(dir)) {
      List<String> names = files.map(p -> p.getFileName().toString()).sorted().toList();
      for (String name : names) {
        assertThat(VERSION.matcher(name).matches())
            .as("schemas/history/%s/%s: only v1.avsc, v2.avsc, ... belong there", type, name)
            .isTrue();
      }
      count = names.size();
    }
    List<Schema> versions = new ArrayList<>();
    for (int v = 1; v <= count; v++) {
      Path file = dir.resolve("v" + v + ".avsc");
      assertThat(file)
          .as("schemas/history/%s has %d versions but no v%d.avsc", type, count, v)
          .exists();
      versions.add(new Schema.Parser().parse(file.toFile()));
    }
    return versions;
  }

  private static Map<String, Set<Integer>> forwardBreaks() throws IOException {
    Map<String, Set<Integer>> out = new HashMap<>();
    for (String line : Files.readAllLines(HISTORY.resolve("forward-breaks.txt"))) {
      if (line.isBlank() || line.startsWith("#")) {
        continue;
      }
      Matcher m = BREAK.matcher(line);
      assertThat(m.matches())
          .as("forward-breaks.txt line '%s' is not 'TYPE vN: why'", line)
          .isTrue();
      out.computeIfAbsent(m.group(1), t -> new HashSet<>()).add(Integer.parseInt(m.group(2)));
    }
    return out;
  }
}
