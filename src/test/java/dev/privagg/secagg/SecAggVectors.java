package dev.privagg.secagg;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.privagg.distributed.DistributedNoisePlan;
import java.io.IOException;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.HexFormat;

/**
 * Test vectors of wire protocol v1 for other implementations, written to {@link #FILE} by {@link
 * #main} and pinned by {@code SecAggVectorsTest}. Every input is fixed, derived from a label by
 * SHA-256 (or SHA-512 for Shamir coefficients), so another language can regenerate the inputs as
 * well as check the outputs. Once published the format stays: add fields, never change them.
 */
final class SecAggVectors {
  static final Path FILE = Path.of("src/test/resources/secagg/vectors-v1.json");

  private static final HexFormat HEX = HexFormat.of();
  private static final String LABEL = "privagg-secagg-v1 test vector ";
  private static final int CLIENTS = 3;
  private static final long[][] UNITS = {
    {1, -2, 3, 1L << 36, -(1L << 36)},
    {5, 7, -11, 13, 1L << 35},
    {-1, -1, -1, Long.MAX_VALUE, Long.MIN_VALUE}
  };
  private static final int[] PERMUTATION = {2, 0, 1};

  static final String FORMAT =
      "Test vectors of privagg's secure aggregation, wire protocol v1"
          + " (docs/secure-aggregation.md). Byte strings are lowercase hex. Integers of the"
          + " model (units, mask words, sums) are JSON integers read as signed 64-bit two's"
          + " complement, arithmetic modulo 2^64. Fixed inputs: fixed(label) = SHA-256(UTF-8("
          + "'privagg-secagg-v1 test vector ' + label)); session = fixed('session')[0:16];"
          + " scalar(label) = SHA-512(UTF-8('privagg-secagg-v1 test vector ' + label)) read"
          + " little-endian, mod l (edwards25519's group order); scalars and shares are 32 bytes"
          + " little-endian, points RFC 8032 encodings. Client i's encryptionPrivateKey ="
          + " fixed('c_sk i') (X25519), maskPrivateKey = scalar('s_sk i') (maskPublicKey = s_sk B,"
          + " maskSharedSecret = encode(s_sk_u s_pk_v)), selfMaskSeed = scalar('b i')"
          + " (selfMaskCommitment = b B); shamir.secret = scalar('shamir secret'), coefficient k"
          + " (of x^k, k >= 1) = scalar('shamir coefficient ' + k), shamir.commitments their"
          + " Feldman commitments a_k B; shareEncryption.nonce = fixed('nonce')"
          + "[0:12]. pairs[].*Key are the keys of u and v, computed by u from its private key and"
          + " v's public key (v's computation gives the same). masks[] give mask words of a key at"
          + " coordinates 0..7 and 1000..1003. round: a 3-client round, d = 5, everyone a"
          + " neighbour of everyone (degree 3); maskedInputs are the MaskedInput bytes (8d,"
          + " little-endian words); sumOfMaskedInputs is their sum; with every client in U3 the"
          + " job subtracts the self-masks to get sum (= the sum of the units). round.dropout:"
          + " client 2 shared its keys but sent no masked input (U2 = {0,1,2}, U3 = {0,1}); the"
          + " correction terms (mask key, sign) are added as sign * mask to the sum of U3's"
          + " masked inputs, giving sum. rosterPermutation: a roster of 10 entries under the"
          + " same ctx, entry i = (fixed('roster c i'), fixed('roster s i'), fixed('roster b i'))"
          + " as (encryption key, mask key, commitment); seed is RosterPermutation's SHA-256 (of the"
          + " entries sorted), words0to3 its first mask words, permutation the ring (roster"
          + " indices by position). consistency: the survivor statement (SurvivorStatement) of"
          + " the round's 3 clients with signing keys, client i's Ed25519 private key (RFC 8032"
          + " seed) = fixed('sig i'), for the given degree, threshold, permutation, confirmed,"
          + " cuts and maskedInput; signatures[i] is client i's Ed25519 signature of the"
          + " statement digest; rosterDigest is RosterDigest of the same roster and graph, the"
          + " last part of every share's associated data. shareEncryption.rosterDigest ="
          + " fixed('roster digest'), and aad = ctx || u32(sender) || u32(recipient) ||"
          + " rosterDigest.";

  private SecAggVectors() {}

  public static void main(String[] args) throws IOException {
    Files.createDirectories(FILE.getParent());
    Files.writeString(FILE, json());
  }

  /** The file's exact content. */
  static String json() throws IOException {
    ObjectMapper mapper = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
    return mapper.writeValueAsString(build()) + "\n";
  }

  static ObjectNode build() {
    ObjectNode root = new ObjectMapper().createObjectNode();
    root.put("_format", FORMAT);
    root.put("version", 1);

    RoundContext ctx = new RoundContext("vectors-job", 7, Arrays.copyOf(fixed("session"), 16));
    ObjectNode context = root.putObject("context");
    context.put("jobId", ctx.jobId());
    context.put("round", ctx.round());
    context.put("session", hex(ctx.session()));
    context.put("ctx", hex(ctx.bytes()));

    X25519Keys[] c = new X25519Keys[CLIENTS];
    MaskKeys[] s = new MaskKeys[CLIENTS];
    byte[][] b = new byte[CLIENTS][];
    ArrayNode clients = root.putArray("clients");
    for (int i = 0; i < CLIENTS; i++) {
      c[i] = X25519Keys.fromPrivateKey(fixed("c_sk " + i));
      s[i] = MaskKeys.fromPrivateKey(fixedScalar("s_sk " + i));
      b[i] = fixedScalar("b " + i);
      ObjectNode client = clients.addObject();
      client.put("index", i);
      client.put("encryptionPrivateKey", hex(c[i].privateKey()));
      client.put("encryptionPublicKey", hex(c[i].publicKey()));
      client.put("maskPrivateKey", hex(s[i].privateKey()));
      client.put("maskPublicKey", hex(s[i].publicKey()));
      client.put("selfMaskSeed", hex(b[i]));
      client.put("selfMaskCommitment", hex(DerivedKeys.selfMaskCommitment(b[i])));
      client.put("selfMaskKey", hex(DerivedKeys.selfMaskKey(ctx, b[i], i)));
    }

    ArrayNode pairs = root.putArray("pairs");
    for (int u = 0; u < CLIENTS; u++) {
      for (int v = u + 1; v < CLIENTS; v++) {
        ObjectNode pair = pairs.addObject();
        pair.put("u", u);
        pair.put("v", v);
        pair.put(
            "encryptionSharedSecret", hex(X25519Keys.agree(c[u].privateKey(), c[v].publicKey())));
        pair.put(
            "shareEncryptionKey",
            hex(DerivedKeys.shareEncryptionKey(ctx, c[u].privateKey(), u, c[v].publicKey(), v)));
        pair.put("maskSharedSecret", hex(MaskKeys.agree(s[u].privateKey(), s[v].publicKey())));
        pair.put(
            "pairwiseMaskKey",
            hex(DerivedKeys.pairwiseMaskKey(ctx, s[u].privateKey(), u, s[v].publicKey(), v)));
      }
    }

    ArrayNode masks = root.putArray("masks");
    for (byte[] key :
        new byte[][] {
          DerivedKeys.pairwiseMaskKey(ctx, s[0].privateKey(), 0, s[1].publicKey(), 1),
          DerivedKeys.selfMaskKey(ctx, b[0], 0)
        }) {
      ObjectNode mask = masks.addObject();
      mask.put("key", hex(key));
      putLongs(mask.putArray("words0to7"), words(key, 0, 8));
      putLongs(mask.putArray("words1000to1003"), words(key, 1000, 1004));
    }

    ObjectNode shamir = root.putObject("shamir");
    byte[] secret = fixedScalar("shamir secret");
    BigInteger[] coefficients = {coefficient(1), coefficient(2)};
    int[] xs = {1, 2, 3, 4, 5};
    byte[][] shares = Shamir.share(secret, xs, coefficients);
    shamir.put("secret", hex(secret));
    shamir.put("threshold", coefficients.length + 1);
    ArrayNode coefficientNodes = shamir.putArray("coefficients");
    for (BigInteger coefficient : coefficients) {
      coefficientNodes.add(hex(Edwards25519.scalarBytes(coefficient)));
    }
    shamir.put("commitments", hex(Shamir.Polynomial.of(secret, coefficients).commitments()));
    ArrayNode shareNodes = shamir.putArray("shares");
    for (int i = 0; i < xs.length; i++) {
      ObjectNode share = shareNodes.addObject();
      share.put("x", xs[i]);
      share.put("share", hex(shares[i]));
    }

    ObjectNode encryption = root.putObject("shareEncryption");
    byte[] key = DerivedKeys.shareEncryptionKey(ctx, c[0].privateKey(), 0, c[1].publicKey(), 1);
    byte[] nonce = Arrays.copyOf(fixed("nonce"), ShareCipher.NONCE_BYTES);
    byte[] plaintext = Bytes.concat(shares[0], shares[1]);
    encryption.put("key", hex(key));
    encryption.put("sender", 0);
    encryption.put("recipient", 1);
    encryption.put("nonce", hex(nonce));
    encryption.put("plaintext", hex(plaintext));
    byte[] rosterDigest = fixed("roster digest");
    encryption.put("rosterDigest", hex(rosterDigest));
    encryption.put("aad", hex(ShareCipher.aad(ctx, 0, 1, rosterDigest)));
    encryption.put(
        "ciphertext", hex(ShareCipher.encrypt(key, ctx, 0, 1, rosterDigest, plaintext, nonce)));

    root.set("round", round(ctx, s, b));
    root.set("rosterPermutation", rosterPermutation(ctx));
    root.set("consistency", consistency(ctx, c, s, b));
    distributedNoise(root.putObject("distributedNoise"), ctx);
    return root;
  }

  /**
   * The distributed noise's deterministic parts: the rotation's signs and a rotated vector, words
   * packed at several widths, and a plan the Python client's tests encode with.
   */
  private static void distributedNoise(ObjectNode out, RoundContext ctx) {
    out.put("jobId", ctx.jobId());
    out.put("round", ctx.round());
    out.put("session", hex(ctx.session()));
    int dimension = 12;
    RandomizedHadamard rotation = new RandomizedHadamard(ctx.jobId(), ctx.round(), dimension);
    out.put("paddedDimension", rotation.paddedDimension());
    StringBuilder signs = new StringBuilder();
    for (int j = 0; j < rotation.paddedDimension(); j++) {
      // Row 0 of H D is the signs (over sqrt(p)), and sign j does not depend on the length.
      double[] e = new double[j + 1];
      e[j] = 1;
      signs.append(
          new RandomizedHadamard(ctx.jobId(), ctx.round(), j + 1).rotate(e)[0] < 0 ? '1' : '0');
    }
    out.put("negativeSigns", signs.toString());
    double[] vector = new double[dimension];
    for (int j = 0; j < dimension; j++) {
      vector[j] = (j % 3 - 1) * (j + 1) / 8.0; // exact in binary
      out.withArray("vector").add(vector[j]);
    }
    for (double v : rotation.rotate(vector)) {
      out.withArray("rotated").add(v);
    }
    ArrayNode packing = out.putArray("packing");
    long[] words = new long[7];
    for (int j = 0; j < words.length; j++) {
      words[j] = 0x9E3779B97F4A7C15L * (j + 1) ^ (0xFFL << (8 * j));
    }
    for (int bits : new int[] {8, 12, 16, 18, 20, 32, 64}) {
      ObjectNode c = packing.addObject();
      c.put("bits", bits);
      for (long w : words) {
        c.withArray("words").add(Long.toUnsignedString(w));
      }
      c.put("packed", hex(WordPacking.pack(words, bits)));
    }
    DistributedNoisePlan plan = DistributedNoisePlan.plan(1.0, 64, 16, 10, 20);
    ObjectNode p = out.putObject("plan");
    p.put("bits", plan.bits());
    p.put("dimension", plan.dimension());
    p.put("paddedDimension", plan.paddedDimension());
    p.put("unitsPerClipNorm", plan.unitsPerClipNorm());
    p.put("maxSquaredNorm", plan.maxSquaredNorm());
    p.put("varianceNumerator", plan.varianceNumerator());
    p.put("varianceDenominator", plan.varianceDenominator());
    p.put("noiseShares", plan.noiseShares());
    p.put("maxInputs", plan.maxInputs());
    p.put("noiseMultiplier", plan.noiseMultiplier());
    p.put("wrapProbability", plan.wrapProbability());
  }

  private static final int[] CONFIRMED = {0, 1, 2};
  private static final int[][] CUTS = {{0, 2}};
  private static final int[] SURVIVORS = {0, 1};

  private static ObjectNode consistency(
      RoundContext ctx, X25519Keys[] c, MaskKeys[] s, byte[][] b) {
    ObjectNode node = new ObjectMapper().createObjectNode();
    java.util.List<AdvertisedKeys> roster = new java.util.ArrayList<>();
    SigningKeys[] g = new SigningKeys[CLIENTS];
    ArrayNode privateKeys = node.putArray("signingPrivateKeys");
    ArrayNode publicKeys = node.putArray("signingPublicKeys");
    for (int i = 0; i < CLIENTS; i++) {
      g[i] = SigningKeys.fromPrivateKey(fixed("sig " + i));
      privateKeys.add(hex(fixed("sig " + i)));
      publicKeys.add(hex(g[i].publicKey()));
      roster.add(
          new AdvertisedKeys(
              c[i].publicKey(),
              s[i].publicKey(),
              DerivedKeys.selfMaskCommitment(b[i]),
              g[i].publicKey()));
    }
    node.put("degree", CLIENTS);
    node.put("threshold", 2);
    putInts(node.putArray("permutation"), PERMUTATION);
    node.put("rosterDigest", hex(RosterDigest.of(ctx, roster, CLIENTS, 2, PERMUTATION)));
    putInts(node.putArray("confirmed"), CONFIRMED);
    ArrayNode cuts = node.putArray("cuts");
    for (int[] cut : CUTS) {
      putInts(cuts.addArray(), cut);
    }
    putInts(node.putArray("maskedInput"), SURVIVORS);
    byte[] statement =
        SurvivorStatement.digest(ctx, roster, CLIENTS, 2, PERMUTATION, CONFIRMED, CUTS, SURVIVORS);
    node.put("statement", hex(statement));
    ArrayNode signatures = node.putArray("signatures");
    for (SigningKeys keys : g) {
      signatures.add(hex(keys.sign(statement)));
    }
    return node;
  }

  private static ObjectNode rosterPermutation(RoundContext ctx) {
    java.util.List<AdvertisedKeys> roster = new java.util.ArrayList<>();
    for (int i = 0; i < 10; i++) {
      roster.add(
          new AdvertisedKeys(
              fixed("roster c " + i),
              fixed("roster s " + i),
              fixed("roster b " + i),
              fixed("roster g " + i)));
    }
    ObjectNode node = new ObjectMapper().createObjectNode();
    byte[] seed = RosterPermutation.seed(ctx, roster);
    node.put("size", roster.size());
    node.put("seed", hex(seed));
    putLongs(node.putArray("words0to3"), words(seed, 0, 4));
    putInts(node.putArray("permutation"), RosterPermutation.of(ctx, roster));
    return node;
  }

  private static ObjectNode round(RoundContext ctx, MaskKeys[] s, byte[][] b) {
    int d = UNITS[0].length;
    ObjectNode round = new ObjectMapper().createObjectNode();
    round.put("d", d);
    round.put("degree", CLIENTS);
    round.put("threshold", 2);
    putInts(round.putArray("permutation"), PERMUTATION);
    ArrayNode units = round.putArray("units");
    ArrayNode maskedInputs = round.putArray("maskedInputs");
    long[][] masked = new long[CLIENTS][];
    for (int u = 0; u < CLIENTS; u++) {
      putLongs(units.addArray(), UNITS[u]);
      masked[u] = UNITS[u].clone();
      new MaskStream(DerivedKeys.selfMaskKey(ctx, b[u], u)).addTo(masked[u], 0, d, 1);
      for (int v = 0; v < CLIENTS; v++) {
        if (v != u) {
          byte[] key = DerivedKeys.pairwiseMaskKey(ctx, s[u].privateKey(), u, s[v].publicKey(), v);
          new MaskStream(key).addTo(masked[u], 0, d, u < v ? 1 : -1);
        }
      }
      maskedInputs.add(hex(littleEndian(masked[u])));
    }
    long[] sumOfMasked = new long[d];
    for (long[] y : masked) {
      add(sumOfMasked, y);
    }
    putLongs(round.putArray("sumOfMaskedInputs"), sumOfMasked);
    long[] sum = sumOfMasked.clone();
    for (int u = 0; u < CLIENTS; u++) {
      new MaskStream(DerivedKeys.selfMaskKey(ctx, b[u], u)).addTo(sum, 0, d, -1);
    }
    putLongs(round.putArray("sum"), sum);

    ObjectNode dropout = round.putObject("dropout");
    putInts(dropout.putArray("shared"), new int[] {0, 1, 2});
    putInts(dropout.putArray("maskedInput"), new int[] {0, 1});
    ArrayNode terms = dropout.putArray("correctionTerms");
    long[] dropoutSum = masked[0].clone();
    add(dropoutSum, masked[1]);
    for (int u = 0; u < 2; u++) {
      addTerm(terms, dropoutSum, DerivedKeys.selfMaskKey(ctx, b[u], u), -1);
    }
    int w = 2;
    for (int u = 0; u < 2; u++) {
      // The job has s_sk of the dropped w, so it derives the pair's key from w's side.
      byte[] key = DerivedKeys.pairwiseMaskKey(ctx, s[w].privateKey(), w, s[u].publicKey(), u);
      addTerm(terms, dropoutSum, key, u < w ? -1 : 1);
    }
    putLongs(dropout.putArray("sum"), dropoutSum);
    return round;
  }

  private static void addTerm(ArrayNode terms, long[] sum, byte[] key, int sign) {
    ObjectNode term = terms.addObject();
    term.put("key", hex(key));
    term.put("sign", sign);
    new MaskStream(key).addTo(sum, 0, sum.length, sign);
  }

  private static long[] words(byte[] key, int from, int to) {
    long[] words = new long[to - from];
    new MaskStream(key).addTo(words, from, to, 1);
    return words;
  }

  private static void add(long[] sum, long[] y) {
    for (int j = 0; j < sum.length; j++) {
      sum[j] += y[j];
    }
  }

  static byte[] littleEndian(long[] words) {
    byte[] out = new byte[8 * words.length];
    for (int j = 0; j < words.length; j++) {
      for (int i = 0; i < 8; i++) {
        out[8 * j + i] = (byte) (words[j] >>> (8 * i));
      }
    }
    return out;
  }

  static byte[] fixed(String label) {
    return digest("SHA-256", LABEL + label);
  }

  private static BigInteger coefficient(int k) {
    return Edwards25519.scalar("coefficient", fixedScalar("shamir coefficient " + k));
  }

  static byte[] fixedScalar(String label) {
    BigInteger wide = Edwards25519.fromLittleEndian(digest("SHA-512", LABEL + label));
    return Edwards25519.scalarBytes(wide.mod(Edwards25519.ORDER));
  }

  private static byte[] digest(String algorithm, String text) {
    try {
      return MessageDigest.getInstance(algorithm).digest(text.getBytes(StandardCharsets.UTF_8));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  private static String hex(byte[] bytes) {
    return HEX.formatHex(bytes);
  }

  private static void putLongs(ArrayNode array, long[] values) {
    for (long value : values) {
      array.add(value);
    }
  }

  private static void putInts(ArrayNode array, int[] values) {
    for (int value : values) {
      array.add(value);
    }
  }
}
