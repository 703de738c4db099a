package dev.privagg.job.decide;

import dev.privagg.avro.RevealedShare;
import dev.privagg.avro.UnmaskShares;
import dev.privagg.io.AvroCodec;
import dev.privagg.job.SecureRoundState;
import dev.privagg.secagg.DerivedKeys;
import dev.privagg.secagg.GraphParameters;
import dev.privagg.secagg.HararyGraph;
import dev.privagg.secagg.RoundContext;
import dev.privagg.secagg.Shamir;
import dev.privagg.secagg.ThreatModel;
import dev.privagg.secagg.X25519Keys;
import dev.privagg.spec.JobSpec;
import java.io.ByteArrayOutputStream;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The decider's cryptography of a secure round, over the pure {@code dev.privagg.secagg} classes:
 * the neighbour graph a roster gets, and the mask correction its unmask shares give.
 */
final class SecureUnmasking {
  private SecureUnmasking() {}

  /** A roster's graph: k (the node itself included, as on the wire), t and the permutation. */
  record Graph(int degree, int threshold, int[] permutation) {}

  /**
   * The graph of a roster of {@code n}: FCP's Harary parameters, or for cohorts too small for a
   * sparse graph the complete graph at the smallest threshold FCP's rules allow; null when even
   * that is infeasible (fewer than two clients).
   */
  static Graph graph(JobSpec spec, int n, SecureRandom random) {
    ThreatModel threat = threatModel(spec);
    try {
      GraphParameters p = GraphParameters.find(n, threat);
      HararyGraph g = HararyGraph.shuffled(n, p.degree(), random);
      return new Graph(p.degree() + 1, p.threshold(), g.permutation());
    } catch (IllegalArgumentException sparseInfeasible) {
      for (int t = 2; t <= n; t++) {
        try {
          GraphParameters.checkFullGraph(n, t, threat);
        } catch (IllegalArgumentException tooLow) {
          continue;
        }
        int[] identity = new int[n];
        Arrays.setAll(identity, i -> i);
        return new Graph(n, t, identity);
      }
      return null;
    }
  }

  static ThreatModel threatModel(JobSpec spec) {
    return new ThreatModel(
        spec.aggregation().adversarialClientRate(),
        spec.aggregation().maxDropoutRate(),
        ThreatModel.AdversaryClass.CURIOUS_SERVER);
  }

  /** Node {@code i}'s neighbourhood on the round's graph, itself included. */
  static int[] neighbours(SecureRoundState s, int i) {
    int[] others = hararyOf(s).neighbours(i);
    int[] all = Arrays.copyOf(others, others.length + 1);
    all[others.length] = i;
    Arrays.sort(all);
    return all;
  }

  private static HararyGraph hararyOf(SecureRoundState s) {
    return new HararyGraph(s.degree - 1, s.permutation);
  }

  /** The correction terms (sign byte, 32-byte key each), or null and why not. */
  record Outcome(byte[] terms, String problem) {
    static Outcome failed(String problem) {
      return new Outcome(null, problem);
    }
  }

  /**
   * Reconstructs each survivor's self-mask seed (checked against its commitment) and each dropped
   * client's mask key (checked against its advertised key) from the unmask shares, and returns the
   * terms that remove every mask left in the sum of the survivors' masked inputs.
   */
  static Outcome corrections(JobSpec spec, SecureRoundState s) {
    int n = s.size();
    RoundContext ctx = new RoundContext(spec.jobId(), s.round, s.session);
    List<List<Shamir.Share>> selfShares = new ArrayList<>();
    List<List<Shamir.Share>> keyShares = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      selfShares.add(new ArrayList<>());
      keyShares.add(new ArrayList<>());
    }
    for (int holder = 0; holder < n; holder++) {
      if (s.unmaskMessages[holder] == null) {
        continue;
      }
      UnmaskShares shares =
          (UnmaskShares) AvroCodec.decodeSecureMessage(s.unmaskMessages[holder]).getBody();
      for (RevealedShare r : shares.getSelfMaskShares()) {
        selfShares.get(r.getIndex()).add(new Shamir.Share(holder + 1, bytes(r)));
      }
      for (RevealedShare r : shares.getMaskKeyShares()) {
        keyShares.get(r.getIndex()).add(new Shamir.Share(holder + 1, bytes(r)));
      }
    }
    ByteArrayOutputStream terms = new ByteArrayOutputStream();
    for (int u = 0; u < n; u++) {
      if (!s.maskedInput[u]) {
        continue;
      }
      byte[] commitment = Arrays.copyOfRange(s.advertised[u], 64, 96);
      byte[] seed =
          reconstruct(
              selfShares.get(u),
              s.threshold,
              b -> MessageDigest.isEqual(DerivedKeys.selfMaskCommitment(ctx, b), commitment));
      if (seed == null) {
        return Outcome.failed(problem("self-mask seed", u, selfShares.get(u).size(), s.threshold));
      }
      term(terms, -1, DerivedKeys.selfMaskKey(ctx, seed, u));
    }
    HararyGraph graph = hararyOf(s);
    for (int w = 0; w < n; w++) {
      if (s.maskedInput[w] || s.shareMessages[w] == null) {
        continue; // survived (its pairwise masks cancel), or never masked anyone
      }
      byte[] maskPublicKey = Arrays.copyOfRange(s.advertised[w], 32, 64);
      byte[] maskKey =
          reconstruct(
              keyShares.get(w),
              s.threshold,
              k -> MessageDigest.isEqual(X25519Keys.publicKeyOf(k), maskPublicKey));
      if (maskKey == null) {
        return Outcome.failed(problem("mask key", w, keyShares.get(w).size(), s.threshold));
      }
      for (int u : graph.neighbours(w)) {
        if (s.maskedInput[u]) {
          // u added sign(u, w) * mask(u, w); w is gone, so nothing cancels it.
          byte[] uPublicKey = Arrays.copyOfRange(s.advertised[u], 32, 64);
          term(terms, u < w ? -1 : 1, DerivedKeys.pairwiseMaskKey(ctx, maskKey, w, uPublicKey, u));
        }
      }
    }
    return new Outcome(terms.toByteArray(), null);
  }

  private static String problem(String what, int index, int shares, int threshold) {
    return "the "
        + what
        + " of roster index "
        + index
        + " did not reconstruct from its "
        + shares
        + " shares (threshold "
        + threshold
        + ")";
  }

  private interface Check {
    boolean holds(byte[] secret);
  }

  /**
   * The secret of {@code shares} that passes {@code check}: from the first t shares, then from each
   * window of t consecutive shares, so that a wrong share (a lying client) costs a window, not the
   * round; null if none passes.
   */
  private static byte[] reconstruct(List<Shamir.Share> shares, int threshold, Check check) {
    for (int start = 0; start + threshold <= shares.size(); start++) {
      try {
        byte[] secret = Shamir.reconstruct(shares.subList(start, start + threshold), threshold);
        if (check.holds(secret)) {
          return secret;
        }
      } catch (IllegalArgumentException notOneSecret) {
        // a share that is not of a 32-byte secret: try the next window
      }
    }
    return null;
  }

  private static void term(ByteArrayOutputStream out, int sign, byte[] key) {
    out.write(sign);
    out.writeBytes(key);
  }

  private static byte[] bytes(RevealedShare r) {
    byte[] out = new byte[r.getShare().remaining()];
    r.getShare().duplicate().get(out);
    return out;
  }
}
