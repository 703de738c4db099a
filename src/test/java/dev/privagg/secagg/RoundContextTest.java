package dev.privagg.secagg;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HexFormat;
import org.junit.jupiter.api.Test;

class RoundContextTest {
  @Test
  void bytes_areTheLengthPrefixedProtocolAndJobIdThenRoundThenSession() {
    byte[] session = HexFormat.of().parseHex("000102030405060708090a0b0c0d0e0f");

    assertThat(HexFormat.of().formatHex(new RoundContext("jöb", 258, session).bytes()))
        .isEqualTo(
            "00000011"
                + HexFormat.of().formatHex("privagg-secagg-v1".getBytes())
                + "00000004"
                + "6ac3b662"
                + "0000000000000102"
                + "000102030405060708090a0b0c0d0e0f");
  }

  @Test
  void construction_refusesEmptyJobIdRoundBelowOneAndSessionOfOtherLength() {
    assertThatThrownBy(() -> new RoundContext("", 1, new byte[16]))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("jobId must be non-empty, was ");
    assertThatThrownBy(() -> new RoundContext("job", 0, new byte[16]))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("round must be >= 1, was 0");
    assertThatThrownBy(() -> new RoundContext("job", 1, new byte[15]))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("session must be 16 bytes, was 15 bytes");
  }

  @Test
  void contexts_areEqualExactlyWhenTheirBytesAre() {
    assertThat(new RoundContext("job", 2, new byte[16]))
        .isEqualTo(new RoundContext("job", 2, new byte[16]))
        .isNotEqualTo(new RoundContext("job", 3, new byte[16]));
  }
}
