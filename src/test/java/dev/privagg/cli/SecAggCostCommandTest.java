package dev.privagg.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@code privagg secagg-cost} at tiny dimensions: its fields and that they agree with each other
 * and with the wire format (docs/secure-aggregation.md). Not a test of speed.
 */
class SecAggCostCommandTest {
  private final ObjectMapper json = new ObjectMapper();

  @Test
  void json_givesBytesCpuAndGraph_consistentWithTheWireFormat() throws Exception {
    CliTest.Run run =
        CliTest.run(
            "secagg-cost",
            "--dimension",
            "64,1000",
            "--clients",
            "10",
            "--dropout-rate",
            "0.1",
            "--rounds",
            "1",
            "--json");

    assertThat(run.exitCode()).as(run.err()).isZero();
    List<JsonNode> results = new ArrayList<>();
    for (String line : run.out().strip().split("\n")) {
      results.add(json.readTree(line));
    }
    assertThat(results).hasSize(2);
    long[] maskedInputOverhead = new long[2];
    long[] plaintextOverhead = new long[2];
    for (int i = 0; i < 2; i++) {
      JsonNode r = results.get(i);
      int d = r.get("dimension").asInt();
      assertThat(d).isEqualTo(i == 0 ? 64 : 1000);
      assertThat(r.get("clients").asInt()).isEqualTo(10);
      assertThat(r.get("dropped").asInt()).isEqualTo(1);
      assertThat(r.get("survivors").asInt()).isEqualTo(9);
      int k = r.get("neighbourhoodSize").asInt();
      int t = r.get("threshold").asInt();
      assertThat(k).isBetween(3, 10);
      assertThat(t).isBetween(2, k);

      JsonNode b = r.get("bytesPerClient");
      maskedInputOverhead[i] = b.get("maskedInputUp").asLong() - 8L * d;
      plaintextOverhead[i] = b.get("plaintextUp").asLong() - 4L * d;
      assertThat(maskedInputOverhead[i])
          .as("masked input: 8d bytes and a header")
          .isBetween(1L, 80L);
      assertThat(plaintextOverhead[i]).as("plaintext update: 4d bytes and a header").isPositive();
      // A sealed pair of shares is 92 bytes, one for each of the k - 1 neighbours; the
      // commitments of both polynomials are 64 (t - 1) bytes, sent once and routed with each.
      long sealed = 92L * (k - 1);
      long commitments = 64L * (t - 1);
      assertThat(b.get("shareKeysUp").asLong()).isGreaterThan(sealed + commitments);
      assertThat(b.get("sharesDown").asLong()).isGreaterThan(sealed + (k - 1) * commitments);
      assertThat(b.get("secureUp").asLong())
          .isEqualTo(
              b.get("advertiseUp").asLong()
                  + b.get("shareKeysUp").asLong()
                  + b.get("maskedInputUp").asLong()
                  + b.get("signatureUp").asLong()
                  + b.get("unmaskUp").asLong());
      assertThat(b.get("secureDown").asLong())
          .isEqualTo(
              b.get("openedDown").asLong()
                  + b.get("rosterDown").asLong()
                  + b.get("sharesDown").asLong()
                  + b.get("survivorsDown").asLong()
                  + b.get("consistencyDown").asLong());
      assertThat(b.get("expansionUp").asDouble())
          .isCloseTo(b.get("secureUp").asDouble() / b.get("plaintextUp").asDouble(), within(1e-12));
      assertThat(b.get("expansionTotal").asDouble())
          .isCloseTo(
              (b.get("secureUp").asDouble() + b.get("secureDown").asDouble())
                  / b.get("plaintextUp").asDouble(),
              within(1e-12));

      JsonNode c = r.get("clientCpuMillis");
      for (String phase :
          List.of(
              "plaintextEncode",
              "advertise",
              "onRoster",
              "onShares",
              "quantize",
              "maskedInput",
              "unmask",
              "encode",
              "secureTotal")) {
        assertThat(c.get(phase).asDouble()).as(phase).isGreaterThanOrEqualTo(0);
      }
      assertThat(c.get("secureTotal").asDouble())
          .isGreaterThanOrEqualTo(c.get("maskedInput").asDouble());

      JsonNode s = r.get("serverCpuMillis");
      assertThat(s.get("signatures").asDouble()).as("the job checks each signature").isPositive();
      // Each survivor's self-mask, and the one dropped client's mask with each neighbour.
      assertThat(s.get("correctionTerms").asInt()).isEqualTo(9 + (k - 1));
      assertThat(s.get("secureTotal").asDouble())
          .isCloseTo(
              s.get("maskedSum").asDouble()
                  + s.get("signatures").asDouble()
                  + s.get("reconstruct").asDouble()
                  + s.get("correction").asDouble(),
              within(1e-9));
    }
    assertThat(maskedInputOverhead[1])
        .as("the header does not grow with d (both lengths take a 2-byte varint)")
        .isEqualTo(maskedInputOverhead[0]);
    assertThat(run.err()).contains("d 64, round 1 of 1: 9 of 9 masked inputs");
  }

  @Test
  void text_namesTheExpansionAndTheGraph() {
    CliTest.Run run =
        CliTest.run("secagg-cost", "--dimension", "16", "--clients", "6", "--rounds", "1");

    assertThat(run.exitCode()).as(run.err()).isZero();
    assertThat(run.out())
        .contains("d 16, m 6 (0 dropped after phase 2)")
        .contains("expansion")
        .contains("threshold");
  }

  @Test
  void ratesBeyondWhatAGraphTolerates_areRefusedNamingTheFlags() {
    CliTest.Run run =
        CliTest.run(
            "secagg-cost",
            "--dimension",
            "16",
            "--dropout-rate",
            "0.5",
            "--adversarial-client-rate",
            "0.5");

    assertThat(run.exitCode()).isEqualTo(2);
    assertThat(run.err())
        .contains("--dropout-rate + --adversarial-client-rate must be <= 0.9, was 1.0");
  }

  @Test
  void help_listsTheFlags() {
    CliTest.Run run = CliTest.run("secagg-cost", "--help");

    assertThat(run.exitCode()).isZero();
    assertThat(run.out())
        .contains("--dimension")
        .contains("--clients")
        .contains("--dropout-rate")
        .contains("--rounds")
        .contains("--json");
  }
}
