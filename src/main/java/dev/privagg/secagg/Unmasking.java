package dev.privagg.secagg;

import dev.privagg.secagg.UnmaskShares.RevealedShare;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import java.util.function.IntFunction;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * The job's side of phase 4: from the shares the survivors reveal, it reconstructs the self-mask
 * seed {@code b_u} of every client u in U3 and the mask private key {@code s_sk_w} of every client
 * w in U2 \ U3, checks each against what the client advertised (the commitment, the public key),
 * and derives the {@link MaskCorrection}: for each u in U3 its self-mask with sign -1, and for each
 * dropped w and each neighbour u of w in U3 whose pair with w is not cut the pair's pairwise mask
 * with sign {@code -sign(u, w)} (u masked with w: both confirmed, in U2, and not cut).
 *
 * <p>Clients may lie in phase 4. A secret is reconstructed from the first t shares of its holders,
 * sorted by holder; if the result fails its check, a lie spoiled it, and the shares are checked one
 * by one against the dealer's Feldman commitments (those the holders checked their shares against
 * in phase 3, {@link FeldmanCommitments}) until t pass: any t shares on the committed polynomial
 * give the advertised secret, so a lying holder costs the secret no more than a silent one, which
 * the thresholds' failure bound already counts. A holder whose share fails the check, where t
 * others passed and gave the advertised secret, is a proven liar: its shares of the later secrets
 * are not used. Each recovered secret whose first try failed proves a liar not known before, and
 * once a secret is lost (the round has no sum then) the later ones get their first try only, so a
 * round checks at most about (liars + 1) k shares one by one, and none when nobody lies. The
 * targets that are not recovered are reported, and no correction is made.
 */
public final class Unmasking {
  private Unmasking() {}

  /**
   * The outcome: a correction when every secret was recovered; otherwise the targets that were not
   * (fewer than t shares on the dealer's committed polynomial). {@code provenLiars}: the holders
   * whose share was off its dealer's committed polynomial.
   */
  public record Result(
      Optional<MaskCorrection> correction,
      List<Integer> unrecoveredSelfMaskSeeds,
      List<Integer> unrecoveredMaskKeys,
      List<Integer> provenLiars) {
    public Result {
      unrecoveredSelfMaskSeeds = List.copyOf(unrecoveredSelfMaskSeeds);
      unrecoveredMaskKeys = List.copyOf(unrecoveredMaskKeys);
      provenLiars = List.copyOf(provenLiars);
    }
  }

  /**
   * @param roster every admitted client's advertised keys, in index order
   * @param neighbourhoods the neighbourhood of each client, itself included (symmetric)
   * @param threshold t, the shares that determine a secret
   * @param shared U2, the confirmed clients ({@link ShareConfirmation})
   * @param cuts the confirmed pairs that do not mask with each other, {@code {lo, hi}} each
   * @param maskedInput U3, the clients whose masked input is in the sum (within U2)
   * @param commitments each dealer's Feldman commitments as its ShareKeys carried them, by roster
   *     index ({@link ClientSession#commitments}: the mask key's polynomial, then the self-mask
   *     seed's); null for a client that did not share. Asked only for a secret whose first try
   *     fails, so a job can decode them then, not in every round
   * @param responses the phase-4 message of each responding client, by its index
   * @throws IllegalArgumentException if the graph or the sets are malformed (the job's own data,
   *     not the clients')
   */
  public static Result reconstruct(
      RoundContext ctx,
      List<AdvertisedKeys> roster,
      int[][] neighbourhoods,
      int threshold,
      int[] shared,
      int[][] cuts,
      int[] maskedInput,
      IntFunction<byte[]> commitments,
      Map<Integer, UnmaskShares> responses) {
    int n = roster.size();
    int[][] sortedCuts = pairs("cuts", cuts, n);
    validateGraph(neighbourhoods, n);
    if (threshold < 1) {
      throw new IllegalArgumentException("threshold must be >= 1, was " + threshold);
    }
    boolean[] inShared = members("shared", shared, n);
    boolean[] inMaskedInput = members("maskedInput", maskedInput, n);
    for (int u : maskedInput) {
      if (!inShared[u]) {
        throw new IllegalArgumentException(
            "maskedInput (U3) must be within shared (U2), but " + u + " is not");
      }
    }

    List<MaskCorrection.Term> terms = new ArrayList<>();
    List<Integer> unrecoveredSeeds = new ArrayList<>();
    List<Integer> unrecoveredKeys = new ArrayList<>();
    Search search = new Search(threshold, new boolean[n]);
    int half = FeldmanCommitments.bytes(threshold);
    for (int u : sorted(maskedInput)) {
      List<Shamir.Share> shares =
          search.trusted(sharesOf(u, neighbourhoods[u], responses, UnmaskShares::selfMaskShares));
      byte[] commitment = roster.get(u).selfMaskCommitment();
      Optional<byte[]> seed =
          search.recover(
              shares,
              b -> Arrays.equals(DerivedKeys.selfMaskCommitment(b), commitment),
              () -> onPolynomial(commitment, commitments.apply(u), half, 2 * half, threshold));
      if (seed.isPresent()) {
        terms.add(new MaskCorrection.Term(DerivedKeys.selfMaskKey(ctx, seed.get(), u), -1));
      } else {
        unrecoveredSeeds.add(u);
      }
    }
    // Each survivor's mask key decoded once: a dropped client's every partner needs it.
    Map<Integer, Edwards25519.Point> maskKeys = new HashMap<>();
    for (int w : sorted(shared)) {
      if (inMaskedInput[w]) {
        continue;
      }
      List<Shamir.Share> shares =
          search.trusted(sharesOf(w, neighbourhoods[w], responses, UnmaskShares::maskKeyShares));
      byte[] publicKey = roster.get(w).maskPublicKey();
      Optional<byte[]> maskKey =
          search.recover(
              shares,
              s -> isMaskKeyOf(s, publicKey),
              () -> onPolynomial(publicKey, commitments.apply(w), 0, half, threshold));
      if (maskKey.isEmpty()) {
        unrecoveredKeys.add(w);
        continue;
      }
      List<MaskCorrection.Term> pairwise = new ArrayList<>();
      for (int u : neighbourhoods[w]) {
        if (u != w && inMaskedInput[u] && !ShareConfirmation.isCut(sortedCuts, u, w)) {
          Edwards25519.Point keyOfU = maskKeys.computeIfAbsent(u, v -> pointOrNull(roster, v));
          if (keyOfU == null) {
            pairwise = null; // a roster key that is no point (the job admits none): no mask
            break;
          }
          byte[] key = DerivedKeys.pairwiseMaskKey(ctx, maskKey.get(), w, keyOfU, u);
          pairwise.add(new MaskCorrection.Term(key, u < w ? -1 : 1));
        }
      }
      if (pairwise == null) {
        unrecoveredKeys.add(w);
      } else {
        terms.addAll(pairwise);
      }
    }
    boolean complete = unrecoveredSeeds.isEmpty() && unrecoveredKeys.isEmpty();
    List<Integer> liars = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      if (search.liars[i]) {
        liars.add(i);
      }
    }
    return new Result(
        complete ? Optional.of(new MaskCorrection(terms)) : Optional.empty(),
        unrecoveredSeeds,
        unrecoveredKeys,
        liars);
  }

  /** Roster entry {@code u}'s mask public key, decoded, or null if it is no valid point. */
  private static Edwards25519.Point pointOrNull(List<AdvertisedKeys> roster, int u) {
    try {
      return Edwards25519.decode("maskPublicKey", roster.get(u).maskPublicKey());
    } catch (IllegalArgumentException e) {
      return null;
    }
  }

  /** Whether {@code secret} is the mask private key of {@code publicKey} (0 is no key). */
  private static boolean isMaskKeyOf(byte[] secret, byte[] publicKey) {
    return Edwards25519.scalar("mask key", secret).signum() != 0
        && Arrays.equals(MaskKeys.publicKeyOf(secret), publicKey);
  }

  /**
   * The shares of {@code target}'s secret of one kind, one per responding neighbour (its first, if
   * it sent more), at {@code x = holder + 1}, sorted by holder.
   */
  private static List<Shamir.Share> sharesOf(
      int target,
      int[] neighbourhood,
      Map<Integer, UnmaskShares> responses,
      Function<UnmaskShares, List<RevealedShare>> kind) {
    List<Shamir.Share> shares = new ArrayList<>();
    for (int holder : sorted(neighbourhood)) {
      UnmaskShares response = responses.get(holder);
      if (response == null) {
        continue;
      }
      kind.apply(response).stream()
          .filter(share -> share.index() == target)
          .findFirst()
          .ifPresent(share -> shares.add(new Shamir.Share(holder + 1, share.share())));
    }
    return shares;
  }

  /**
   * Whether a share is on the polynomial a dealer committed to: {@code constant} (C_0, the key or
   * commitment it advertised) and bytes [from, to) of its commitments (C_1 .. C_(t-1)). False for
   * every share when either is missing or no point: then only the first try can recover it.
   */
  private static Predicate<Shamir.Share> onPolynomial(
      byte[] constant, byte[] commitments, int from, int to, int threshold) {
    Edwards25519.Point c0;
    try {
      c0 = Edwards25519.decode("C_0", constant);
    } catch (IllegalArgumentException e) {
      return share -> false;
    }
    if (commitments == null || commitments.length < to) {
      return share -> false;
    }
    byte[] polynomial = Arrays.copyOfRange(commitments, from, to);
    return share ->
        FeldmanCommitments.verifies(c0, polynomial, threshold, share.x(), share.value());
  }

  /** The search for a round's secrets: the holders proven to have lied, and whether one is lost. */
  private static final class Search {
    private final int threshold;
    private final boolean[] liars;
    private boolean lost;

    Search(int threshold, boolean[] liars) {
      this.threshold = threshold;
      this.liars = liars;
    }

    /** {@code shares} without those of proven liars (a share's holder is {@code x - 1}). */
    List<Shamir.Share> trusted(List<Shamir.Share> shares) {
      List<Shamir.Share> out = new ArrayList<>(shares.size());
      for (Shamir.Share share : shares) {
        if (!liars[share.x() - 1]) {
          out.add(share);
        }
      }
      return out;
    }

    /**
     * A secret that passes {@code check}: from the first t shares, else from the first t that are
     * on the dealer's polynomial, marking the holders of those that are not as liars. The check
     * against the commitments is built only then: decoding costs, and honest rounds never need it.
     */
    Optional<byte[]> recover(
        List<Shamir.Share> shares,
        Predicate<byte[]> check,
        Supplier<Predicate<Shamir.Share>> polynomial) {
      if (shares.size() < threshold) {
        return Optional.empty();
      }
      Optional<byte[]> first = tryShares(shares.subList(0, threshold), check);
      if (first.isPresent() || lost) {
        return first;
      }
      Predicate<Shamir.Share> onPolynomial = polynomial.get();
      List<Shamir.Share> verified = new ArrayList<>(threshold);
      List<Integer> off = new ArrayList<>();
      for (Shamir.Share share : shares) {
        if (verified.size() == threshold) {
          break;
        }
        if (onPolynomial.test(share)) {
          verified.add(share);
        } else {
          off.add(share.x() - 1);
        }
      }
      Optional<byte[]> secret =
          verified.size() == threshold ? tryShares(verified, check) : Optional.empty();
      // Off the polynomial proves a lie only where t other shares on it gave the advertised secret:
      // commitments the job reads otherwise than a holder did must not get honest holders named.
      secret.ifPresent(found -> off.forEach(holder -> liars[holder] = true));
      lost = secret.isEmpty();
      return secret;
    }
  }

  private static Optional<byte[]> tryShares(List<Shamir.Share> shares, Predicate<byte[]> check) {
    try {
      byte[] secret = Shamir.reconstruct(shares, shares.size());
      return check.test(secret) ? Optional.of(secret) : Optional.empty();
    } catch (IllegalArgumentException malformedOrInconsistent) {
      // A lying or malformed share among these: the caller tries others.
      return Optional.empty();
    }
  }

  /**
   * Checks the neighbourhoods in memory of the graph itself (a roster of a million has a few
   * hundred MB of it at most), never a table of n by n.
   */
  private static void validateGraph(int[][] neighbourhoods, int n) {
    if (neighbourhoods.length != n) {
      throw new IllegalArgumentException(
          "neighbourhoods must number the roster's "
              + n
              + " clients, were "
              + neighbourhoods.length);
    }
    int[][] sorted = new int[n][];
    for (int i = 0; i < n; i++) {
      int[] nodes = sorted(neighbourhoods[i]);
      for (int j = 0; j < nodes.length; j++) {
        if (!(nodes[j] >= 0 && nodes[j] < n) || (j > 0 && nodes[j] == nodes[j - 1])) {
          throw new IllegalArgumentException(
              "neighbourhoods["
                  + i
                  + "] must hold distinct roster indices in [0, "
                  + n
                  + "), found "
                  + nodes[j]);
        }
      }
      if (Arrays.binarySearch(nodes, i) < 0) {
        throw new IllegalArgumentException("neighbourhoods[" + i + "] must include " + i);
      }
      sorted[i] = nodes;
    }
    for (int i = 0; i < n; i++) {
      for (int j : sorted[i]) {
        if (Arrays.binarySearch(sorted[j], i) < 0) {
          throw new IllegalArgumentException(
              "neighbourhoods must be symmetric, but "
                  + j
                  + " is in that of "
                  + i
                  + " and not back");
        }
      }
    }
  }

  /**
   * {@code indices} as membership flags over a roster of {@code n}.
   *
   * @throws IllegalArgumentException if an index repeats or lies outside the roster
   */
  static boolean[] members(String name, int[] indices, int n) {
    boolean[] in = new boolean[n];
    for (int i : indices) {
      if (!(i >= 0 && i < n) || in[i]) {
        throw new IllegalArgumentException(
            name + " must hold distinct roster indices in [0, " + n + "), found " + i);
      }
      in[i] = true;
    }
    return in;
  }

  /**
   * {@code pairs} as sorted {@code {lo, hi}} pairs of distinct roster indices.
   *
   * @throws IllegalArgumentException if a pair is not two distinct indices in the roster, or
   *     repeats
   */
  static int[][] pairs(String name, int[][] pairs, int n) {
    int[][] out = new int[pairs.length][];
    for (int i = 0; i < pairs.length; i++) {
      int[] p = pairs[i];
      if (p == null
          || p.length != 2
          || p[0] == p[1]
          || !(p[0] >= 0 && p[0] < n && p[1] >= 0 && p[1] < n)) {
        throw new IllegalArgumentException(
            name
                + " must hold pairs of two distinct roster indices in [0, "
                + n
                + "), found "
                + Arrays.toString(p));
      }
      out[i] = new int[] {Math.min(p[0], p[1]), Math.max(p[0], p[1])};
    }
    Arrays.sort(
        out, (a, b) -> a[0] != b[0] ? Integer.compare(a[0], b[0]) : Integer.compare(a[1], b[1]));
    for (int i = 1; i < out.length; i++) {
      if (Arrays.equals(out[i], out[i - 1])) {
        throw new IllegalArgumentException(name + " repeats the pair " + Arrays.toString(out[i]));
      }
    }
    return out;
  }

  static int[] sorted(int[] indices) {
    int[] copy = indices.clone();
    Arrays.sort(copy);
    return copy;
  }
}
