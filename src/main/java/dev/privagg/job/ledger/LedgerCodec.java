package dev.privagg.job.ledger;

import dev.privagg.privacy.MechanismKind;
import dev.privagg.privacy.PrivacyEvent;
import dev.privagg.privacy.PrivacyLedger;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;

/**
 * The accountant's ledger as checkpointed bytes: a version, then (kind, noiseMultiplier,
 * samplingRate, count) per event. A ledger of another version or an unknown kind is refused with a
 * message naming both: guessing would risk under-counting spent privacy.
 *
 * <p>A ledger is written composed by count (one event per mechanism, see {@link PrivacyLedger}).
 * Checkpoints written before ledgers were composed hold one count-1 event per round in the same
 * format; reading composes them, so such state restores to the same epsilon and is written back
 * compact at the next round.
 */
public final class LedgerCodec {
  static final int VERSION = 1;

  private LedgerCodec() {}

  public static byte[] write(PrivacyLedger ledger) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (DataOutputStream out = new DataOutputStream(bytes)) {
      out.writeInt(VERSION);
      out.writeInt(ledger.events().size());
      for (PrivacyEvent event : ledger.events()) {
        out.writeUTF(event.kind().name());
        out.writeDouble(event.noiseMultiplier());
        out.writeDouble(event.samplingRate());
        out.writeLong(event.count());
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return bytes.toByteArray();
  }

  public static PrivacyLedger read(byte[] bytes) {
    if (bytes == null || bytes.length == 0) {
      return PrivacyLedger.EMPTY;
    }
    try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(bytes))) {
      int version = in.readInt();
      if (version != VERSION) {
        throw new IllegalStateException(
            "checkpointed privacy ledger has version "
                + version
                + ", this job reads version "
                + VERSION);
      }
      int n = in.readInt();
      List<PrivacyEvent> events = new ArrayList<>(n);
      for (int i = 0; i < n; i++) {
        MechanismKind kind = MechanismKind.parse(in.readUTF());
        events.add(new PrivacyEvent(kind, in.readDouble(), in.readDouble(), in.readLong()));
      }
      return new PrivacyLedger(events);
    } catch (IOException e) {
      throw new UncheckedIOException("checkpointed privacy ledger is corrupt", e);
    }
  }
}
