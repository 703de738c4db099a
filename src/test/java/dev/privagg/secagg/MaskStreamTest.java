package dev.privagg.secagg;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.HexFormat;
import java.util.SplittableRandom;
import javax.crypto.Cipher;
import javax.crypto.spec.SecretKeySpec;
import org.junit.jupiter.api.Test;

/**
 * The mask expansion against an independent computation of the protocol's definition: AES-256 in
 * ECB of each counter block {@code u128(j / 2)}, itself checked against NIST SP 800-38A, F.5.5
 * (CTR-AES256.Encrypt), whose keystream is its ciphertext XOR its plaintext.
 */
class MaskStreamTest {
  private static final HexFormat HEX = HexFormat.of();
  private static final byte[] NIST_KEY =
      HEX.parseHex("603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4");
  private static final byte[] NIST_COUNTER = HEX.parseHex("f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff");
  private static final byte[] NIST_PLAINTEXT =
      HEX.parseHex(
          "6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e51"
              + "30c81c46a35ce411e5fbc1191a0a52eff69f2445df4f9b17ad2b417be66c3710");
  private static final byte[] NIST_CIPHERTEXT =
      HEX.parseHex(
          "601ec313775789a5b7a7f504bbf3d228f443e3ca4d62b59aca84e990cacaf5c5"
              + "2b0930daa23de94ce87017ba2d84988ddfc9c58db67aada613c2dd08457941a6");

  @Test
  void referenceKeystream_reproducesNistF55_acrossTheCarryIntoTheNextByte() throws Exception {
    // Blocks f0..feff, f0..ff00, f0..ff01, f0..ff02: the second increment carries a byte.
    byte[] keystream = new byte[64];
    for (int block = 0; block < 4; block++) {
      byte[] counter = NIST_COUNTER.clone();
      addToCounter(counter, block);
      System.arraycopy(aesBlock(NIST_KEY, counter), 0, keystream, 16 * block, 16);
    }

    for (int i = 0; i < 64; i++) {
      assertThat((byte) (keystream[i] ^ NIST_PLAINTEXT[i])).isEqualTo(NIST_CIPHERTEXT[i]);
    }
  }

  @Test
  void maskWords_areLittleEndianWordsOfAesOfTheCounterBlocksFromZero() throws Exception {
    byte[] key = new byte[32];
    new SplittableRandom(7).nextBytes(key);
    // 0..7 from the start; 508..517 around counter block 255 -> 256 (a carry).
    for (int[] range : new int[][] {{0, 8}, {508, 518}, {1_000_001, 1_000_004}}) {
      long[] words = new long[range[1] - range[0]];
      new MaskStream(key).addTo(words, range[0], range[1], 1);

      for (int j = range[0]; j < range[1]; j++) {
        assertThat(words[j - range[0]]).as("coordinate %d", j).isEqualTo(referenceWord(key, j));
      }
    }
  }

  @Test
  void expandingFromAnOddCoordinate_givesTheSameWordsAsFromZero() {
    byte[] key = new byte[32];
    new SplittableRandom(11).nextBytes(key);
    int d = 3 * 8192 + 5; // more than one 64 KiB chunk, ending mid-block
    long[] whole = new long[d];
    new MaskStream(key).addTo(whole, 0, d, 1);

    for (int[] range : new int[][] {{1, d}, {8191, 8194}, {8193, 20_001}, {d - 1, d}}) {
      long[] part = new long[range[1] - range[0]];
      new MaskStream(key).addTo(part, range[0], range[1], 1);

      for (int j = range[0]; j < range[1]; j++) {
        assertThat(part[j - range[0]]).as("coordinate %d", j).isEqualTo(whole[j]);
      }
    }
  }

  @Test
  void minusOne_subtractsTheMask_modulo2To64() {
    byte[] key = new byte[32];
    new SplittableRandom(13).nextBytes(key);
    long[] values = new SplittableRandom(17).longs(1001).toArray();
    long[] masked = values.clone();

    new MaskStream(key).addTo(masked, 0, 1001, 1);
    assertThat(masked).isNotEqualTo(values);
    new MaskStream(key).addTo(masked, 0, 1001, -1);

    assertThat(masked).isEqualTo(values);
  }

  @Test
  void addTo_refusesBadRangesAndSigns() {
    MaskStream mask = new MaskStream(new byte[32]);

    assertThatThrownBy(() -> mask.addTo(new long[2], 0, 3, 1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(
            "coordinates [from, to) must satisfy 0 <= from <= to and fit the target of length 2,"
                + " were [0, 3)");
    assertThatThrownBy(() -> mask.addTo(new long[2], 0, 2, 2))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("sign must be +1 or -1, was 2");
    assertThatThrownBy(() -> new MaskStream(new byte[16]))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("key must be 32 bytes, was 16 bytes");
  }

  /** Coordinate j: bytes [8 (j mod 2), +8) of AES_k(u128(j / 2)), little-endian. */
  private static long referenceWord(byte[] key, int j) throws Exception {
    byte[] counter = new byte[16];
    addToCounter(counter, j / 2);
    return ByteBuffer.wrap(aesBlock(key, counter), 8 * (j % 2), 8)
        .order(ByteOrder.LITTLE_ENDIAN)
        .getLong();
  }

  private static byte[] aesBlock(byte[] key, byte[] block) throws Exception {
    Cipher ecb = Cipher.getInstance("AES/ECB/NoPadding");
    ecb.init(Cipher.ENCRYPT_MODE, new SecretKeySpec(key, "AES"));
    return ecb.doFinal(block);
  }

  /** Adds {@code n} to the 128-bit big-endian counter, with carry. */
  private static void addToCounter(byte[] counter, long n) {
    long carry = n;
    for (int i = 15; i >= 0 && carry != 0; i--) {
      long sum = (counter[i] & 0xff) + (carry & 0xff);
      counter[i] = (byte) sum;
      carry = (carry >>> 8) + (sum >>> 8);
    }
  }
}
