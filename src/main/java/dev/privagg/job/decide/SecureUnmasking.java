package dev.privagg.job.decide;

import dev.privagg.avro.RevealedShare;
import dev.privagg.io.AvroCodec;
import dev.privagg.io.Float32;
import dev.privagg.job.SecureRoundState;
import dev.privagg.secagg.AdvertisedKeys;
import dev.privagg.secagg.HararyGraph;
import dev.privagg.secagg.MaskCorrection;
import dev.privagg.secagg.RoundContext;
import dev.privagg.secagg.RoundGraph;
import dev.privagg.secagg.ThreatModel;
import dev.privagg.secagg.UnmaskShares;
import dev.privagg.secagg.Unmasking;
import dev.privagg.spec.JobSpec;
import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The decider's cryptography of a secure round, over the pure {@code dev.privagg.secagg} classes:
 * the neighbour graph a roster gets, and the mask correction its unmask shares give.
 */
final class SecureUnmasking {
  private SecureUnmasking() {}

  /** The graph of the round's fixed roster ({@link RoundGraph}); null when none is feasible. */
  static RoundGraph graph(JobSpec spec, SecureRoundState s) {
    return RoundGraph.choose(context(spec, s), roster(s), threatModel(spec)).orElse(null);
  }

  static RoundContext context(JobSpec spec, SecureRoundState s) {
    return new RoundContext(spec.jobId(), s.round, s.session);
  }

  /** The roster's advertised keys, in index order. */
  static List<AdvertisedKeys> roster(SecureRoundState s) {
    List<AdvertisedKeys> roster = new ArrayList<>(s.size());
    for (int i = 0; i < s.size(); i++) {
      byte[] e = s.advertised[i];
      // A round restored from before the consistency round kept 96 bytes: its signing key is zeros.
      roster.add(
          new AdvertisedKeys(
              Arrays.copyOfRange(e, 0, 32),
              Arrays.copyOfRange(e, 32, 64),
              Arrays.copyOfRange(e, 64, 96),
              Arrays.copyOfRange(e, 96, 128)));
    }
    return roster;
  }

  /** The job's two rates, against the adversary its spec names. */
  static ThreatModel threatModel(JobSpec spec) {
    JobSpec.Aggregation a = spec.aggregation();
    return RoundGraph.threatModel(a.maxDropoutRate(), a.adversarialClientRate(), a.adversary());
  }

  /** The round's graph, as its Roster stated it. */
  static HararyGraph graphOf(SecureRoundState s) {
    return HararyGraph.ofNeighbourhoodSize(s.degree, s.permutation);
  }

  /**
   * The correction terms (a sign byte and a 32-byte key each), or null and why not; and the roster
   * indices of holders proven to have revealed a share off its secret's polynomial.
   */
  record Outcome(byte[] terms, String problem, List<Integer> provenLiars) {
    static Outcome failed(String problem) {
      return new Outcome(null, problem, List.of());
    }
  }

  /**
   * Reconstructs each survivor's self-mask seed and each dropped client's mask key from the unmask
   * shares ({@link Unmasking}, which checks each against what the client advertised and, when a lie
   * spoils it, the shares against the dealer's commitments from its ShareKeys), and returns the
   * terms that remove every mask left in the sum.
   */
  static Outcome corrections(JobSpec spec, SecureRoundState s) {
    int n = s.size();
    HararyGraph graph = graphOf(s);
    List<AdvertisedKeys> roster = roster(s);
    int[][] neighbourhoods = new int[n][];
    List<Integer> shared = new ArrayList<>();
    List<Integer> masked = new ArrayList<>();
    Map<Integer, UnmaskShares> responses = new HashMap<>();
    for (int i = 0; i < n; i++) {
      neighbourhoods[i] = graph.neighbourhood(i);
      if (s.confirmed[i]) {
        shared.add(i);
      }
      if (s.maskedInput[i]) {
        masked.add(i);
      }
      if (s.unmaskMessages[i] != null) {
        var body =
            (dev.privagg.avro.UnmaskShares)
                AvroCodec.decodeSecureMessage(s.unmaskMessages[i]).getBody();
        responses.put(
            i,
            new UnmaskShares(
                revealed(body.getSelfMaskShares()), revealed(body.getMaskKeyShares())));
      }
    }
    Unmasking.Result result =
        Unmasking.reconstruct(
            context(spec, s),
            roster,
            neighbourhoods,
            s.threshold,
            shared.stream().mapToInt(Integer::intValue).toArray(),
            s.cuts,
            masked.stream().mapToInt(Integer::intValue).toArray(),
            dealer -> commitmentsOf(s, dealer),
            responses);
    if (result.correction().isEmpty()) {
      return new Outcome(
          null,
          "too few consistent shares (threshold "
              + s.threshold
              + ") for the self-mask seeds of roster indices "
              + result.unrecoveredSelfMaskSeeds()
              + " and the mask keys of "
              + result.unrecoveredMaskKeys(),
          result.provenLiars());
    }
    return new Outcome(encode(result.correction().get()), null, result.provenLiars());
  }

  /** A dealer's Feldman commitments from its stored ShareKeys, or null if it did not share. */
  private static byte[] commitmentsOf(SecureRoundState s, int dealer) {
    if (s.shareMessages[dealer] == null) {
      return null;
    }
    var keys =
        (dev.privagg.avro.ShareKeys)
            AvroCodec.decodeSecureMessage(s.shareMessages[dealer]).getBody();
    return Float32.bytes(keys.getCommitments());
  }

  private static List<UnmaskShares.RevealedShare> revealed(List<RevealedShare> shares) {
    List<UnmaskShares.RevealedShare> out = new ArrayList<>(shares.size());
    for (RevealedShare r : shares) {
      byte[] share = new byte[r.getShare().remaining()];
      r.getShare().duplicate().get(share);
      out.add(new UnmaskShares.RevealedShare(r.getIndex(), share));
    }
    return out;
  }

  /** Terms as a sign byte and a 32-byte key each: what an {@code UnmaskRequest} carries. */
  static byte[] encode(MaskCorrection correction) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    for (MaskCorrection.Term term : correction.terms()) {
      out.write(term.sign());
      out.writeBytes(term.key());
    }
    return out.toByteArray();
  }
}
