package dev.privagg.secagg;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HexFormat;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** HKDF-SHA256 against RFC 5869, Appendix A.1-A.3 (the SHA-256 cases). */
class HkdfTest {
  private static final HexFormat HEX = HexFormat.of();

  static Stream<Arguments> rfc5869() {
    return Stream.of(
        Arguments.of(
            "A.1 basic",
            "0b".repeat(22),
            "000102030405060708090a0b0c",
            "f0f1f2f3f4f5f6f7f8f9",
            42,
            "077709362c2e32df0ddc3f0dc47bba6390b6c73bb50f9c3122ec844ad7c2b3e5",
            "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865"),
        Arguments.of(
            "A.2 longer inputs and outputs",
            sequence(0x00, 0x4f),
            sequence(0x60, 0xaf),
            sequence(0xb0, 0xff),
            82,
            "06a6b88c5853361a06104c9ceb35b45cef760014904671014a193f40c15fc244",
            "b11e398dc80327a1c8e7f78c596a49344f012eda2d4efad8a050cc4c19afa97c"
                + "59045a99cac7827271cb41c65e590e09da3275600c2f09b8367793a9aca3db71"
                + "cc30c58179ec3e87c14c01d5c1f3434f1d87"),
        Arguments.of(
            "A.3 empty salt and info",
            "0b".repeat(22),
            "",
            "",
            42,
            "19ef24a32c717b167f33a91d6f648bdf96596776afdb6377ac434c1c293ccb04",
            "8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d9d201395faa4b61a96c8"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("rfc5869")
  void extractAndExpand_matchRfc5869(
      String name, String ikm, String salt, String info, int length, String prk, String okm) {
    byte[] computedPrk = Hkdf.extract(HEX.parseHex(salt), HEX.parseHex(ikm));

    assertThat(HEX.formatHex(computedPrk)).isEqualTo(prk);
    assertThat(HEX.formatHex(Hkdf.expand(computedPrk, HEX.parseHex(info), length))).isEqualTo(okm);
  }

  @Test
  void derive_isEmptySaltAnd32Bytes_asCaseA3() {
    byte[] ikm = HEX.parseHex("0b".repeat(22));

    assertThat(HEX.formatHex(Hkdf.derive(ikm, new byte[0])))
        .isEqualTo("8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d");
  }

  @Test
  void expand_refusesLengthBeyond255Blocks() {
    assertThatThrownBy(() -> Hkdf.expand(new byte[32], new byte[0], 255 * 32 + 1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("HKDF length must be in [1, 8160], was 8161");
  }

  private static String sequence(int from, int to) {
    StringBuilder hex = new StringBuilder();
    for (int i = from; i <= to; i++) {
      hex.append(String.format("%02x", i));
    }
    return hex.toString();
  }
}
