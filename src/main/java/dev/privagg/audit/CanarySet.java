package dev.privagg.audit;

import dev.privagg.privacy.NoiseSource;
import dev.privagg.privacy.NoiseStream;
import java.util.HexFormat;

/**
 * The secret canaries of one audit (Andrew et al., "One-shot Empirical Privacy Estimation for
 * Federated Learning", ICLR 2024, Sec. 3): {@code count} inserted canaries, indices 0 to count - 1,
 * which take part in rounds as ordinary clients, and as many unseen ones, indices count to 2 count
 * - 1, which are never sent and give the scores' null distribution.
 *
 * <p>Canary i's direction is a uniform unit vector in R^d: d standard normals from the keyed stream
 * HMAC-SHA256(secret, "privagg/canary", i) (the job's own keyed-noise construction), normalized.
 * Without the secret the directions are unpredictable, so the server cannot tell a canary's update
 * from a client's by its direction; with it, the auditor regenerates exactly what was sent. The
 * directions are i.i.d., so which half is inserted is as good as a fair coin per canary, which is
 * what Steinke et al.'s one-run bound needs.
 */
public final class CanarySet {
  /** As the job's keyed noise: a secret shorter than the derived ChaCha key would weaken it. */
  public static final int MIN_SECRET_BYTES = 32;

  /**
   * A canary's norm over the latest C it knows of: clipping then sets it to exactly C, unless
   * adaptive clipping more than doubles C in one round. Not far above, so a canary's norm does not
   * stand out among clipped clients' as a thousandfold one would.
   */
  public static final double NORM_OVER_CLIP = 2;

  private static final String LABEL = "privagg/canary";
  private static final String ID_LABEL = "privagg/canary-id";
  private static final String SAMPLING_LABEL = "privagg/canary-sampling/";

  private final NoiseSource directions;
  private final int count;

  /**
   * Canaries from {@code secret} (at least {@value #MIN_SECRET_BYTES} bytes), {@code count}
   * inserted and {@code count} unseen.
   */
  public CanarySet(byte[] secret, int count) {
    if (secret == null || secret.length < MIN_SECRET_BYTES) {
      throw new IllegalArgumentException(
          "the canary secret must hold at least "
              + MIN_SECRET_BYTES
              + " bytes, had "
              + (secret == null ? "none" : secret.length));
    }
    if (!(count >= 2 && count <= 100_000)) {
      throw new IllegalArgumentException(
          "canary count must be between 2 and 100000 (a spread needs two), was " + count);
    }
    this.directions = NoiseSource.keyed(secret.clone());
    this.count = count;
  }

  /** The number of inserted canaries, equal to the number of unseen ones. */
  public int count() {
    return count;
  }

  /**
   * The client id inserted canary {@code index} sends under: {@code prefix} and 16 hex digits from
   * the secret, so ids carry neither the index nor a pattern a server could pick out.
   */
  public String clientId(String prefix, int index) {
    if (!(index >= 0 && index < count)) {
      throw new IllegalArgumentException(
          "only inserted canaries [0, " + count + ") send, was " + index);
    }
    NoiseStream stream = directions.forRound(ID_LABEL, index);
    long bits =
        (long) (stream.nextUniform() * 0x1p32) << 32 | (long) (stream.nextUniform() * 0x1p32);
    return prefix + HexFormat.of().toHexDigits(bits);
  }

  /**
   * Inserted canary {@code index}'s uniform draw in [0, 1) for {@code round}, from the secret: its
   * own client-side sampling decision.
   */
  public double participationDraw(int index, long round) {
    if (!(index >= 0 && index < count)) {
      throw new IllegalArgumentException(
          "only inserted canaries [0, " + count + ") send, was " + index);
    }
    return directions.forRound(SAMPLING_LABEL + index, round).nextUniform();
  }

  /** Canary {@code index}'s unit direction in {@code dims} dimensions (see class comment). */
  public double[] direction(int index, int dims) {
    if (!(index >= 0 && index < 2 * count)) {
      throw new IllegalArgumentException(
          "canary index must be in [0, " + 2 * count + "), was " + index);
    }
    if (!(dims >= 2)) {
      throw new IllegalArgumentException("canary dimension must be at least 2, was " + dims);
    }
    NoiseStream stream = directions.forRound(LABEL, index);
    double[] v = new double[dims];
    double squares = 0;
    for (int i = 0; i < dims; i++) {
      v[i] = stream.nextStandardNormal();
      squares += v[i] * v[i];
    }
    double norm = Math.sqrt(squares);
    for (int i = 0; i < dims; i++) {
      v[i] /= norm;
    }
    return v;
  }
}
