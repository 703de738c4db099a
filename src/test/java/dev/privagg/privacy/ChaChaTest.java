package dev.privagg.privacy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.SplittableRandom;
import java.util.stream.Stream;
import org.bouncycastle.crypto.engines.ChaChaEngine;
import org.bouncycastle.crypto.params.KeyParameter;
import org.bouncycastle.crypto.params.ParametersWithIV;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Known-answer tests of the ChaCha12 generator against an independent implementation,
 * BouncyCastle's {@link ChaChaEngine}. With an 8-byte IV that engine is Bernstein's original
 * layout, the one {@link ChaCha} implements: 64-bit block counter in words 12-13, 64-bit nonce (our
 * stream id) in words 14-15, little-endian. (Its 12-byte IV mode and {@code ChaCha7539Engine} are
 * RFC 8439's 32-bit counter and 96-bit nonce, which would differ from block 2^32 on.)
 */
class ChaChaTest {
  private static final int BLOCKS = 64;
  private static final int LONGS_PER_BLOCK = 8;

  static Stream<Arguments> keysAndStreamIds() {
    SplittableRandom random = new SplittableRandom(20240917);
    byte[] counting = new byte[32];
    byte[] ones = new byte[32];
    for (int i = 0; i < 32; i++) {
      counting[i] = (byte) i;
      ones[i] = (byte) 0xff;
    }
    List<byte[]> keys = new ArrayList<>(List.of(new byte[32], counting, ones));
    for (int i = 0; i < 3; i++) {
      byte[] key = new byte[32];
      random.nextBytes(key);
      keys.add(key);
    }
    long[] streamIds = {0, 1, 0x0123456789abcdefL, 0x80000000L, -1L, random.nextLong()};
    List<Arguments> cases = new ArrayList<>();
    for (byte[] key : keys) {
      for (long streamId : streamIds) {
        cases.add(Arguments.of(HexFormat.of().formatHex(key), streamId));
      }
    }
    return cases.stream();
  }

  @ParameterizedTest(name = "key {0}, stream {1}")
  @MethodSource("keysAndStreamIds")
  void chacha12Keystream_matchesBouncyCastle_over64Blocks(String keyHex, long streamId) {
    byte[] key = HexFormat.of().parseHex(keyHex);
    assertSameLongs(draw(new ChaCha(key, streamId), BLOCKS), reference(key, streamId, 0, BLOCKS));
  }

  @Test
  void chacha12_zeroKeyAndNonce_matchesPublishedTestVector() {
    // draft-strombergson-chacha-test-vectors-01, TC1 (all-zero 256-bit key and IV), 12 rounds,
    // first 64 keystream bytes.
    long[] expected =
        longs(
            HexFormat.of()
                .parseHex(
                    "9bf49a6a0755f953811fce125f2683d50429c3bb49e074147e0089a52eae155f"
                        + "0564f879d27ae3c02ce82834acfa8c793a629f2ca0de6919610be82f411326be"));
    assertSameLongs(draw(new ChaCha(new byte[32], 0), 1), expected);
  }

  @Test
  void chacha20Block_matchesBouncyCastle() {
    byte[] key = new byte[32];
    new SplittableRandom(7).nextBytes(key);
    ChaChaEngine engine = new ChaChaEngine(ChaCha.RFC8439_ROUNDS);
    engine.init(true, new ParametersWithIV(new KeyParameter(key), littleEndian(42)));
    byte[] theirs = new byte[64];
    engine.processBytes(new byte[64], 0, 64, theirs, 0);

    int[] state = new int[16];
    int[] out = new int[16];
    state[0] = 0x61707865;
    state[1] = 0x3320646e;
    state[2] = 0x79622d32;
    state[3] = 0x6b206574;
    ByteBuffer.wrap(key).order(ByteOrder.LITTLE_ENDIAN).asIntBuffer().get(state, 4, 8);
    state[14] = 42;
    ChaCha.block(state, out, ChaCha.RFC8439_ROUNDS);
    int[] expected = new int[16];
    ByteBuffer.wrap(theirs).order(ByteOrder.LITTLE_ENDIAN).asIntBuffer().get(expected);
    assertThat(out).containsExactly(expected);
  }

  @ParameterizedTest(name = "stream {0}")
  @MethodSource("streamIds")
  void blockCounter_carriesPast2To32_likeTheReference(long streamId) {
    byte[] key = HexFormat.of().parseHex(randomKey());
    long first = (1L << 32) - 2;
    ChaCha ours = new ChaCha(key, streamId, first);
    long[] crossing = draw(ours, 4); // blocks 2^32 - 2 .. 2^32 + 1

    // Reached through the reference's public seek: no state poking on this side.
    ChaChaEngine engine = new ChaChaEngine(ChaCha.NOISE_ROUNDS);
    engine.init(true, new ParametersWithIV(new KeyParameter(key), littleEndian(streamId)));
    engine.seekTo(first * 64);
    byte[] theirs = new byte[4 * 64];
    engine.processBytes(new byte[theirs.length], 0, theirs.length, theirs, 0);
    assertSameLongs(crossing, longs(theirs));

    // A 32-bit counter would wrap here and repeat block 0 of the stream.
    long[] block0 = draw(new ChaCha(key, streamId), 1);
    assertThat(Arrays.copyOfRange(crossing, 2 * LONGS_PER_BLOCK, 3 * LONGS_PER_BLOCK))
        .isNotEqualTo(block0);
  }

  @Test
  void blockCounter_carriesIntoTheSignBitOfTheHighWord_likeTheReference() {
    byte[] key = HexFormat.of().parseHex(randomKey());
    long first = 0x7fffffff_fffffffeL;
    assertSameLongs(draw(new ChaCha(key, 9, first), 4), reference(key, 9, first, 4));
  }

  @Test
  void stream_endsAfterBlock2To64Minus1_insteadOfRepeatingBlock0() {
    byte[] key = HexFormat.of().parseHex(randomKey());
    ChaCha ours = new ChaCha(key, 3, -2L); // block 2^64 - 2
    assertSameLongs(draw(ours, 2), reference(key, 3, -2L, 2));
    // BouncyCastle would wrap to block 0 here (its 2^70-byte limit counts only bytes it produced).
    assertThatThrownBy(ours::nextLong)
        .isInstanceOf(IllegalStateException.class)
        .hasMessage(
            "ChaCha stream exhausted: all 2^64 blocks of this key and stream id were drawn");
  }

  static Stream<Long> streamIds() {
    return Stream.of(0L, 0x0123456789abcdefL, -1L);
  }

  private static String randomKey() {
    byte[] key = new byte[32];
    new SplittableRandom(20240917).nextBytes(key);
    return HexFormat.of().formatHex(key);
  }

  private static long[] draw(ChaCha chacha, int blocks) {
    long[] out = new long[blocks * LONGS_PER_BLOCK];
    for (int i = 0; i < out.length; i++) {
      out[i] = chacha.nextLong();
    }
    return out;
  }

  /**
   * BouncyCastle's ChaCha12 keystream from block {@code firstBlock}, as {@link ChaCha#nextLong}
   * reads it (little-endian 8-byte words). The counter is set in the engine's state because its
   * seek takes a byte position below 2^63, short of the blocks near 2^64.
   */
  private static long[] reference(byte[] key, long streamId, long firstBlock, int blocks) {
    ChaChaEngine engine =
        new ChaChaEngine(ChaCha.NOISE_ROUNDS) {
          {
            init(true, new ParametersWithIV(new KeyParameter(key), littleEndian(streamId)));
            engineState[12] = (int) firstBlock;
            engineState[13] = (int) (firstBlock >>> 32);
            skip(0); // regenerates the buffered block from the counter just set
          }
        };
    byte[] out = new byte[blocks * 64];
    engine.processBytes(new byte[out.length], 0, out.length, out, 0);
    return longs(out);
  }

  private static byte[] littleEndian(long value) {
    return ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(value).array();
  }

  private static long[] longs(byte[] bytes) {
    long[] out = new long[bytes.length / 8];
    ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN).asLongBuffer().get(out);
    return out;
  }

  /** Equal arrays, reporting the first differing block and word rather than both arrays. */
  private static void assertSameLongs(long[] ours, long[] theirs) {
    assertThat(ours).hasSameSizeAs(theirs);
    for (int i = 0; i < ours.length; i++) {
      assertThat(ours[i])
          .as("block %d, 64-bit word %d", i / LONGS_PER_BLOCK, i % LONGS_PER_BLOCK)
          .isEqualTo(theirs[i]);
    }
  }
}
