package dev.privagg.spec;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.commons.text.similarity.LevenshteinDistance;

/**
 * One mapping of a YAML job spec, read key by key. It remembers which keys were read so that {@link
 * #finish()} can refuse unknown ones (a misspelt key must not silently take a default), and every
 * error names the full dotted key.
 */
final class YamlSection {
  private static final Pattern DURATION = Pattern.compile("(\\d+)\\s*(ms|s|m|h)");

  private final String source;
  private final String path;
  private final JsonNode node;
  private final Set<String> read = new TreeSet<>();

  YamlSection(String source, String path, JsonNode node) {
    this.source = source;
    this.path = path;
    this.node = node;
    if (node == null || !node.isObject()) {
      throw fail("", "must be a mapping of keys to values, was " + describe(node));
    }
  }

  String key(String name) {
    return path.isEmpty() ? name : path + "." + name;
  }

  /** A failure of another section's key, found while reading this one. */
  SpecException failAt(String fullKey, String problem) {
    return new SpecException(source, fullKey, problem);
  }

  SpecException fail(String name, String problem) {
    return new SpecException(
        source, name.isEmpty() ? (path.isEmpty() ? "spec" : path) : key(name), problem);
  }

  boolean has(String name) {
    read.add(name);
    return node.hasNonNull(name);
  }

  /**
   * The value of a required key. When it is missing but an unread key resembles it, the error names
   * that key instead: a misspelling, not an omission.
   */
  private JsonNode required(String name, String hint) {
    if (!has(name)) {
      String misspelt = closest(name, unreadKeys());
      if (misspelt != null) {
        throw fail(misspelt, "is not a known key; did you mean " + key(name) + "?");
      }
      throw fail(name, "is required; " + hint);
    }
    return node.get(name);
  }

  /** The unread key that resembles {@code name} (a misspelling of it), or null. */
  String misspelling(String name) {
    return closest(name, unreadKeys());
  }

  YamlSection section(String name, String hint) {
    return new YamlSection(source, key(name), required(name, hint));
  }

  YamlSection optionalSection(String name) {
    return has(name) ? new YamlSection(source, key(name), node.get(name)) : null;
  }

  String string(String name, String hint) {
    JsonNode value = required(name, hint);
    if (!value.isTextual() || value.asText().isBlank()) {
      throw fail(name, "must be a non-empty string; " + hint + ", was " + describe(value));
    }
    return value.asText();
  }

  String string(String name, String fallback, String hint) {
    return has(name) ? string(name, hint) : fallback;
  }

  String choice(String name, String fallback, List<String> allowed) {
    String value = has(name) ? string(name, "one of " + allowed) : fallback;
    if (!allowed.contains(value)) {
      throw fail(name, "must be one of " + allowed + ", was '" + value + "'");
    }
    return value;
  }

  /** A number; YAML's .inf and the strings inf/Infinity read as +infinity. */
  double number(String name, String hint) {
    JsonNode value = required(name, hint);
    if (value.isNumber()) {
      return value.asDouble();
    }
    if (value.isTextual()) {
      String text = value.asText().trim();
      if (Set.of(".inf", "inf", "Infinity", "+.inf", ".Inf", ".INF").contains(text)) {
        return Double.POSITIVE_INFINITY;
      }
      try {
        return Double.parseDouble(text);
      } catch (NumberFormatException e) {
        // fall through to the message below
      }
    }
    throw fail(name, "must be a number; " + hint + ", was " + describe(value));
  }

  double number(String name, double fallback, String hint) {
    return has(name) ? number(name, hint) : fallback;
  }

  long integer(String name, String hint) {
    JsonNode value = required(name, hint);
    if (!value.canConvertToLong() || !value.isIntegralNumber()) {
      throw fail(name, "must be a whole number; " + hint + ", was " + describe(value));
    }
    return value.asLong();
  }

  long integer(String name, long fallback, String hint) {
    return has(name) ? integer(name, hint) : fallback;
  }

  /** A whole number in [min, max], or {@code fallback} when absent. */
  long integerIn(String name, long fallback, long min, long max, String hint) {
    long value = integer(name, fallback, hint);
    if (value < min || value > max) {
      throw fail(name, "must be in [" + min + ", " + max + "] (" + hint + "), was " + value);
    }
    return value;
  }

  boolean bool(String name, boolean fallback) {
    if (!has(name)) {
      return fallback;
    }
    JsonNode value = node.get(name);
    if (!value.isBoolean()) {
      throw fail(name, "must be true or false, was " + describe(value));
    }
    return value.asBoolean();
  }

  /** A duration such as 500ms, 30s, 2m or 1h. */
  long durationMillis(String name, String hint) {
    JsonNode value = required(name, hint);
    Matcher m = DURATION.matcher(value.asText().trim());
    if (!value.isTextual() || !m.matches()) {
      throw fail(name, "must be a duration such as 500ms, 30s, 2m or 1h, was " + describe(value));
    }
    long unit =
        switch (m.group(2)) {
          case "ms" -> 1;
          case "s" -> 1000;
          case "m" -> 60_000;
          default -> 3_600_000;
        };
    try {
      return Math.multiplyExact(Long.parseLong(m.group(1)), unit);
    } catch (NumberFormatException | ArithmeticException e) {
      throw fail(name, "is too long to count in milliseconds, was " + describe(value));
    }
  }

  /**
   * An instant in UTC as epoch milliseconds: an ISO-8601 string such as 2026-12-01T09:00:00Z, or
   * the same unquoted (a YAML timestamp, which the YAML reader turns into epoch milliseconds).
   */
  long instantMillis(String name, String hint) {
    JsonNode value = required(name, hint);
    if (value.isIntegralNumber()) {
      return value.asLong();
    }
    try {
      if (value.isTextual()) {
        return java.time.Instant.parse(value.asText().trim()).toEpochMilli();
      }
    } catch (java.time.format.DateTimeParseException e) {
      // Falls through to the message below.
    }
    throw fail(
        name,
        "must be an instant in UTC such as 2026-12-01T09:00:00Z; "
            + hint
            + ", was "
            + describe(value));
  }

  List<YamlSection> sections(String name, String hint) {
    JsonNode value = required(name, hint);
    if (!value.isArray() || value.isEmpty()) {
      throw fail(name, "must be a non-empty list; " + hint + ", was " + describe(value));
    }
    List<YamlSection> out = new ArrayList<>();
    for (int i = 0; i < value.size(); i++) {
      out.add(new YamlSection(source, key(name) + "[" + i + "]", value.get(i)));
    }
    return out;
  }

  int[] intList(String name, String hint) {
    JsonNode value = required(name, hint);
    if (!value.isArray() || value.isEmpty()) {
      throw fail(
          name, "must be a non-empty list of whole numbers; " + hint + ", was " + describe(value));
    }
    int[] out = new int[value.size()];
    for (int i = 0; i < out.length; i++) {
      JsonNode item = value.get(i);
      if (!item.isInt() || item.asInt() < 1) {
        throw fail(name, "entries must be whole numbers >= 1; " + hint + ", had " + describe(item));
      }
      out[i] = item.asInt();
    }
    return out;
  }

  /** A non-empty list of finite numbers. */
  double[] numberList(String name, String hint) {
    JsonNode value = required(name, hint);
    if (!value.isArray() || value.isEmpty()) {
      throw fail(name, "must be a non-empty list of numbers; " + hint + ", was " + describe(value));
    }
    double[] out = new double[value.size()];
    for (int i = 0; i < out.length; i++) {
      JsonNode item = value.get(i);
      if (!item.isNumber() || !Double.isFinite(item.asDouble())) {
        throw fail(name, "entries must be finite numbers; " + hint + ", had " + describe(item));
      }
      out[i] = item.asDouble();
    }
    return out;
  }

  /** A non-empty list of non-empty strings. */
  List<String> stringList(String name, String hint) {
    JsonNode value = required(name, hint);
    if (!value.isArray() || value.isEmpty()) {
      throw fail(name, "must be a non-empty list of names; " + hint + ", was " + describe(value));
    }
    List<String> out = new ArrayList<>();
    for (JsonNode item : value) {
      if (!item.isTextual() || item.asText().isBlank()) {
        throw fail(name, "entries must be names; " + hint + ", had " + describe(item));
      }
      out.add(item.asText());
    }
    return out;
  }

  /** Refuses keys that were never read: most often a typo. */
  void finish() {
    List<String> unknown = unreadKeys();
    if (unknown.isEmpty()) {
      return;
    }
    String name = unknown.get(0);
    String known = closest(name, read);
    throw fail(
        name,
        known != null
            ? "is not a known key; did you mean " + key(known) + "?"
            : "is not a known key; known keys here are "
                + read
                + " (remove it or fix its spelling)");
  }

  private List<String> unreadKeys() {
    List<String> unread = new ArrayList<>();
    for (Iterator<String> it = node.fieldNames(); it.hasNext(); ) {
      String name = it.next();
      if (!read.contains(name)) {
        unread.add(name);
      }
    }
    return unread;
  }

  /**
   * The candidate that {@code name} most resembles, or null: equal ignoring case, or within a
   * case-insensitive Levenshtein distance of 1 (names of up to 4 characters) or 2 (longer names).
   */
  private static String closest(String name, Collection<String> candidates) {
    String best = null;
    int bestDistance = Integer.MAX_VALUE;
    for (String candidate : candidates) {
      int limit = Math.min(name.length(), candidate.length()) <= 4 ? 1 : 2;
      int distance =
          new LevenshteinDistance(limit)
              .apply(name.toLowerCase(Locale.ROOT), candidate.toLowerCase(Locale.ROOT));
      if (distance >= 0 && distance < bestDistance) {
        best = candidate;
        bestDistance = distance;
      }
    }
    return best;
  }

  private static String describe(JsonNode value) {
    if (value == null || value.isNull() || value.isMissingNode()) {
      return "empty";
    }
    return value.isTextual() ? "'" + value.asText() + "'" : value.toString();
  }
}
