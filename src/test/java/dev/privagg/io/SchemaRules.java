package dev.privagg.io;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.apache.avro.Schema;
import org.apache.avro.SchemaCompatibility;
import org.apache.avro.SchemaCompatibility.Incompatibility;
import org.apache.avro.SchemaCompatibility.SchemaCompatibilityType;

/**
 * The rule every schema change must pass (checked in the build by {@link SchemaHistoryTest}): the
 * current {@code schemas/TYPE.avsc} is the last version in {@code schemas/history/TYPE/}, and every
 * version can read the records of every earlier one (backward) and every earlier one can read its
 * records (forward), per Avro's {@link SchemaCompatibility#checkReaderWriterCompatibility}. A
 * forward break is allowed only where {@code schemas/history/forward-breaks.txt} records it.
 */
final class SchemaRules {
  private SchemaRules() {}

  /**
   * What is wrong with {@code type}'s history; empty when nothing is.
   *
   * @param current the schema in {@code schemas/TYPE.avsc}
   * @param versions v1, v2, ... from {@code schemas/history/TYPE/}
   * @param forwardBreaks the version numbers recorded as accepted forward breaks
   */
  static List<String> check(
      String type, Schema current, List<Schema> versions, Set<Integer> forwardBreaks) {
    List<String> problems = new ArrayList<>();
    if (versions.isEmpty()) {
      problems.add(
          type
              + ": schemas/history/"
              + type
              + "/v1.avsc is missing; copy schemas/"
              + type
              + ".avsc there (self-contained: Schema.toString(true))");
      return problems;
    }
    List<Schema> all = new ArrayList<>(versions);
    List<String> names = new ArrayList<>();
    for (int v = 1; v <= versions.size(); v++) {
      names.add(type + " v" + v);
    }
    if (!current.equals(versions.get(versions.size() - 1))) {
      int next = versions.size() + 1;
      problems.add(
          "schemas/"
              + type
              + ".avsc differs from schemas/history/"
              + type
              + "/v"
              + versions.size()
              + ".avsc: record the change as schemas/history/"
              + type
              + "/v"
              + next
              + ".avsc (a self-contained copy) before it is released");
      all.add(current);
      names.add("schemas/" + type + ".avsc");
    }
    for (int j = 1; j < all.size(); j++) {
      if (all.get(j).equals(all.get(j - 1))) {
        problems.add(names.get(j) + " repeats " + names.get(j - 1) + "; delete it");
      }
      for (int i = 0; i < j; i++) {
        String backward = incompatibility(all.get(j), all.get(i));
        if (backward != null) {
          problems.add(
              names.get(j)
                  + " cannot read records of "
                  + names.get(i)
                  + " (not backward compatible): "
                  + backward
                  + "; give new fields a default and never remove one without a default");
        }
        String forward = incompatibility(all.get(i), all.get(j));
        if (forward != null && !excused(all, forwardBreaks, i, j)) {
          problems.add(
              names.get(i)
                  + " cannot read records of "
                  + names.get(j)
                  + " (not forward compatible): "
                  + forward
                  + "; give added fields defaults, or, if older privagg versions must refuse"
                  + " these records, record it in schemas/history/forward-breaks.txt as '"
                  + type
                  + " v"
                  + (j + 1)
                  + ": why'");
        }
      }
    }
    return problems;
  }

  /**
   * Whether every reason {@code all[i]} cannot read {@code all[j]} (kind and place) is one a
   * recorded forward break between them brought: the break of version k (1-based) is what version
   * k-1 cannot read of version k. A recorded break excuses only itself, never an unrelated change
   * near it.
   */
  private static boolean excused(List<Schema> all, Set<Integer> forwardBreaks, int i, int j) {
    Set<String> recorded = new java.util.HashSet<>();
    for (int k = i + 2; k <= j + 1; k++) {
      if (forwardBreaks.contains(k)) {
        recorded.addAll(reasons(all.get(k - 2), all.get(k - 1)));
      }
    }
    return !recorded.isEmpty() && recorded.containsAll(reasons(all.get(i), all.get(j)));
  }

  /** The kinds and places of {@code reader}'s failures to read {@code writer}'s records. */
  private static Set<String> reasons(Schema reader, Schema writer) {
    Set<String> out = new java.util.HashSet<>();
    for (Incompatibility x :
        SchemaCompatibility.checkReaderWriterCompatibility(reader, writer)
            .getResult()
            .getIncompatibilities()) {
      out.add(x.getType() + " at " + x.getLocation());
    }
    return out;
  }

  /** Why {@code reader} cannot read what {@code writer} wrote, or null when it can. */
  private static String incompatibility(Schema reader, Schema writer) {
    SchemaCompatibility.SchemaPairCompatibility result =
        SchemaCompatibility.checkReaderWriterCompatibility(reader, writer);
    if (result.getType() == SchemaCompatibilityType.COMPATIBLE) {
      return null;
    }
    List<String> parts = new ArrayList<>();
    for (Incompatibility i : result.getResult().getIncompatibilities()) {
      parts.add(i.getType() + " at " + i.getLocation() + " (" + i.getMessage() + ")");
    }
    return String.join(", ", parts);
  }
}
