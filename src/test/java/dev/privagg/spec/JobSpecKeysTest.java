package dev.privagg.spec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

/**
 * The Python client refuses unknown spec keys by {@code job-spec-keys.json}, which it ships; this
 * test keeps that file equal to what {@link JobSpecReader} knows (issue 37: {@code from_spec} took
 * {@code expectedClient}, which {@code privagg run} refuses).
 *
 * <p>The keys are measured, not listed by hand: for every mapping of every spec in the corpus, a
 * key no section knows is added and the spec parsed again; the reader refuses it naming the keys it
 * knows there ({@link YamlSection#finish()}). A section's keys are the union over the corpus, list
 * items sharing one section ({@code model.tensors[]}). Keys the reader reads only in some branch (a
 * noise source, a sampling mode) need a spec in the corpus that takes that branch: the second test
 * finds every key the reader's code names and fails for one no spec reaches.
 */
class JobSpecKeysTest {
  static final Path KEYS_FILE = Path.of("clients/python/privagg_client/schemas/job-spec-keys.json");
  private static final List<Path> CORPUS_FOLDERS =
      List.of(
          Path.of("jobs"), Path.of("examples/pytorch"), Path.of("src/test/resources/spec-keys"));
  // Far from every key, so that the reader lists the keys it knows instead of a near one.
  private static final String PROBE = "zzNoSuchKeyzz";
  private static final Pattern KNOWN =
      Pattern.compile("is not a known key; known keys here are \\[(.*)] \\(remove it");
  private static final Pattern READ_CALL =
      Pattern.compile(
          "\\.(has|section|optionalSection|sections|string|choice|number|integer|integerIn|bool"
              + "|durationMillis|intList|numberList|stringList)\\(\\s*\"([A-Za-z]+)\"");
  private static final ObjectMapper JSON = new ObjectMapper();

  private static SortedMap<String, SortedSet<String>> derived;

  @BeforeAll
  static void deriveFromTheCorpus() throws IOException {
    derived = new TreeMap<>();
    for (Path spec : corpus()) {
      derive(spec, derived);
    }
  }

  @Test
  void theKeysFileOfThePythonClient_holdsTheKeysTheReaderKnows() throws IOException {
    JsonNode shipped = Files.exists(KEYS_FILE) ? JSON.readTree(KEYS_FILE.toFile()) : null;
    assertThat(shipped == null ? null : shipped.get("sections"))
        .as("%s disagrees with JobSpecReader; replace it with:%n%s", KEYS_FILE, render(derived))
        .isEqualTo(JSON.valueToTree(derived));
  }

  @Test
  void everyKeyTheReadersCodeNames_isReachedBySomeSpecOfTheCorpus() throws IOException {
    SortedSet<String> reached = new TreeSet<>();
    derived.values().forEach(reached::addAll);
    SortedSet<String> named = new TreeSet<>();
    try (Stream<Path> sources = Files.list(Path.of("src/main/java/dev/privagg/spec"))) {
      for (Path source : sources.filter(p -> p.toString().endsWith(".java")).toList()) {
        Matcher m = READ_CALL.matcher(Files.readString(source));
        while (m.find()) {
          named.add(m.group(2));
        }
      }
    }
    named.removeAll(reached);
    assertThat(named)
        .as(
            "keys the spec reader reads but no spec of %s reaches (add a spec that sets them,"
                + " or that takes the branch that reads them)",
            CORPUS_FOLDERS)
        .isEmpty();
  }

  private static List<Path> corpus() throws IOException {
    List<Path> specs = new ArrayList<>();
    for (Path folder : CORPUS_FOLDERS) {
      try (Stream<Path> files = Files.list(folder)) {
        files.filter(f -> f.toString().endsWith(".yaml")).sorted().forEach(specs::add);
      }
    }
    return specs;
  }

  /** Adds the keys the reader knows in each mapping of {@code spec} to {@code keys}. */
  private static void derive(Path spec, SortedMap<String, SortedSet<String>> keys)
      throws IOException {
    String text = Files.readString(spec);
    InitFiles initFiles = InitFiles.relativeTo(spec.toAbsolutePath().getParent());
    for (List<Object> at : mappings(load(text), new ArrayList<>(), new ArrayList<>())) {
      Object tree = load(text);
      mappingAt(tree, at).put(PROBE, 1);
      String key = dotted(at, false) + (at.isEmpty() ? "" : ".") + PROBE;
      String prefix = spec + ": " + key + " ";
      try {
        JobSpecReader.parse(spec.toString(), new Yaml().dump(tree), initFiles);
        fail(
            "%s: the reader takes any key at %s (user-chosen names?): job-spec-keys.json cannot"
                + " describe such a section yet",
            spec, dotted(at, true));
      } catch (SpecException e) {
        Matcher m = KNOWN.matcher(e.getMessage());
        if (!e.getMessage().startsWith(prefix) || !m.find()) {
          fail("%s: %s was not refused as unknown but with: %s", spec, key, e.getMessage());
        }
        SortedSet<String> section = keys.computeIfAbsent(dotted(at, true), s -> new TreeSet<>());
        for (String known : m.group(1).split(", ")) {
          section.add(known);
        }
      }
    }
  }

  private static Object load(String text) {
    return new Yaml(new SafeConstructor(new LoaderOptions())).load(text);
  }

  /** The paths (keys and list indices) of every mapping in {@code node}, itself included. */
  @SuppressWarnings("unchecked")
  private static List<List<Object>> mappings(Object node, List<Object> at, List<List<Object>> out) {
    if (node instanceof Map<?, ?> map) {
      out.add(List.copyOf(at));
      for (Map.Entry<String, Object> e : ((Map<String, Object>) map).entrySet()) {
        at.add(e.getKey());
        mappings(e.getValue(), at, out);
        at.remove(at.size() - 1);
      }
    } else if (node instanceof List<?> list) {
      for (int i = 0; i < list.size(); i++) {
        at.add(i);
        mappings(list.get(i), at, out);
        at.remove(at.size() - 1);
      }
    }
    return out;
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> mappingAt(Object tree, List<Object> at) {
    Object node = tree;
    for (Object step : at) {
      node =
          step instanceof Integer i
              ? ((List<Object>) node).get(i)
              : ((Map<String, Object>) node).get(step);
    }
    return (Map<String, Object>) node;
  }

  /** A path as the reader names it ({@code model.tensors[0]}), or with {@code []} for indices. */
  private static String dotted(List<Object> at, boolean anyItem) {
    StringBuilder out = new StringBuilder();
    for (Object step : at) {
      if (step instanceof Integer i) {
        out.append(anyItem ? "[]" : "[" + i + "]");
      } else {
        out.append(out.isEmpty() ? "" : ".").append(step);
      }
    }
    return out.toString();
  }

  static String render(SortedMap<String, SortedSet<String>> sections) throws IOException {
    Map<String, Object> file = new LinkedHashMap<>();
    file.put(
        "about",
        "The keys privagg's job spec reader (src/main/java/dev/privagg/spec) knows in each section"
            + " of a spec, by dotted path (\"\" is the top level, [] any item of a list). The"
            + " Python client refuses other keys. Generated by JobSpecKeysTest, which prints this"
            + " file anew when the reader changes.");
    file.put("sections", sections);
    return JSON.writerWithDefaultPrettyPrinter().writeValueAsString(file) + "\n";
  }
}
