package dev.privagg.job.ledger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.privagg.privacy.Accountant;
import dev.privagg.privacy.PrivacyEvent;
import dev.privagg.privacy.PrivacyLedger;
import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class LedgerCodecTest {
  private final PrivacyEvent sampled = PrivacyEvent.sampledGaussian(1.1, 0.2, 1);
  private final PrivacyEvent earlyClose = PrivacyEvent.gaussian(0.55, 1);

  @Test
  void composedLedger_roundTrips() {
    PrivacyLedger ledger = PrivacyLedger.of(sampled.times(9_999), earlyClose.times(3));
    assertThat(LedgerCodec.read(LedgerCodec.write(ledger))).isEqualTo(ledger);
    assertThat(LedgerCodec.read(LedgerCodec.write(PrivacyLedger.EMPTY)))
        .isEqualTo(PrivacyLedger.EMPTY);
  }

  @Test
  void checkpointWithOneEventPerRound_readsComposed_withTheSameEpsilon() throws IOException {
    // State written before ledgers composed by count: version 1, one count-1 event per round.
    List<PrivacyEvent> perRound = new ArrayList<>();
    for (int r = 0; r < 1000; r++) {
      perRound.add(r % 4 == 3 ? earlyClose : sampled);
    }
    PrivacyLedger read = LedgerCodec.read(version1(perRound));
    assertThat(read.events()).containsExactly(sampled.times(750), earlyClose.times(250));
    PrivacyLedger composed = PrivacyLedger.of(sampled.times(750), earlyClose.times(250));
    for (String name : List.of("rdp", "advanced", "basic")) {
      Accountant accountant = Accountant.named(name);
      assertThat(accountant.epsilon(read, 1e-5)).isEqualTo(accountant.epsilon(composed, 1e-5));
    }
    assertThat(LedgerCodec.write(read)).isEqualTo(LedgerCodec.write(composed));
  }

  @Test
  void otherVersion_isRefused_namingBothVersions() throws IOException {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (DataOutputStream out = new DataOutputStream(bytes)) {
      out.writeInt(2);
      out.writeInt(0);
    }
    assertThatThrownBy(() -> LedgerCodec.read(bytes.toByteArray()))
        .isInstanceOf(IllegalStateException.class)
        .hasMessage("checkpointed privacy ledger has version 2, this job reads version 1");
  }

  /** Version-1 bytes holding {@code events} as given, one entry each. */
  private static byte[] version1(List<PrivacyEvent> events) throws IOException {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (DataOutputStream out = new DataOutputStream(bytes)) {
      out.writeInt(1);
      out.writeInt(events.size());
      for (PrivacyEvent event : events) {
        out.writeUTF(event.kind().name());
        out.writeDouble(event.noiseMultiplier());
        out.writeDouble(event.samplingRate());
        out.writeLong(event.count());
      }
    }
    return bytes.toByteArray();
  }
}
