package dev.privagg.secagg;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.security.SecureRandom;
import java.util.HexFormat;
import org.bouncycastle.math.ec.rfc7748.X25519;
import org.junit.jupiter.api.Test;

/** X25519 against RFC 7748, Section 6.1, and against BouncyCastle for random keys. */
class X25519KeysTest {
  private static final HexFormat HEX = HexFormat.of();
  private static final String ALICE_PRIVATE =
      "77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a";
  private static final String ALICE_PUBLIC =
      "8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a";
  private static final String BOB_PRIVATE =
      "5dab087e624a8a4b79e17f8b83800ee66f3bb1292618b6fd1c2f8b27ff88e0eb";
  private static final String BOB_PUBLIC =
      "de9edb7d7b7dc1b4d35b61c2ece435373f8343c85b78674dadfc7e146f882b4f";
  private static final String SHARED =
      "4a5d9d5ba4ce2de1728e3bf480350f25e07e21c947d19e3376f09b3c1e161742";

  @Test
  void publicKeys_matchRfc7748Section6_1() {
    assertThat(HEX.formatHex(X25519Keys.fromPrivateKey(HEX.parseHex(ALICE_PRIVATE)).publicKey()))
        .isEqualTo(ALICE_PUBLIC);
    assertThat(HEX.formatHex(X25519Keys.fromPrivateKey(HEX.parseHex(BOB_PRIVATE)).publicKey()))
        .isEqualTo(BOB_PUBLIC);
  }

  @Test
  void sharedSecret_matchesRfc7748Section6_1_fromBothSides() {
    byte[] alice = X25519Keys.agree(HEX.parseHex(ALICE_PRIVATE), HEX.parseHex(BOB_PUBLIC));
    byte[] bob = X25519Keys.agree(HEX.parseHex(BOB_PRIVATE), HEX.parseHex(ALICE_PUBLIC));

    assertThat(HEX.formatHex(alice)).isEqualTo(SHARED);
    assertThat(HEX.formatHex(bob)).isEqualTo(SHARED);
  }

  @Test
  void randomKeys_agreeWithBouncyCastle_includingPeerKeysWithTheTopBitSet() {
    SecureRandom random = new SecureRandom(new byte[] {1});
    for (int i = 0; i < 20; i++) {
      X25519Keys mine = X25519Keys.generate(random);
      byte[] peer = new byte[32];
      random.nextBytes(peer);
      // RFC 7748 Section 5: the top bit of a u-coordinate is ignored.
      peer[31] |= (byte) 0x80;
      byte[] expected = new byte[32];
      byte[] expectedPublic = new byte[32];
      X25519.scalarMult(mine.privateKey(), 0, peer, 0, expected, 0);
      X25519.scalarMultBase(mine.privateKey(), 0, expectedPublic, 0);

      assertThat(X25519Keys.agree(mine.privateKey(), peer)).isEqualTo(expected);
      assertThat(mine.publicKey()).isEqualTo(expectedPublic);
    }
  }

  @Test
  void agree_refusesPeerKeyOfSmallOrder() {
    byte[] privateKey = HEX.parseHex(ALICE_PRIVATE);
    byte[] zero = new byte[32];
    byte[] one = new byte[32];
    one[0] = 1;

    for (byte[] lowOrder : new byte[][] {zero, one}) {
      assertThatThrownBy(() -> X25519Keys.agree(privateKey, lowOrder))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessage(
              "peerPublicKey must not have small order: the X25519 shared secret was all zero");
    }
  }

  @Test
  void keysOfWrongLength_areRefusedNamingTheParameter() {
    assertThatThrownBy(() -> X25519Keys.fromPrivateKey(new byte[31]))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("privateKey must be 32 bytes, was 31 bytes");
    assertThatThrownBy(() -> X25519Keys.agree(new byte[32], new byte[33]))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("peerPublicKey must be 32 bytes, was 33 bytes");
  }
}
