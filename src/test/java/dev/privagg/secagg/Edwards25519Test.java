package dev.privagg.secagg;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.math.BigInteger;
import java.security.KeyPairGenerator;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.security.interfaces.EdECPublicKey;
import java.security.spec.NamedParameterSpec;
import java.util.HexFormat;
import org.junit.jupiter.api.Test;

class Edwards25519Test {
  private static final HexFormat HEX = HexFormat.of();

  /** RFC 8032 7.1's clamping of SHA-512(secret)'s first half, the scalar of a public key. */
  private static BigInteger secretScalar(byte[] secret) throws Exception {
    byte[] h = MessageDigest.getInstance("SHA-512").digest(secret);
    h[0] &= (byte) 248;
    h[31] &= 127;
    h[31] |= 64;
    return Edwards25519.fromLittleEndian(java.util.Arrays.copyOf(h, 32));
  }

  @Test
  void publicKeysOfRfc8032Section7_1_areTheBaseTimesTheirScalars() throws Exception {
    // RFC 8032, Section 7.1, TEST 1, TEST 2 and TEST 3: SECRET KEY -> PUBLIC KEY.
    String[][] vectors = {
      {
        "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60",
        "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a"
      },
      {
        "4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb",
        "3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c"
      },
      {
        "c5aa8df43f9f837bedb7442f31dcb7b166d38535076f094b85ce3a2e0b4458f7",
        "fc51cd8e6218a1a38da47ed00230f0580816ed13ba3303ac5deb911548908025"
      }
    };
    for (String[] v : vectors) {
      BigInteger k = secretScalar(HEX.parseHex(v[0]));
      assertThat(HEX.formatHex(Edwards25519.baseTimes(k).encode())).isEqualTo(v[1]);
      assertThat(Edwards25519.decode("pk", HEX.parseHex(v[1])))
          .isEqualTo(Edwards25519.baseTimes(k));
    }
  }

  @Test
  void agreesWithTheJdksEd25519_onRandomKeys() throws Exception {
    SecureRandom random = SecureRandom.getInstance("SHA1PRNG");
    random.setSeed(7);
    for (int i = 0; i < 5; i++) {
      byte[] seed = new byte[32];
      random.nextBytes(seed);
      KeyPairGenerator generator = KeyPairGenerator.getInstance("Ed25519");
      generator.initialize(NamedParameterSpec.ED25519, new SigningKeys.FixedBytes(seed));
      EdECPublicKey jdk = (EdECPublicKey) generator.generateKeyPair().getPublic();
      byte[] encoded = Edwards25519.littleEndian(jdk.getPoint().getY());
      if (jdk.getPoint().isXOdd()) {
        encoded[31] |= (byte) 0x80;
      }
      assertThat(Edwards25519.baseTimes(secretScalar(seed)).encode()).isEqualTo(encoded);
    }
  }

  @Test
  void groupLaws_hold() {
    BigInteger a = new BigInteger("123456789012345678901234567890");
    BigInteger b = new BigInteger("987654321098765432109876543210");
    var pa = Edwards25519.baseTimes(a);
    var pb = Edwards25519.baseTimes(b);
    assertThat(pa.plus(pb)).isEqualTo(Edwards25519.baseTimes(a.add(b)));
    assertThat(pa.times(b)).isEqualTo(pb.times(a));
    assertThat(Edwards25519.BASE.times(Edwards25519.ORDER)).isEqualTo(Edwards25519.IDENTITY);
    assertThat(pa.plus(Edwards25519.IDENTITY)).isEqualTo(pa);
  }

  @Test
  void decode_refusesWhatLibsodiumRefuses() {
    assertThatThrownBy(() -> Edwards25519.decode("k", Edwards25519.IDENTITY.encode()))
        .hasMessageContaining("identity");
    // A point of order 8: (x, y) with y = the encoding below (libsodium's blocklist, first entry
    // of order 8 after the identity's): "c7176a70..." has a small-order part.
    byte[] order8 =
        HEX.parseHex("c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a");
    assertThatThrownBy(() -> Edwards25519.decode("k", order8)).hasMessageContaining("subgroup");
    // y = p is not canonical.
    byte[] notCanonical = Edwards25519.littleEndian(Edwards25519.P);
    assertThatThrownBy(() -> Edwards25519.decode("k", notCanonical))
        .hasMessageContaining("not the encoding");
    // B plus a point of order 8 is on the curve but outside the subgroup.
    var mixed = Edwards25519.BASE.plus(Edwards25519.decodeOnCurve(order8, 0));
    assertThatThrownBy(() -> Edwards25519.decode("k", mixed.encode()))
        .hasMessageContaining("subgroup");
    assertThatThrownBy(() -> Edwards25519.decode("k", new byte[31])).hasMessageContaining("32");
  }

  @Test
  void scalars_areLittleEndianBelowTheOrder() {
    assertThat(Edwards25519.scalar("s", Edwards25519.scalarBytes(BigInteger.TEN)))
        .isEqualTo(BigInteger.TEN);
    byte[] order = Edwards25519.littleEndian(Edwards25519.ORDER);
    assertThatThrownBy(() -> Edwards25519.scalar("s", order)).hasMessageContaining("below");
  }
}
