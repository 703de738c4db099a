package dev.privagg.privacy;

/**
 * The ChaCha block function (RFC 8439, Section 2.3) used as a deterministic random bit generator: a
 * 256-bit key, a 64-bit stream id and a 64-bit block counter (the original Bernstein layout:
 * counter in words 12-13, stream id in words 14-15, both little-endian, so one stream can run for
 * 2^64 blocks). Given the same key and stream id it always yields the same bits; without the key
 * the output is indistinguishable from random. The stream ends after block 2^64 - 1: asking for
 * more throws rather than wrap the counter and repeat block 0.
 *
 * <p>Noise uses 12 rounds (ChaCha12, the generator behind Rust's {@code rand::rngs::StdRng}): the
 * best known attacks reach 7 rounds, and Aumasson, "Too Much Crypto" (2019) argues 8 suffice. 12
 * rounds instead of 20 is what lets one core draw 10M secure Gaussians in well under a second. The
 * 20-round function is kept to check the implementation against RFC 8439's test vector.
 */
final class ChaCha {
  /** Rounds of the RFC 8439 cipher, ChaCha20. */
  static final int RFC8439_ROUNDS = 20;

  /** Rounds used for noise, ChaCha12. */
  static final int NOISE_ROUNDS = 12;

  private static final int[] SIGMA = {0x61707865, 0x3320646e, 0x79622d32, 0x6b206574};

  private final int[] input = new int[16];
  private final int[] block = new int[16];
  private final long[] longs = new long[8];
  private int next = 8;
  private boolean exhausted;

  /** A ChaCha12 generator keyed by 32 bytes (little-endian words, as RFC 8439). */
  ChaCha(byte[] key, long streamId) {
    this(key, streamId, 0);
  }

  /** As {@link #ChaCha(byte[], long)}, starting at block {@code firstBlock} (unsigned). */
  ChaCha(byte[] key, long streamId, long firstBlock) {
    if (key.length != 32) {
      throw new IllegalArgumentException("ChaCha key must be 32 bytes, was " + key.length);
    }
    System.arraycopy(SIGMA, 0, input, 0, 4);
    for (int i = 0; i < 8; i++) {
      input[4 + i] =
          (key[4 * i] & 0xff)
              | (key[4 * i + 1] & 0xff) << 8
              | (key[4 * i + 2] & 0xff) << 16
              | (key[4 * i + 3] & 0xff) << 24;
    }
    input[12] = (int) firstBlock;
    input[13] = (int) (firstBlock >>> 32);
    input[14] = (int) streamId;
    input[15] = (int) (streamId >>> 32);
  }

  /** The next 64 random bits: two consecutive keystream words, the first as the low half. */
  long nextLong() {
    if (next == 8) {
      refill();
    }
    return longs[next++];
  }

  private void refill() {
    if (exhausted) {
      throw new IllegalStateException(
          "ChaCha stream exhausted: all 2^64 blocks of this key and stream id were drawn");
    }
    block(input, block, NOISE_ROUNDS);
    // 64-bit counter: carry into word 13; when that wraps too, block 0 would come again.
    if (++input[12] == 0 && ++input[13] == 0) {
      exhausted = true;
    }
    for (int i = 0; i < 8; i++) {
      longs[i] = (block[2 * i] & 0xffffffffL) | ((long) block[2 * i + 1] << 32);
    }
    next = 0;
  }

  /** RFC 8439, Section 2.3: {@code rounds} rounds over {@code state}, plus the state, into out. */
  static void block(int[] state, int[] out, int rounds) {
    int x0 = state[0];
    int x1 = state[1];
    int x2 = state[2];
    int x3 = state[3];
    int x4 = state[4];
    int x5 = state[5];
    int x6 = state[6];
    int x7 = state[7];
    int x8 = state[8];
    int x9 = state[9];
    int x10 = state[10];
    int x11 = state[11];
    int x12 = state[12];
    int x13 = state[13];
    int x14 = state[14];
    int x15 = state[15];
    for (int i = 0; i < rounds / 2; i++) {
      // column rounds
      x0 += x4;
      x12 = Integer.rotateLeft(x12 ^ x0, 16);
      x8 += x12;
      x4 = Integer.rotateLeft(x4 ^ x8, 12);
      x0 += x4;
      x12 = Integer.rotateLeft(x12 ^ x0, 8);
      x8 += x12;
      x4 = Integer.rotateLeft(x4 ^ x8, 7);
      x1 += x5;
      x13 = Integer.rotateLeft(x13 ^ x1, 16);
      x9 += x13;
      x5 = Integer.rotateLeft(x5 ^ x9, 12);
      x1 += x5;
      x13 = Integer.rotateLeft(x13 ^ x1, 8);
      x9 += x13;
      x5 = Integer.rotateLeft(x5 ^ x9, 7);
      x2 += x6;
      x14 = Integer.rotateLeft(x14 ^ x2, 16);
      x10 += x14;
      x6 = Integer.rotateLeft(x6 ^ x10, 12);
      x2 += x6;
      x14 = Integer.rotateLeft(x14 ^ x2, 8);
      x10 += x14;
      x6 = Integer.rotateLeft(x6 ^ x10, 7);
      x3 += x7;
      x15 = Integer.rotateLeft(x15 ^ x3, 16);
      x11 += x15;
      x7 = Integer.rotateLeft(x7 ^ x11, 12);
      x3 += x7;
      x15 = Integer.rotateLeft(x15 ^ x3, 8);
      x11 += x15;
      x7 = Integer.rotateLeft(x7 ^ x11, 7);
      // diagonal rounds
      x0 += x5;
      x15 = Integer.rotateLeft(x15 ^ x0, 16);
      x10 += x15;
      x5 = Integer.rotateLeft(x5 ^ x10, 12);
      x0 += x5;
      x15 = Integer.rotateLeft(x15 ^ x0, 8);
      x10 += x15;
      x5 = Integer.rotateLeft(x5 ^ x10, 7);
      x1 += x6;
      x12 = Integer.rotateLeft(x12 ^ x1, 16);
      x11 += x12;
      x6 = Integer.rotateLeft(x6 ^ x11, 12);
      x1 += x6;
      x12 = Integer.rotateLeft(x12 ^ x1, 8);
      x11 += x12;
      x6 = Integer.rotateLeft(x6 ^ x11, 7);
      x2 += x7;
      x13 = Integer.rotateLeft(x13 ^ x2, 16);
      x8 += x13;
      x7 = Integer.rotateLeft(x7 ^ x8, 12);
      x2 += x7;
      x13 = Integer.rotateLeft(x13 ^ x2, 8);
      x8 += x13;
      x7 = Integer.rotateLeft(x7 ^ x8, 7);
      x3 += x4;
      x14 = Integer.rotateLeft(x14 ^ x3, 16);
      x9 += x14;
      x4 = Integer.rotateLeft(x4 ^ x9, 12);
      x3 += x4;
      x14 = Integer.rotateLeft(x14 ^ x3, 8);
      x9 += x14;
      x4 = Integer.rotateLeft(x4 ^ x9, 7);
    }
    out[0] = x0 + state[0];
    out[1] = x1 + state[1];
    out[2] = x2 + state[2];
    out[3] = x3 + state[3];
    out[4] = x4 + state[4];
    out[5] = x5 + state[5];
    out[6] = x6 + state[6];
    out[7] = x7 + state[7];
    out[8] = x8 + state[8];
    out[9] = x9 + state[9];
    out[10] = x10 + state[10];
    out[11] = x11 + state[11];
    out[12] = x12 + state[12];
    out[13] = x13 + state[13];
    out[14] = x14 + state[14];
    out[15] = x15 + state[15];
  }
}
