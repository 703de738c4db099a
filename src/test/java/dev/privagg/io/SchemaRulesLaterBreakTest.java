package dev.privagg.io;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Set;
import org.apache.avro.Schema;
import org.junit.jupiter.api.Test;

/**
 * Found in review: one recorded forward break hides a later, unrelated one against older readers.
 */
class SchemaRulesLaterBreakTest {
  private static Schema demo(String fields) {
    return new Schema.Parser()
        .parse("{\"type\": \"record\", \"name\": \"Demo\", \"fields\": [" + fields + "]}");
  }

  private static String kind(String symbols) {
    return "{\"name\": \"kind\", \"type\": {\"type\": \"enum\", \"name\": \"Kind\", \"symbols\": ["
        + symbols
        + "]}}";
  }

  @Test
  void removingAFieldV1Requires_isAForwardBreak_evenAfterAnEnumBreakInV2() {
    Schema v1 = demo(kind("\"A\", \"B\"") + ", {\"name\": \"x\", \"type\": \"string\"}");
    Schema v2 =
        demo(
            kind("\"A\", \"B\", \"C\"")
                + ", {\"name\": \"x\", \"type\": \"string\", \"default\": \"\"}");
    Schema v3 = demo(kind("\"A\", \"B\", \"C\""));

    // v2 is recorded (a new enum symbol); v3 drops x, which v1 readers need: no v3 record reads.
    List<String> problems = SchemaRules.check("Demo", v3, List.of(v1, v2, v3), Set.of(2));

    assertThat(problems)
        .anySatisfy(p -> assertThat(p).contains("Demo v1 cannot read records of Demo v3"));
  }
}
