package dev.privagg.secagg;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.privagg.secagg.ClientSession.RoutedShare;
import java.io.IOException;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Pins {@code src/test/resources/secagg/vectors-v1.json}, the vectors other implementations test
 * against: Java must still compute exactly the published file. A change here is a change of the
 * wire protocol (or of the file's format, which is kept stable). To regenerate after a deliberate
 * change, run {@link SecAggVectors#main}.
 */
class SecAggVectorsTest {
  private static final HexFormat HEX = HexFormat.of();

  @Test
  void publishedVectors_areWhatJavaComputesToday() throws IOException {
    assertThat(Files.readString(SecAggVectors.FILE)).isEqualTo(SecAggVectors.json());
    // The Python client's tests read their own copy (its package is tested on its own).
    assertThat(
            Files.readString(
                java.nio.file.Path.of("clients/python/tests/data/secagg-vectors-v1.json")))
        .isEqualTo(SecAggVectors.json());
  }

  /**
   * The vectors' round is computed from the primitives; the client and job classes must reach the
   * same bytes from the same keys: the masked inputs, and with client 2 dropped, the correction.
   */
  @Test
  void clientSessionsAndUnmasking_reproduceTheVectorsRound() throws IOException {
    JsonNode vectors = new ObjectMapper().readTree(SecAggVectors.FILE.toFile());
    JsonNode context = vectors.get("context");
    RoundContext ctx =
        new RoundContext(
            context.get("jobId").asText(),
            context.get("round").asLong(),
            HEX.parseHex(context.get("session").asText()));
    JsonNode round = vectors.get("round");
    int degree = round.get("degree").asInt();
    int threshold = round.get("threshold").asInt();
    int[] permutation = ints(round.get("permutation"));
    List<ClientSession> clients = new ArrayList<>();
    List<AdvertisedKeys> roster = new ArrayList<>();
    JsonNode signingKeys = vectors.get("consistency").get("signingPrivateKeys");
    for (JsonNode client : vectors.get("clients")) {
      ClientSession session =
          new ClientSession(
              ctx,
              "vectors-" + client.get("index").asInt(),
              // No rates hold the vectors' round (3 clients, the complete graph at t = 2: no rates
              // give 3 clients a graph since a dealer may be rejected once): it tests the bytes.
              null,
              SecAggCohort.seeded(client.get("index").asInt()),
              X25519Keys.fromPrivateKey(bytes(client, "encryptionPrivateKey")),
              MaskKeys.fromPrivateKey(bytes(client, "maskPrivateKey")),
              bytes(client, "selfMaskSeed"),
              SigningKeys.fromPrivateKey(
                  HEX.parseHex(signingKeys.get(client.get("index").asInt()).asText())));
      clients.add(session);
      roster.add(session.advertise());
    }
    Map<Integer, List<RoutedShare>> routed = new HashMap<>();
    for (int u = 0; u < clients.size(); u++) {
      for (ClientSession.EncryptedShare share :
          clients.get(u).onRoster(roster, degree, threshold, permutation)) {
        routed
            .computeIfAbsent(share.recipient(), v -> new ArrayList<>())
            .add(new RoutedShare(u, share.ciphertext(), clients.get(u).commitments()));
      }
    }
    int[] everyone = java.util.stream.IntStream.range(0, clients.size()).toArray();
    for (int u = 0; u < clients.size(); u++) {
      assertThat(clients.get(u).onShares(routed.get(u))).isEmpty();
      assertThat(clients.get(u).rejectedSenders()).isEmpty();
      clients.get(u).onConfirmed(everyone, new int[0][]);
      long[] units = longs(round.get("units").get(u));
      assertThat(HEX.formatHex(clients.get(u).maskedInput(units)))
          .isEqualTo(round.get("maskedInputs").get(u).asText());
    }

    JsonNode dropout = round.get("dropout");
    int[] shared = ints(dropout.get("shared"));
    int[] masked = ints(dropout.get("maskedInput"));
    Map<Integer, byte[]> signatures = new HashMap<>();
    for (int u : masked) {
      signatures.put(u, clients.get(u).signSurvivors(shared, masked));
    }
    Map<Integer, UnmaskShares> responses = new HashMap<>();
    for (int u : masked) {
      responses.put(u, clients.get(u).unmask(signatures));
    }
    int[][] neighbourhoods = new int[clients.size()][];
    for (int u = 0; u < clients.size(); u++) {
      neighbourhoods[u] = HararyGraph.ofNeighbourhoodSize(degree, permutation).neighbourhood(u);
    }
    MaskCorrection correction =
        Unmasking.reconstruct(
                ctx,
                roster,
                neighbourhoods,
                threshold,
                shared,
                new int[0][],
                masked,
                dealer -> clients.get(dealer).commitments(),
                responses)
            .correction()
            .orElseThrow();

    List<String> terms = new ArrayList<>();
    for (MaskCorrection.Term term : correction.terms()) {
      terms.add(HEX.formatHex(term.key()) + " " + term.sign());
    }
    List<String> expected = new ArrayList<>();
    for (JsonNode term : dropout.get("correctionTerms")) {
      expected.add(term.get("key").asText() + " " + term.get("sign").asInt());
    }
    assertThat(terms).isEqualTo(expected);
  }

  private static byte[] bytes(JsonNode node, String field) {
    return HEX.parseHex(node.get(field).asText());
  }

  private static int[] ints(JsonNode array) {
    int[] out = new int[array.size()];
    for (int i = 0; i < out.length; i++) {
      out[i] = array.get(i).asInt();
    }
    return out;
  }

  private static long[] longs(JsonNode array) {
    long[] out = new long[array.size()];
    for (int i = 0; i < out.length; i++) {
      out[i] = array.get(i).asLong();
    }
    return out;
  }
}
