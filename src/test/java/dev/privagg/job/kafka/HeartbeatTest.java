package dev.privagg.job.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class HeartbeatTest {
  @Test
  void onlyAnEmptyRecordWithTheTickKey_isATick() {
    assertThat(Heartbeat.isTick(Heartbeat.TICK_KEY, new byte[0])).isTrue();
    // A client record that borrows the key is still a client record: validated, never dropped.
    assertThat(Heartbeat.isTick(Heartbeat.TICK_KEY, "payload".getBytes(StandardCharsets.UTF_8)))
        .isFalse();
    assertThat(Heartbeat.isTick(Heartbeat.TICK_KEY, null)).isFalse();
    assertThat(Heartbeat.isTick("client-1".getBytes(StandardCharsets.UTF_8), new byte[0]))
        .isFalse();
    assertThat(Heartbeat.isTick(null, new byte[0])).isFalse();
  }
}
