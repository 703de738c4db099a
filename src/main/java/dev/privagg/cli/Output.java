package dev.privagg.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.PrintWriter;
import java.util.LinkedHashMap;
import java.util.Map;

/** Prints a command's result as JSON (for machines) or as the given text (for people). */
final class Output {
  private static final ObjectMapper JSON = new ObjectMapper();

  private Output() {}

  /**
   * Prints {@code fields} as one JSON object when {@code json} is set, else {@code text}. Infinite
   * values are written as the strings "Infinity" and "-Infinity"; JSON has no literal for them.
   */
  static void print(PrintWriter out, boolean json, Map<String, ?> fields, String text) {
    if (json) {
      line(out, fields);
    } else {
      out.println(text);
      out.flush();
    }
  }

  /**
   * Prints {@code fields} as one JSON object on one line and flushes: a command that streams
   * progress prints one such line per event, so a reader can act on each as it comes.
   */
  static void line(PrintWriter out, Map<String, ?> fields) {
    try {
      out.println(JSON.writeValueAsString(fields));
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("cannot write JSON for " + fields, e);
    }
    out.flush();
  }

  /** A number for JSON: finite numbers as they are, NaN as null (absent), infinities as strings. */
  static Object number(double value) {
    if (Double.isNaN(value)) {
      return null;
    }
    return Double.isInfinite(value) ? (value > 0 ? "Infinity" : "-Infinity") : value;
  }

  /** An insertion-ordered map from alternating keys and values; values may be null. */
  static Map<String, Object> fields(Object... keysAndValues) {
    Map<String, Object> map = new LinkedHashMap<>();
    for (int i = 0; i < keysAndValues.length; i += 2) {
      map.put((String) keysAndValues[i], keysAndValues[i + 1]);
    }
    return map;
  }
}
